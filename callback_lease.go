package paygate

// An event's claim on one Deduper key, from Claim to Complete or Release,
// and the lease path that keeps it while its hook runs. The claim is one
// allocation, made only once the Deduper granted it (a duplicate costs
// none); the hook's context carries it under hookClaimKey (HookClaimFrom
// reads the HookClaim from it). On a *MemoryDeduper the claim is taken
// for HookTimeout plus Lease and never renewed (claimLease): no timer, no
// cancel-cause context. On any other Deduper, keep renews it on timers:
// nothing runs until the first renewal is due, so a hook shorter than
// Lease/3 costs one timer and no goroutine.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// leaseMarginDivisor sets the safety margin: a hook's context is cancelled
// lease/leaseMarginDivisor before its claim could lapse unrenewed.
const leaseMarginDivisor = 4

// errLeaseMargin is the cause of a hook's cancellation when its claim was
// not renewed in time.
var errLeaseMargin = errors.New("paygate: callback claim not renewed before its lease's safety margin")

// claim is an event's hold on one Deduper key: the key, the claim's
// fencing token, what its completion records, a claim held beside it and
// renewed with it (also; nil: none), its lease and deadline, and, while its
// hook runs on the lease path, its renewal state.
type claim struct {
	ev     event
	key    string
	token  string
	result string
	also   *claim
	lease  time.Duration
	// renewed says the claim is renewed while its hook runs (claimLease).
	renewed bool
	// completed is set once the hook committed the completion itself
	// (HookClaim.Completed): a renewal then finds the claim done, which is
	// no loss, and complete has nothing to record.
	completed atomic.Bool

	// The renewal state, set by keep: the hook's context and its cancel,
	// the renewal period and the safety margin.
	hook   context.Context
	cancel context.CancelCauseFunc
	every  time.Duration
	margin time.Duration

	mu        sync.Mutex
	stopped   bool
	heldUntil time.Time   // the lease deadline: claimed or last renewed, plus lease
	tick      *time.Timer // the next renewal
	guard     *time.Timer // the safety margin, armed at the first renewal
	lastErr   error       // the last failed renewal's, for the cause
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
	return &claim{ev: e, key: a.key, token: res.Token, result: a.result, also: a.also,
		lease: lease, renewed: renewed, heldUntil: claimed.Add(lease)}, res, nil
}

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

// run runs hook under HookTimeout, with the claim in its context; when the
// claim is renewed, keep keeps it meanwhile. ctx is detached.
func (c *claim) run(ctx context.Context, hook func(context.Context, *Callback) error) error {
	// The hook outlives a dropped connection but not its time limit.
	ctx, cancelTimeout := context.WithTimeout(context.WithValue(ctx, hookClaimKey{}, c), c.ev.h.hookTimeout())
	defer cancelTimeout()
	if !c.renewed {
		return callHook(ctx, hook, c.ev.cb)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.keep(ctx, cancel)
	err := callHook(ctx, hook, c.ev.cb)
	c.stopKeeping()
	return err
}

// complete records the completion, unless the hook committed it itself
// (HookClaim.Completed).
func (c *claim) complete(ctx context.Context) error {
	if c.completed.Load() {
		return nil
	}
	sctx, cancel := storeContext(ctx, c.ev.d)
	defer cancel()
	return c.ev.d.Complete(sctx, c.key, c.token, c.result)
}

// release gives the claim back, so that the next delivery may take it. A
// release that fails (the store unreachable, its answer lost) is retried
// in the background, from releaseRetryFirst doubling to releaseRetryMax,
// until it succeeds, the claim is found lost, or the lease lapses by
// itself: an outage then holds its in-flight events about as long as it
// lasts, not a whole lease.
func (c *claim) release(ctx context.Context) {
	err := c.tryRelease(ctx)
	if err == nil {
		return
	}
	c.ev.log(ctx, slog.LevelError, "dedupe release failed; retried until its lease lapses", "refNo", c.ev.cb.RefNo, "err", err)
	// Unlocked: renew (of c, or of the claim c is held beside) wrote heldUntil before stopKeeping.
	go c.retryRelease(detached(ctx), c.heldUntil)
}

// The waits between the retries of a failed release.
const (
	releaseRetryFirst = 100 * time.Millisecond
	releaseRetryMax   = 2 * time.Second
)

// tryRelease releases the claim once; nil when it is done with: released,
// or no longer this claim's to release.
func (c *claim) tryRelease(ctx context.Context) error {
	sctx, cancel := storeContext(ctx, c.ev.d)
	defer cancel()
	if err := c.ev.d.Release(sctx, c.key, c.token); !errors.Is(err, ErrClaimLost) {
		return err
	}
	return nil
}

// retryRelease retries the release until it is done with or the claim
// lapses at lapses.
func (c *claim) retryRelease(ctx context.Context, lapses time.Time) {
	for wait := releaseRetryFirst; time.Until(lapses) > wait; wait = min(2*wait, releaseRetryMax) {
		t := time.NewTimer(wait)
		<-t.C
		if c.tryRelease(ctx) == nil {
			return
		}
	}
}

// keep starts keeping the claim while its hook runs, on hook, the hook's
// context, which cancel cancels. It renews the claim (and also) every
// lease/3 and cancels the hook when renewal reports the claim lost, at
// once, or, by a timer of its own (the guard), a safety margin
// (lease/leaseMarginDivisor) before an unrenewed claim could lapse, so
// that a hook that stops on cancellation never overlaps the next claimant.
func (c *claim) keep(hook context.Context, cancel context.CancelCauseFunc) {
	c.hook, c.cancel = hook, cancel
	c.every, c.margin = max(c.lease/3, 3*time.Millisecond), c.lease/leaseMarginDivisor
	c.mu.Lock()
	c.tick = time.AfterFunc(c.every, c.renew)
	// A claim answered slowly can reach its margin before the first
	// renewal: the guard then starts now. One past its margin already
	// starts its hook cancelled, with a guard that counts as fired.
	left := time.Until(c.heldUntil) - c.margin
	switch {
	case left <= 0:
		c.guard = time.NewTimer(c.lease)
		c.guard.Stop()
	case left < c.every:
		c.guard = time.AfterFunc(left, c.lapse)
	}
	c.mu.Unlock()
	if left <= 0 {
		c.lapse()
	}
}

// renew extends the claim and schedules the next renewal: lease/3 later
// after a success, lease/30 after a failure. It stops once the hook has
// returned, its claim is lost, or it ran past HookTimeout (such a hook no
// longer holds the event); a hook cancelled by the safety margin is still
// renewed while it runs, since a renewal that succeeds late still holds the
// claim.
func (c *claim) renew() {
	c.mu.Lock()
	if c.stopped || c.hook.Err() != nil && !errors.Is(context.Cause(c.hook), errLeaseMargin) {
		c.mu.Unlock()
		return
	}
	if c.guard == nil {
		c.guard = time.AfterFunc(time.Until(c.heldUntil)-c.margin, c.lapse)
	}
	c.mu.Unlock()
	sent := time.Now()
	ctx, done := context.WithTimeout(context.WithoutCancel(c.hook), c.lease)
	err := c.ev.d.Renew(ctx, c.key, c.token, c.lease)
	if err == nil && c.also != nil {
		err = c.ev.d.Renew(ctx, c.also.key, c.also.token, c.lease)
	}
	done()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.completed.Load() {
		return
	}
	switch {
	case err == nil:
		c.heldUntil = sent.Add(c.lease)
		if c.also != nil { // renewed with it: its release retries as long
			c.also.heldUntil = c.heldUntil
		}
		if c.guard.Stop() { // once fired, a cancelled hook stays cancelled
			c.guard.Reset(time.Until(c.heldUntil) - c.margin)
		}
		c.tick.Reset(c.every)
	case errors.Is(err, ErrClaimLost):
		c.ev.log(c.hook, slog.LevelError, "claim lost while the hook ran; cancelling the hook", "key", c.key)
		c.cancel(fmt.Errorf("paygate: callback claim lost while the hook ran: %w", err))
	default:
		c.lastErr = err
		c.ev.log(c.hook, slog.LevelWarn, "claim renewal failed; trying again", "key", c.key, "err", err)
		c.tick.Reset(max(c.every/10, time.Millisecond))
	}
}

// lapse cancels the hook: its claim was not renewed before the margin.
func (c *claim) lapse() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	last := c.lastErr
	c.mu.Unlock()
	if last == nil {
		last = errors.New("no renewal answered")
	}
	cause := fmt.Errorf("%w (last renewal error: %w)", errLeaseMargin, last)
	c.ev.log(c.hook, slog.LevelError, "claim not renewed before its safety margin; cancelling the hook", "key", c.key, "err", cause)
	c.cancel(cause)
}

// stopKeeping ends the keeping once the hook has returned. A renewal in
// flight finishes on its own and changes nothing.
func (c *claim) stopKeeping() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.tick.Stop()
	if c.guard != nil {
		c.guard.Stop()
	}
}
