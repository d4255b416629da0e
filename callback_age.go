package paygate

// The replay bound of CallbackHandler (docs/assumptions.md A-replay-bound):
// a signed callback can be captured (an access log, a proxy) and posted
// again at any time, and its signature still verifies. The Deduper's
// completed record answers such a replay for as long as it is kept; a
// success whose own transaction time is older than MaxTxnAge is not
// fulfilled at all, so a replay after the record is gone is held back
// too. The age is read from fpxTxnTime, which the signature covers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// DefaultMaxTxnAge is how old a success's transaction time (fpxTxnTime)
// may be and still be fulfilled, unless CallbackHandler.MaxTxnAge says
// otherwise: far longer than the gateway goes on retrying a callback, far
// shorter than a Deduper keeps a completed event (DefaultRetention).
const DefaultMaxTxnAge = 30 * 24 * time.Hour

// maxTxnAhead is how far a success's transaction time may be ahead of the
// handler's clock (the gateway's clock, or its time zone, off) and still
// be fulfilled.
const maxTxnAhead = 24 * time.Hour

// ErrHeldBack is the error OnHeldBack is given (wrapped, with the age) for
// a verified success the handler did not fulfil because its transaction
// time is older than MaxTxnAge, or too far in the future.
var ErrHeldBack = errors.New("paygate: verified success held back: its fpxTxnTime is outside the handler's MaxTxnAge")

// maxTxnAge is MaxTxnAge, DefaultMaxTxnAge when unset, or 0 (no bound)
// when negative.
func (h *CallbackHandler) maxTxnAge() time.Duration {
	switch {
	case h.MaxTxnAge < 0:
		return 0
	case h.MaxTxnAge == 0:
		return DefaultMaxTxnAge
	}
	return h.MaxTxnAge
}

// now reads Now, or time.Now when unset.
func (h *CallbackHandler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// txnAgeError is the error of a success whose transaction time is outside
// the bound, nil when it is within it, has none the SDK reads, or the
// event is not a callback (a reconciliation reads the gateway's own API,
// which an attacker cannot replay).
func (e event) txnAgeError() error {
	limit := e.h.maxTxnAge()
	if e.cb.Source != SourceCallback || limit == 0 {
		return nil
	}
	at := parseRecordTime(e.cb.FPXTxnTime)
	if at.IsZero() {
		return nil
	}
	age := e.h.now().Sub(at)
	if age <= limit && age >= -maxTxnAhead {
		return nil
	}
	return fmt.Errorf("%w: fpxTxnTime %s is %v old (MaxTxnAge %v)", ErrHeldBack, e.cb.FPXTxnTime, age.Round(time.Second), limit)
}

// holdBack answers a success outside the bound: logged at error level,
// told to OnHeldBack, never fulfilled, and 200 so that the gateway (or a
// replayer) stops; 500 when OnHeldBack fails, so that it is told again.
func (e event) holdBack(ctx context.Context, cause error) verdict {
	cb := e.cb
	e.log(ctx, slog.LevelError, "verified success outside the replay bound: not fulfilled; a replay, or a payment to reconcile by hand",
		"refNo", cb.RefNo, "orderNo", cb.OrderNo, "amount", cb.Amount.String(), "err", cause)
	if e.h.OnHeldBack != nil {
		ctx, cancel := context.WithTimeout(ctx, e.h.hookTimeout())
		defer cancel()
		if err := callHook(ctx, func(ctx context.Context, cb *Callback) error { return e.h.OnHeldBack(ctx, cb, cause) }, cb); err != nil {
			e.log(ctx, slog.LevelError, "OnHeldBack failed; the gateway will retry", "refNo", cb.RefNo, "err", err)
			return verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handling failed", err: err}
		}
	}
	return verdict{code: http.StatusOK, outcome: OutcomeHeldBack, err: cause}
}
