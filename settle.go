package paygate

// How an order whose outcome a verified event settled leaves whatever
// awaits it (package watch): the handler tells its Settler after the event
// is recorded, or a TxFulfiller settles it in the fulfilment's own
// transaction (HookClaim.Settled). The event (callback_event.go, settle)
// calls down to the Settler; nothing calls the event back.

import "context"

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
