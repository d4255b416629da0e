package paygate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
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
	// another, a status nobody can prove); nothing fulfilled, review it
	// (reconciliation only, docs/assumptions.md A-reconcile).
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
}

// statusOutcome maps a verified non-success status to its outcome; any
// other status is OutcomeUnknownStatus.
var statusOutcome = map[Status]Outcome{StatusPending: OutcomePending, StatusFailed: OutcomeFailed}

// errNoFulfil is the verdict's cause when a paid order has no Fulfil.
var errNoFulfil = errors.New("paygate: callback handler has no Fulfil; paid order not handled")

// process runs the callback path on one verified event, whatever brought it
// (a callback or a reconciliation): the receiver rules of CallbackHandler.
// o says in each log line where the event came from.
func (h *CallbackHandler) process(ctx context.Context, cb *Callback, o origin) verdict {
	if cb.Status != StatusSuccess {
		return h.processStatus(ctx, cb, o)
	}
	if h.Fulfil == nil {
		// A paid order with nowhere to go: keep the gateway retrying.
		h.logAt(ctx, o, slog.LevelError, errNoFulfil.Error(), "refNo", cb.RefNo)
		return verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handler misconfigured", err: errNoFulfil}
	}
	how, paid, v := h.once(ctx, o, cb, event{key: fulfilKey(cb.RefNo), hook: h.Fulfil, result: cb.OrderNo, fulfils: true})
	switch {
	case how == notDone:
		return v
	case how == ranNow:
		return verdict{code: http.StatusOK, outcome: OutcomeFulfilled}
	case paid == cb.OrderNo:
		return verdict{code: http.StatusOK, outcome: OutcomeAlreadyFulfilled, paid: paid}
	case paid == "" || cb.OrderNo == "":
		// One side has no orderNo: nothing proves a second payment.
		h.logAt(ctx, o, slog.LevelWarn, "success for a fulfilled refNo; an orderNo is missing, so it is taken for a retry",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "paidOrderNo", paid)
		return verdict{code: http.StatusOK, outcome: OutcomeAlreadyFulfilled, paid: paid}
	}
	how, _, v = h.once(ctx, o, cb, event{key: eventKey("double", cb.RefNo, cb.OrderNo), hook: func(ctx context.Context, cb *Callback) error {
		h.logAt(ctx, o, slog.LevelWarn, "second payment for a fulfilled refNo: not fulfilled; refund it",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "paidOrderNo", paid, "amount", cb.Amount.String())
		if h.OnDoublePayment == nil {
			return nil
		}
		return h.OnDoublePayment(ctx, cb, paid)
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
func (h *CallbackHandler) processStatus(ctx context.Context, cb *Callback, o origin) verdict {
	outcome, known := statusOutcome[cb.Status]
	if !known {
		outcome = OutcomeUnknownStatus
		h.logAt(ctx, o, slog.LevelError, "verified callback with a status the protocol does not define: not fulfilled; reconcile the order",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "status", string(cb.Status))
	}
	hold := h.OnStatus != nil
	paid, held, v, ok := h.fulfilment(ctx, o, cb, hold)
	if !ok {
		return v
	}
	if cb.Stale = paid != nil; cb.Stale {
		h.logAt(ctx, o, slog.LevelWarn, "status after the refNo was fulfilled: stale, the order stays paid",
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
		defer h.releaseHeld(ctx, o, cb, held)
	}
	how, _, v := h.once(ctx, o, cb, event{key: eventKey("status", cb.RefNo, cb.OrderNo, string(cb.Status)), hook: h.OnStatus, also: held})
	if how != notDone {
		v = verdict{code: http.StatusOK, outcome: outcome}
	}
	v.stale = cb.Stale
	return v
}

// heldClaim is a claim held beside an event's own while its hook runs, and
// renewed with it.
type heldClaim struct{ key, token string }

// fulfilment reports whether cb's refNo was fulfilled, and under which
// orderNo, by claiming its fulfilment key (any Deduper answers that). An
// acquired claim is given straight back, or, with hold, returned held: the
// caller releases it. ok is false, with the verdict to answer, when the
// Deduper fails or a fulfilment is in flight: the event is then judged on
// the gateway's next retry, once the fulfilment settled.
func (h *CallbackHandler) fulfilment(ctx context.Context, o origin, cb *Callback, hold bool) (paid *string, held *heldClaim, v verdict, ok bool) {
	d := h.deduper()
	sctx, cancel := storeContext(ctx, d)
	defer cancel()
	lease, _ := h.claimLease(d)
	claim, err := d.Claim(sctx, fulfilKey(cb.RefNo), lease)
	switch {
	case err != nil:
		return nil, nil, h.storeFailed(ctx, o, cb, "dedupe claim failed", err), false
	case claim.State == ClaimDone:
		return &claim.Result, nil, verdict{}, true
	case claim.State == ClaimBusy:
		return nil, nil, verdict{code: http.StatusServiceUnavailable, outcome: OutcomeInFlight, reason: "being handled by another delivery"}, false
	}
	held = &heldClaim{key: fulfilKey(cb.RefNo), token: claim.Token}
	if hold {
		return nil, held, verdict{}, true
	}
	h.releaseHeld(ctx, o, cb, held)
	return nil, nil, verdict{}, true
}

// releaseHeld gives a held claim back.
func (h *CallbackHandler) releaseHeld(ctx context.Context, o origin, cb *Callback, held *heldClaim) {
	d := h.deduper()
	sctx, cancel := storeContext(ctx, d)
	defer cancel()
	if err := d.Release(sctx, held.key, held.token); err != nil {
		h.logAt(ctx, o, slog.LevelError, "dedupe release failed", "refNo", cb.RefNo, "err", err)
	}
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

// event is one thing the handler acts on once: its dedupe key, its hook,
// what its completion records, a claim held beside it while the hook runs
// (nil: none), and whether it is a success's fulfilment (an inconsistent
// success is logged as it is fulfilled).
type event struct {
	key     string
	hook    func(context.Context, *Callback) error
	result  string
	also    *heldClaim
	fulfils bool
}

// onceOutcome is what once made of an event.
type onceOutcome uint8

const (
	// ranNow: the hook ran and the event's completion is recorded.
	ranNow onceOutcome = iota + 1
	// doneBefore: an earlier delivery completed the event; nothing ran.
	// once returns what that completion recorded.
	doneBefore
	// notDone: the event is not completed (another delivery holds it, the
	// Deduper failed, or the hook failed): answer the verdict once returns.
	notDone
)

// once claims ev and runs its hook: ranNow, doneBefore with what the
// earlier completion recorded (the caller decides what it means), or
// notDone with the verdict to answer: in flight elsewhere (503), the
// Deduper unreachable (503), or the hook or the recording of its completion
// failed (500).
func (h *CallbackHandler) once(ctx context.Context, o origin, cb *Callback, ev event) (how onceOutcome, recorded string, v verdict) {
	// The event is handled to its end even if the gateway hung up.
	ctx = detached(ctx)
	d := h.deduper()
	lease, renewed := h.claimLease(d)
	sctx, cancel := storeContext(ctx, d)
	claimed := time.Now()
	claim, err := d.Claim(sctx, ev.key, lease)
	cancel()
	switch {
	case err != nil:
		return notDone, "", h.storeFailed(ctx, o, cb, "dedupe claim failed", err)
	case claim.State == ClaimDone:
		return doneBefore, claim.Result, verdict{}
	case claim.State != ClaimAcquired:
		return notDone, "", verdict{code: http.StatusServiceUnavailable, outcome: OutcomeInFlight, reason: "being handled by another delivery"}
	}
	// The fpx field is read once the event is acted on: a duplicate never
	// needs it.
	cb.readFPX()
	if ev.fulfils && !cb.Consistent() {
		h.logAt(ctx, o, slog.LevelWarn, "verified success is inconsistent; fulfilling (check cb.Consistent() in Fulfil to hold it)",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "fpx_debit_auth_code", string(cb.FPX.DebitAuthCode),
			"problems", fmt.Sprint(cb.Problems))
	}
	completed, hookErr := h.runHook(ctx, o, d, ev, claimed, claim.Token, lease, renewed, cb)
	sctx, cancel = storeContext(ctx, d)
	defer cancel()
	if hookErr != nil {
		h.logAt(ctx, o, slog.LevelError, "callback hook failed; the gateway will retry", "refNo", cb.RefNo, "status", string(cb.Status), "err", hookErr)
		if err := d.Release(sctx, ev.key, claim.Token); err != nil {
			h.logAt(ctx, o, slog.LevelError, "dedupe release failed", "refNo", cb.RefNo, "err", err)
		}
		return notDone, "", verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handling failed", err: hookErr}
	}
	if !completed {
		// Unless the hook committed the completion with its effect
		// (HookClaim.Completed), record it here.
		if err := d.Complete(sctx, ev.key, claim.Token, ev.result); err != nil {
			// The hook ran but its completion is not recorded: 500 so the
			// gateway retries. If the claim was lost, another delivery may
			// run the hook again: the at-least-once case of the lease path.
			h.logAt(ctx, o, slog.LevelError, "dedupe complete failed after the hook ran", "refNo", cb.RefNo, "err", err)
			return notDone, "", verdict{code: http.StatusInternalServerError, outcome: OutcomeError, reason: "callback handling failed", err: err}
		}
	}
	return ranNow, "", verdict{}
}

// storeFailed is the verdict when the Deduper cannot be reached: 503, the
// gateway comes back.
func (h *CallbackHandler) storeFailed(ctx context.Context, o origin, cb *Callback, msg string, err error) verdict {
	h.logAt(ctx, o, slog.LevelError, msg, "refNo", cb.RefNo, "err", err)
	return verdict{code: http.StatusServiceUnavailable, outcome: OutcomeError, reason: "temporarily unavailable", err: err}
}

// storeContext is the context of one call of d: ctx's values, not its
// cancellation (the work must be recorded even if the gateway hung up), and
// a short time limit of its own, which an in-process Deduper that never
// waits (MemoryDeduper) is spared.
func storeContext(ctx context.Context, d Deduper) (context.Context, context.CancelFunc) {
	if _, ok := d.(neverWaits); ok {
		return detached(ctx), func() {}
	}
	return context.WithTimeout(detached(ctx), storeTimeout)
}

// detached is ctx's values without its cancellation: ctx itself when it
// can never be cancelled (its Done is nil), so that a context detached once
// is not wrapped again.
func detached(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// neverWaits is implemented by a Deduper whose calls never wait on I/O,
// so that a time limit on them would only cost a timer.
type neverWaits interface{ neverWaits() }

// claimLease is how long an event's claim on d is taken for, and whether
// it is renewed while the hook runs: Lease, renewed, on any Deduper but
// the in-memory one; on a *MemoryDeduper, HookTimeout and Lease at once,
// not renewed: an in-process claim lapses only with time, and this one
// outlasts the hook's time limit by a lease, so renewing it would only
// cost a timer per event. The sum saturates: a HookTimeout or Lease near
// the largest Duration (meant as "no limit") must not wrap to a negative
// lease, which would let a duplicate take the event while its hook runs.
func (h *CallbackHandler) claimLease(d Deduper) (lease time.Duration, renewed bool) {
	if _, ok := d.(*MemoryDeduper); ok {
		l := h.lease()
		return min(h.hookTimeout(), math.MaxInt64-l) + l, false
	}
	return h.lease(), true
}

// runHook runs the hook under HookTimeout and reports whether the hook
// completed the event itself (HookClaim.Completed); when renewed, a
// leaseKeeper keeps its claim, taken at claimed for lease, meanwhile. ctx
// is detached.
func (h *CallbackHandler) runHook(ctx context.Context, o origin, d Deduper, ev event, claimed time.Time, token string, lease time.Duration, renewed bool, cb *Callback) (completed bool, err error) {
	// The hook outlives a dropped connection but not its time limit.
	ctx, cancelTimeout := context.WithTimeout(ctx, h.hookTimeout())
	defer cancelTimeout()
	run := &hookRun{claim: HookClaim{Key: ev.key, Token: token, Result: ev.result}}
	run.claim.completed = &run.completed
	if !renewed {
		run.Context = ctx
		err = callHook(run, ev.hook, cb)
		return run.completed.Load(), err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	run.Context = ctx
	run.keeper.start(run, h, o, d, ev, token, claimed.Add(lease), lease, cancel, &run.completed)
	err = callHook(run, ev.hook, cb)
	run.keeper.stop()
	return run.completed.Load(), err
}

// hookRun is one call of a hook under its claim, in one allocation: the
// hook's context, which carries the HookClaim (HookClaimFrom), whether the
// hook completed the event itself, and the leaseKeeper of the claim.
type hookRun struct {
	// Context is the hook's: HookTimeout, cancelled by the keeper.
	context.Context
	claim     HookClaim
	completed atomic.Bool
	keeper    leaseKeeper
}

// Value answers the HookClaim's key with the claim, any other from the
// hook's context.
func (r *hookRun) Value(key any) any {
	if _, ok := key.(hookClaimKey); ok {
		return r.claim
	}
	return r.Context.Value(key)
}

// callHook runs a hook, turning a panic into an error so that the claim is
// released rather than left to lapse.
func callHook(ctx context.Context, hook func(context.Context, *Callback) error, cb *Callback) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("paygate: callback hook panicked: %v", p)
		}
	}()
	return hook(ctx, cb)
}
