package gatewaytest

import (
	"fmt"
	"time"

	"github.com/paygate-go/paygate"
)

// The recovery switches make the sandbox misbehave the ways that leave a
// merchant's order awaited: a direct callback that never arrives, a payment
// that stays pending and settles later, callbacks out of order. They are
// the sandbox switches of docs/assumptions.md A-reconcile and
// A-stale-status, for testing a reconciliation job
// (paygate.CallbackHandler.Reconcile) against each.
//
// Every predicate is given the order's reference as the sandbox received
// it: refNo~extraData when the order had an extra reference (match the
// merchant's own reference with paygate.SplitRefNo). It is called from the
// sandbox's own goroutines, concurrently, and must not call the Server.

// recovery holds the recovery switches; the zero value is none.
type recovery struct {
	lose        func(refNo string) bool
	lateAfter   time.Duration
	late        func(refNo string) bool
	staleStatus paygate.Status
	stale       func(refNo string) bool
	statusAs    func(refNo string, status paygate.Status) paygate.Status
}

// WithCallbackLoss makes the sandbox never deliver the direct callbacks of
// an order whose reference (as sent, refNo~extraData) lose matches: the
// gateway gave up, or the merchant was down past every retry
// (docs/assumptions.md A-reconcile). Each such callback is still logged in
// Callbacks, with Dropped set and no attempts; the buyer's browser return
// still happens (it is display only and fulfils nothing). Only a
// reconciliation (the order lookup or the payment report) can then find the
// payment.
//
// The milder fault, a gateway that gives up after n failed attempts while
// the merchant is down, is WithMaxAttempts(n).
func WithCallbackLoss(lose func(refNo string) bool) Option {
	return func(c *config) { c.recovery.lose = lose }
}

// WithLateSettlement makes a payment authorised late (docs/assumptions.md
// A-reconcile): an order whose reference (as sent, refNo~extraData) which
// matches and that the buyer pays with success is first recorded and
// called back as pending (the lookup and the report show pending, FPX code
// 09), and after the given duration it settles to success by itself,
// exactly as Complete(refNo, StatusSuccess) would: the lookup and the
// report show success and the success callback goes out. An order declined
// or left pending by the buyer is not touched; one that Complete settles
// first (as success, or failed: a late authorisation refused) is settled
// once, by Complete.
//
// Settle waits for every late settlement still due (with WithTestClock,
// TestClock.Advance runs it when due instead); Close cancels those not yet
// due (the order stays pending, nothing more is sent).
func WithLateSettlement(after time.Duration, which func(refNo string) bool) Option {
	return func(c *config) { c.recovery.lateAfter, c.recovery.late = after, which }
}

// WithStaleCallbacks delivers callbacks out of order (docs/assumptions.md
// A-stale-status): once the success callback of an order whose reference
// (as sent, refNo~extraData) which matches has been delivered (answered
// 2xx), the sandbox sends one more signed callback for the same order
// carrying status (pending or failed, with that status's FPX code), as a
// late retry of an older event or a late failure notice would arrive. It
// is logged in Callbacks like any other delivery, with Stale set, and
// retried the same way. The order's recorded status stays success (lookup
// and report).
func WithStaleCallbacks(status paygate.Status, which func(refNo string) bool) Option {
	return func(c *config) { c.recovery.staleStatus, c.recovery.stale = status, which }
}

// WithCallbackStatus makes the direct callbacks carry as(refNo, status) in
// the status field instead of the status the gateway recorded (refNo as
// sent, refNo~extraData): a status outside success, pending and failed,
// such as "SUCCESS", for docs/assumptions.md A-unknown-status. The callback
// is signed as usual, its fpx_debit_auth_code is the recorded outcome's,
// and Callbacks logs the status sent; the lookup, the report and the
// browser return keep the recorded status. Return status unchanged for the
// orders to leave alone.
func WithCallbackStatus(as func(refNo string, status paygate.Status) paygate.Status) Option {
	return func(c *config) { c.recovery.statusAs = as }
}

// validate refuses a switch the sandbox cannot honour.
func (r *recovery) validate() error {
	if r.lateAfter < 0 {
		return fmt.Errorf("WithLateSettlement: after %v: want zero or more", r.lateAfter)
	}
	if r.stale != nil && r.staleStatus != paygate.StatusPending && r.staleStatus != paygate.StatusFailed {
		return fmt.Errorf("WithStaleCallbacks: status %q: want pending or failed", r.staleStatus)
	}
	return nil
}

// lost reports whether the callbacks of the order with refNo are never
// delivered.
func (r *recovery) lost(refNo string) bool { return r.lose != nil && r.lose(refNo) }

// settlesLate reports whether a success for the order with refNo is first
// pending.
func (r *recovery) settlesLate(refNo string) bool { return r.late != nil && r.late(refNo) }

// followedByStale reports whether the order with refNo gets a stale
// callback after its success is delivered.
func (r *recovery) followedByStale(refNo string) bool { return r.stale != nil && r.stale(refNo) }

// sentStatus is the status a direct callback of the order with refNo
// carries for the recorded status.
func (r *recovery) sentStatus(refNo string, status paygate.Status) paygate.Status {
	if r.statusAs == nil {
		return status
	}
	return r.statusAs(refNo, status)
}

// fpxCodes is the fpx_debit_auth_code the sandbox gives each outcome
// (docs/protocol.md A2).
var fpxCodes = map[paygate.Status]paygate.FPXCode{
	paygate.StatusSuccess: "00",
	paygate.StatusPending: "09",
	paygate.StatusFailed:  "51",
}

// settleLater completes the pending order orderNo as success after the
// late-settlement delay, unless Complete settles it first (closing due) or
// the server closes. Settle and Close wait for it.
func (s *Server) settleLater(orderNo string, due <-chan struct{}) {
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		if !s.sleep(s.cfg.recovery.lateAfter, due) {
			return
		}
		// An error means Complete settled the order in the meantime.
		_, _ = s.decide(orderNo, paygate.StatusSuccess, true)
	}()
}

// sendStale sends the stale callback of an order whose success was
// delivered: the same order, carrying the configured status.
func (s *Server) sendStale(o Order) {
	o.Status = s.cfg.recovery.staleStatus
	o.FPXCode = fpxCodes[o.Status]
	s.deliver(o, true)
}
