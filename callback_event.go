package paygate

// The receiver rules of CallbackHandler (docs/callbacks.md), on one
// verified event whatever brought it: ServeHTTP after the signature,
// Reconcile and ReconcileReport with a record read back from the gateway.
// An event (the handler, its Deduper, the callback and where it came from)
// is a value on the stack; each thing it does once is an action under the
// claim of its own Deduper key (fulfil|refNo, double|refNo|orderNo,
// status|refNo|orderNo|status), taken by take and run, completed or
// released by its claim (callback_claim.go). A duplicate is answered from
// the Deduper's reply alone: no claim is allocated and the fpx field is
// never read. A pending or failed status first claims the refNo's
// fulfilment key to learn whether it is stale, and holds that claim while
// OnStatus runs, renewed beside the status's own.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paygate-go/paygate/internal/observing"
	"github.com/paygate-go/paygate/observe"
)

// Outcome is what the callback path made of one verified event: the same
// for a callback (CallbackHandler.ServeHTTP) and for an order read back
// from the gateway (CallbackHandler.Reconcile).
type Outcome string

// The outcomes of the callback path and of a reconciliation.
const (
	// OutcomeFulfilled: a success, fulfilled now (Fulfil ran and its
	// completion is recorded).
	OutcomeFulfilled Outcome = "fulfilled"
	// OutcomeAlreadyFulfilled: a success whose refNo was fulfilled before
	// (by a callback, another replica or an earlier reconciliation).
	OutcomeAlreadyFulfilled Outcome = "already_fulfilled"
	// OutcomePending: the gateway says pending; nothing fulfilled.
	OutcomePending Outcome = "pending"
	// OutcomeFailed: the gateway says failed; nothing fulfilled.
	OutcomeFailed Outcome = "failed"
	// OutcomeUnknownStatus: a status outside success, pending and failed
	// (docs/assumptions.md A-unknown-status); nothing fulfilled, logged at
	// error level.
	OutcomeUnknownStatus Outcome = "unknown_status"
	// OutcomeNotFound: the gateway has no order under the reference
	// (reconciliation only).
	OutcomeNotFound Outcome = "not_found"
	// OutcomeHeldBack: a record the SDK would not act on (another reference
	// or agency, a field that did not parse, an amount that contradicts
	// another, a status nobody can prove; docs/assumptions.md A-reconcile),
	// or a callback's success whose fpxTxnTime is older than MaxTxnAge
	// (docs/assumptions.md A-replay-bound); nothing fulfilled, review it.
	OutcomeHeldBack Outcome = "held_back"
	// OutcomeDoublePayment: a success for a refNo fulfilled under another
	// orderNo; OnDoublePayment ran, nothing fulfilled.
	OutcomeDoublePayment Outcome = "double_payment"
	// OutcomeInFlight: another delivery holds the event's claim; try again
	// later.
	OutcomeInFlight Outcome = "in_flight"
	// OutcomeError: a hook failed, the Deduper could not be reached, or the
	// lookup failed; try again later.
	OutcomeError Outcome = "error"
)

// verdict is the callback path's answer for one event: the HTTP status the
// gateway gets, the outcome a reconciliation reports, and why.
type verdict struct {
	code    int
	outcome Outcome
	// paid is the orderNo that fulfilled the refNo, when one did.
	paid string
	// stale is set when a pending or failed event came after the refNo's
	// fulfilment.
	stale bool
	// reason is the short text of a non-200 answer; err the cause.
	reason string
	err    error
	// settledInTx: a TxFulfiller settled the order in its transaction
	// (HookClaim.Settled), so the Settler is not told again.
	settledInTx bool
}

// statusOutcome maps a verified non-success status to its outcome; any
// other status is OutcomeUnknownStatus.
var statusOutcome = map[Status]Outcome{StatusPending: OutcomePending, StatusFailed: OutcomeFailed}

// event is one verified event on the callback path, whatever brought it (a
// callback or a reconciliation): the handler acting on it, the Deduper
// that holds its claims, the callback, and where it came from (o, said in
// each of its log lines). Its methods are the receiver rules.
type event struct {
	h  *CallbackHandler
	d  Deduper
	cb *Callback
	o  origin
	n  *observing.Note // what the Observer is told (run); nil: none
}

// newEvent is cb, from o, as h acts on it.
func (h *CallbackHandler) newEvent(cb *Callback, o origin) event {
	return event{h: h, d: h.deduper(), cb: cb, o: o}
}

// log writes one line saying where the event came from.
func (e event) log(ctx context.Context, level slog.Level, msg string, args ...any) {
	e.h.logAt(ctx, e.o, level, msg, args...)
}

// action is what an event does once, under the claim of its own Deduper
// key: the hook to run, what its completion records (result), a claim held
// beside it while the hook runs (also; nil: none), and whether it is a
// success's fulfilment (an inconsistent success is logged as it is
// fulfilled).
type action struct {
	key     string
	hook    func(context.Context, *Callback) error
	result  string
	also    *claim
	fulfils bool
}

// process runs the receiver rules of CallbackHandler on the event.
func (e event) process(ctx context.Context) verdict {
	cb := e.cb
	if err := e.h.misconfigured; err != nil { // keep the gateway retrying until it is fixed
		return verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handler misconfigured", err: err}
	}
	if cb.Status != StatusSuccess {
		return e.processStatus(ctx)
	}
	unbounded, err := e.txnAgeError()
	if err != nil {
		return e.holdBack(ctx, err)
	}
	how, paid, v := e.once(ctx, action{key: fulfilKey(cb.RefNo), hook: e.h.Fulfil.Fulfil, result: cb.OrderNo, fulfils: true})
	switch {
	case how == notDone:
		return v
	case how == ranNow:
		if unbounded {
			e.warnUnbounded(ctx)
		}
		return verdict{code: http.StatusOK, outcome: OutcomeFulfilled, settledInTx: v.settledInTx}
	case paid == cb.OrderNo:
		return verdict{code: http.StatusOK, outcome: OutcomeAlreadyFulfilled, paid: paid}
	case paid == "" || cb.OrderNo == "":
		// One side has no orderNo: nothing proves a second payment
		// (docs/assumptions.md A-double-payment).
		e.log(ctx, slog.LevelWarn, "success for a fulfilled refNo; an orderNo is missing, so it is taken for a retry",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "paidOrderNo", paid)
		return verdict{code: http.StatusOK, outcome: OutcomeAlreadyFulfilled, paid: paid}
	}
	return e.doublePayment(ctx, paid)
}

// doublePayment handles a success for a refNo fulfilled under paid,
// another orderNo: a warning and OnDoublePayment, once per orderNo, never a
// second Fulfil.
func (e event) doublePayment(ctx context.Context, paid string) verdict {
	cb := e.cb
	how, _, v := e.once(ctx, action{key: eventKey("double", cb.RefNo, cb.OrderNo), hook: func(ctx context.Context, cb *Callback) error {
		e.log(ctx, slog.LevelWarn, "second payment for a fulfilled refNo: not fulfilled; refund it",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "paidOrderNo", paid, "amount", cb.Amount.String())
		if e.h.OnDoublePayment == nil {
			return nil
		}
		return e.h.OnDoublePayment(ctx, cb, paid)
	}})
	if how != notDone {
		v = verdict{code: http.StatusOK, outcome: OutcomeDoublePayment}
	}
	v.paid = paid
	return v
}

// processStatus handles a verified pending, failed or unknown status. One
// that comes after the refNo's fulfilment is stale: it never regresses the
// order (docs/assumptions.md A-stale-status). An unknown status is never
// silent (docs/assumptions.md A-unknown-status).
func (e event) processStatus(ctx context.Context) verdict {
	cb := e.cb
	outcome, known := statusOutcome[cb.Status]
	if !known {
		outcome = OutcomeUnknownStatus
		e.log(ctx, slog.LevelError, "verified callback with a status the protocol does not define: not fulfilled; reconcile the order",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "status", string(cb.Status))
	}
	hold := e.h.OnStatus != nil
	paid, held, v, ok := e.fulfilment(ctx, hold)
	if !ok {
		return v
	}
	if cb.Stale = paid != nil; cb.Stale {
		e.log(ctx, slog.LevelWarn, "status after the refNo was fulfilled: stale, the order stays paid",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "status", string(cb.Status), "paidOrderNo", *paid)
	}
	if !hold {
		if !known && !cb.Stale {
			// Nothing took it: keep the gateway retrying rather than drop it.
			return verdict{code: http.StatusInternalServerError, outcome: outcome, stale: cb.Stale,
				reason: "unknown callback status", err: fmt.Errorf("paygate: unknown callback status %q", cb.Status)}
		}
		return verdict{code: http.StatusOK, outcome: outcome, stale: cb.Stale}
	}
	if held != nil {
		// The refNo's fulfilment is held off while OnStatus runs, so that a
		// success cannot be fulfilled between the staleness check and the
		// hook: it gets 503 and comes back after.
		defer held.release(ctx)
	}
	how, _, v := e.once(ctx, action{key: eventKey("status", cb.RefNo, cb.OrderNo, string(cb.Status)), hook: e.h.OnStatus, also: held})
	if how != notDone {
		v = verdict{code: http.StatusOK, outcome: outcome}
	}
	v.stale = cb.Stale
	return v
}

// fulfilment reports whether the event's refNo was fulfilled, and under
// which orderNo, by claiming its fulfilment key (any Deduper answers that).
// An acquired claim is given straight back, or, with hold, returned held:
// the caller releases it. ok is false, with the verdict to answer, when the
// Deduper fails or a fulfilment is in flight: the event is then judged on
// the gateway's next retry, once the fulfilment settled.
func (e event) fulfilment(ctx context.Context, hold bool) (paid *string, held *claim, v verdict, ok bool) {
	c, res, err := e.take(ctx, action{key: fulfilKey(e.cb.RefNo)})
	switch {
	case err != nil:
		return nil, nil, e.storeFailed(ctx, "dedupe claim failed", err), false
	case res.State == ClaimDone:
		return &res.Result, nil, verdict{}, true
	case c == nil:
		return nil, nil, inFlight(), false
	}
	if hold {
		return nil, c, verdict{}, true
	}
	c.release(ctx)
	return nil, nil, verdict{}, true
}

// fulfilKey is the Deduper key of a refNo's fulfilment. Its one part is
// the last, so it is kept as it is: no other refNo gives the same key.
func fulfilKey(refNo string) string { return "fulfil|" + refNo }

// eventKey is the Deduper key of an event of kind about several parts
// (refNo, orderNo, status), joined by '|'. A '|' or '\' within a part is
// written after a '\', so that two different events never share a key
// (refNo "A|B" with orderNo "C", and refNo "A" with orderNo "B|C", would);
// a part with neither, as every gateway identifier seen so far, is as it
// was, so keys already stored keep their meaning.
func eventKey(kind string, parts ...string) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, p := range parts {
		b.WriteByte('|')
		for i := 0; i < len(p); i++ {
			if p[i] == '|' || p[i] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// onceOutcome is what once made of an action.
type onceOutcome uint8

const (
	// ranNow: the hook ran and the action's completion is recorded.
	ranNow onceOutcome = iota + 1
	// doneBefore: an earlier delivery completed the action; nothing ran.
	// once returns what that completion recorded.
	doneBefore
	// notDone: the action is not completed (another delivery holds it, the
	// Deduper failed, or the hook failed): answer the verdict once returns.
	notDone
)

// once claims a's key and runs its hook: ranNow, doneBefore with what the
// earlier completion recorded (the caller decides what it means), or
// notDone with the verdict to answer: in flight elsewhere (503), the
// Deduper unreachable (503), or the hook or the recording of its completion
// failed (500).
func (e event) once(ctx context.Context, a action) (how onceOutcome, recorded string, v verdict) {
	if tf, ok := e.h.Fulfil.(TxFulfiller); ok && a.fulfils {
		return e.onceTx(ctx, a, tf)
	}
	// The event is handled to its end even if the gateway hung up.
	ctx = detached(ctx)
	c, res, err := e.take(ctx, a)
	e.n.Claimed(err, res.State == ClaimDone, c != nil)
	switch {
	case err != nil:
		return notDone, "", e.storeFailed(ctx, "dedupe claim failed", err)
	case res.State == ClaimDone:
		return doneBefore, res.Result, verdict{}
	case c == nil:
		return notDone, "", inFlight()
	}
	cb := e.cb
	// The fpx field is read once the event is acted on: a duplicate never
	// needs it.
	cb.readFPX()
	if a.fulfils {
		e.warnInconsistent(ctx)
	}
	began := e.n.Now()
	err = c.run(ctx, a.hook, cb)
	e.n.Hooked(err, errors.Is(err, ErrClaimLost), a.fulfils, began)
	if err != nil {
		c.release(ctx)
		return notDone, "", e.hookFailed(ctx, err)
	}
	if err := c.complete(ctx); err != nil {
		e.n.ClaimLost(errors.Is(err, ErrClaimLost))
		// The hook ran but its completion is not recorded: 500 so the
		// gateway retries. If the claim was lost, another delivery may
		// run the hook again: the at-least-once case of the lease path.
		// A completion that failed otherwise (the store unreachable, its
		// answer lost) gives the claim back, retried as a failed release
		// is, rather than leave it to hold the event for a lease: a
		// completion that did land stays (a release never undoes one).
		e.log(ctx, slog.LevelError, "dedupe complete failed after the hook ran", "refNo", cb.RefNo, "err", err)
		if !errors.Is(err, ErrClaimLost) {
			c.release(ctx)
		}
		return notDone, "", verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handling failed", err: err}
	}
	return ranNow, "", verdict{}
}

// onceTx is once for a fulfilment by a TxFulfiller, which claims
// the event in its own transaction, bounded by the hook's time limit.
func (e event) onceTx(ctx context.Context, a action, tf TxFulfiller) (how onceOutcome, recorded string, v verdict) {
	ctx, cancel := context.WithTimeout(detached(ctx), e.h.hookTimeout())
	defer cancel()
	e.cb.readFPX()
	began := e.n.Now()
	var res ClaimResult
	var settled *atomic.Bool // set only with a Settler: a handler without one allocates nothing
	if e.h.Settler != nil {
		settled = new(atomic.Bool)
	}
	err := callHook(ctx, func(ctx context.Context, cb *Callback) (err error) {
		res, err = tf.FulfilOnce(ctx, HookClaim{Key: a.key, Result: a.result, Deduper: e.d, Settler: e.h.Settler, settled: settled}, cb)
		return err
	}, e.cb)
	e.n.Claimed(nil, res.State == ClaimDone, err != nil || res.State == ClaimAcquired)
	switch {
	case errors.Is(err, ErrStoreUnavailable): // nothing ran: the store's outage, as on the lease path
		e.n.Claimed(err, false, false)
		return notDone, "", e.storeFailed(ctx, "dedupe store unreachable; nothing written", err)
	case err != nil:
		e.n.Hooked(err, errors.Is(err, ErrClaimLost), true, began)
		return notDone, "", e.hookFailed(ctx, err)
	case res.State == ClaimDone:
		return doneBefore, res.Result, verdict{}
	case res.State != ClaimAcquired:
		return notDone, "", inFlight()
	}
	e.n.Hooked(nil, false, true, began)
	e.warnInconsistent(ctx)
	return ranNow, "", verdict{settledInTx: settled != nil && settled.Load()}
}

// hookFailed is the verdict of a hook that failed: logged, 500.
func (e event) hookFailed(ctx context.Context, err error) verdict {
	e.log(ctx, slog.LevelError, "callback hook failed; "+retriedBy[e.cb.Source], "refNo", e.cb.RefNo, "status", string(e.cb.Status), "err", err)
	return verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handling failed", err: err}
}

// warnInconsistent logs a success fulfilled though inconsistent.
func (e event) warnInconsistent(ctx context.Context) {
	if cb := e.cb; !cb.Consistent() {
		e.log(ctx, slog.LevelWarn, "verified success is inconsistent; fulfilling (check cb.Consistent() in Fulfil to hold it)",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "fpx_debit_auth_code", string(cb.FPX.DebitAuthCode), "problems", fmt.Sprint(cb.Problems))
	}
}

// retriedBy says, by an event's Source, what brings it back after its
// hook failed: the gateway's next attempt for a callback, the next
// reconciliation for a lookup or a report row.
var retriedBy = [...]string{
	SourceCallback: "the gateway will retry",
	SourceLookup:   "the next reconciliation will retry",
	SourceReport:   "the next reconciliation will retry",
}

// inFlight is the verdict when another delivery holds the claim: 503, the
// gateway comes back once it settled.
func inFlight() verdict {
	return verdict{code: http.StatusServiceUnavailable, outcome: OutcomeInFlight, reason: "being handled by another delivery"}
}

// storeFailed is the verdict when the Deduper cannot be reached: 503, the
// gateway comes back.
func (e event) storeFailed(ctx context.Context, msg string, err error) verdict {
	e.log(ctx, slog.LevelError, msg, "refNo", e.cb.RefNo, "err", err)
	return verdict{code: http.StatusServiceUnavailable, outcome: OutcomeError, reason: "temporarily unavailable", err: err}
}

// take claims a's key for the event: the claim when the Deduper grants
// it, else nil with what the Deduper answered.
func (e event) take(ctx context.Context, a action) (*claim, ClaimResult, error) {
	lease, renewed := e.h.claimLease(e.d)
	sctx, cancel := storeContext(ctx, e.d)
	claimed := time.Now()
	res, err := e.d.Claim(sctx, a.key, lease)
	cancel()
	if err != nil || res.State != ClaimAcquired {
		return nil, res, err
	}
	return &claim{d: e.d, key: a.key, token: res.Token, result: a.result, also: a.also,
		lease: lease, renewed: renewed, hookTimeout: e.h.hookTimeout(), log: e.log, heldUntil: claimed.Add(lease)}, res, nil
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

// observedSources names an event's Source to an Observer.
var observedSources = [...]observe.Source{SourceCallback: observe.SourceCallback, SourceLookup: observe.SourceLookup, SourceReport: observe.SourceReport}

// run is process, noted for the handler's Observer when it has one: in the
// request's Note for a callback, in a start, note and end of its own for a
// reconciled record.
func (e event) run(ctx context.Context) verdict {
	if e.h.Observer == nil {
		v := e.process(ctx)
		e.settle(ctx, v)
		return v
	}
	own := e.o.r == nil // a reconciled record, even one reconciled within a callback's hook
	if own {
		e.n = &observing.Note{}
		ctx = e.h.Observer.CallbackStart(ctx, observe.Callback{Source: observedSources[e.cb.Source]})
	} else {
		e.n = observing.From(ctx)
	}
	v := e.process(ctx)
	e.settle(ctx, v)
	e.n.Processed(string(v.outcome), v.code)
	if own {
		e.n.End.Status = 0
		e.h.Observer.CallbackEnd(ctx, e.n.End)
	}
	return v
}

// ErrHeldBack is the error OnHeldBack is given (wrapped, with the age) for
// a verified success the handler did not fulfil because its transaction
// time is older than MaxTxnAge, or too far in the future.
var ErrHeldBack = errors.New("paygate: verified success held back: its fpxTxnTime is outside the handler's MaxTxnAge")

// txnAgeError is the error of a success whose transaction time is outside
// the bound; nil when it is within it, has none the SDK reads (unbounded:
// the bound cannot apply), or the event is not a callback (a
// reconciliation reads the gateway's own API, which an attacker cannot
// replay).
func (e event) txnAgeError() (unbounded bool, err error) {
	limit := e.h.maxTxnAge()
	if e.cb.Source != SourceCallback || limit == 0 {
		return false, nil
	}
	at := parseRecordTime(e.cb.FPXTxnTime)
	if at.IsZero() {
		return true, nil
	}
	age := e.h.now().Sub(at)
	if age <= limit && age >= -maxTxnAhead {
		return false, nil
	}
	return false, fmt.Errorf("%w: fpxTxnTime %s is %v old (MaxTxnAge %v)", ErrHeldBack, e.cb.FPXTxnTime, age.Round(time.Second), limit)
}

// warnUnbounded says, once per fulfilled success, that the replay bound
// could not apply: its fpxTxnTime is missing or unread, so its replays
// rest on the Deduper's record alone (docs/assumptions.md A-replay-bound).
func (e event) warnUnbounded(ctx context.Context) {
	e.n.Unbounded()
	e.log(ctx, slog.LevelWarn, "success fulfilled without a fpxTxnTime the replay bound reads: its replays are answered by the Deduper's record alone, within its retention",
		"refNo", e.cb.RefNo, "orderNo", e.cb.OrderNo, "fpxTxnTime", fmt.Sprintf("%.64q", e.cb.FPXTxnTime))
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
