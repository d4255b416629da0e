package paygate

// How an order whose outcome a verified event settled leaves whatever
// awaits it (package watch): the handler tells its Settler after the event
// is recorded, or a TxFulfiller settles it in the fulfilment's own
// transaction (HookClaim.Settled). The event calls down to the Settler;
// nothing calls the event back.

import (
	"context"
	"log/slog"
	"net/http"
)

// Settler is told of each order whose outcome a verified event settled, so
// that what awaits it (watch.Watch) stops looking it up: CallbackHandler.
// Settler. The settled outcomes are those a lookup would end the watch on:
// fulfilled (now or before), paid twice, and failed; a pending or unknown
// status settles nothing, since the success after it may still be lost.
type Settler interface {
	// Settled stops awaiting cb's order (cb.CreatedRefNo()). It is called
	// once the event is recorded; an error is logged and changes no answer:
	// the order then stays awaited and its next lookup settles it.
	Settled(ctx context.Context, cb *Callback) error
}

// settles lists the outcomes after which an order is no longer awaited.
var settles = map[Outcome]bool{
	OutcomeFulfilled:        true,
	OutcomeAlreadyFulfilled: true,
	OutcomeDoublePayment:    true,
	OutcomeFailed:           true,
}

// settle tells the handler's Settler of an event that settled its order,
// unless a TxFulfiller already did in its transaction (v.settledInTx).
func (e event) settle(ctx context.Context, v verdict) {
	s := e.h.Settler
	if s == nil || v.settledInTx || v.code != http.StatusOK || !settles[v.outcome] {
		return
	}
	sctx, cancel := context.WithTimeout(detached(ctx), storeTimeout)
	defer cancel()
	if err := s.Settled(sctx, e.cb); err != nil {
		e.log(ctx, slog.LevelWarn, "settled order still awaited; its next lookup settles it", "refNo", e.cb.CreatedRefNo(), "err", err)
	}
}
