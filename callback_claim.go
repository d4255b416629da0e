package paygate

// A claim on one Deduper key, from Claim to Complete or Release, and the
// lease that keeps it while its hook runs. It knows the Deduper, the key
// and the hook it runs, never the event that took it: the event calls the
// claim, never the other way. The claim is one allocation, made only once
// the Deduper granted it (a duplicate costs none); the hook's context
// carries its HookClaim. A claim not renewed (on a *MemoryDeduper, taken
// for HookTimeout plus Lease) costs no timer; a renewed one costs one
// timer, and a goroutine only once the first renewal is due.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// storeTimeout bounds each Claim, Complete and Release. They run on a
// context of their own, never the hook's nearly spent one.
const storeTimeout = 5 * time.Second

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
	d      Deduper
	key    string
	token  string
	result string
	also   *claim
	lease  time.Duration
	// renewed says the claim is renewed while its hook runs (claimLease).
	renewed bool
	// hookTimeout is the time limit of the hook it runs.
	hookTimeout time.Duration
	// log writes a line as the event that took the claim writes its own.
	log func(ctx context.Context, level slog.Level, msg string, args ...any)
	// hc is what the hook's context carries (HookClaimFrom).
	hc HookClaim
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

// run runs hook on cb under its time limit, with the HookClaim in its context; when the
// claim is renewed, keep keeps it meanwhile. ctx is detached.
func (c *claim) run(ctx context.Context, hook func(context.Context, *Callback) error, cb *Callback) error {
	c.hc = HookClaim{Key: c.key, Token: c.token, Result: c.result, Deduper: c.d, completed: &c.completed}
	// The hook outlives a dropped connection but not its time limit.
	ctx, cancelTimeout := context.WithTimeout(context.WithValue(ctx, hookClaimKey{}, c), c.hookTimeout)
	defer cancelTimeout()
	if !c.renewed {
		return callHook(ctx, hook, cb)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.keep(ctx, cancel)
	err := callHook(ctx, hook, cb)
	c.stopKeeping()
	return err
}

// hookClaimKey is the context key of the claim a hook runs under: its
// value is the *claim.
type hookClaimKey struct{}

// HookClaimFrom returns the claim the hook's ctx runs under; ok is false
// outside a CallbackHandler hook.
func HookClaimFrom(ctx context.Context) (hc HookClaim, ok bool) {
	c, ok := ctx.Value(hookClaimKey{}).(*claim)
	if !ok {
		return HookClaim{}, false
	}
	return c.hc, true
}

// complete records the completion, unless the hook committed it itself
// (HookClaim.Completed).
func (c *claim) complete(ctx context.Context) error {
	if c.completed.Load() {
		return nil
	}
	sctx, cancel := storeContext(ctx, c.d)
	defer cancel()
	return c.d.Complete(sctx, c.key, c.token, c.result)
}

// release gives the claim back, so that the next delivery may take it. A
// release that fails (the store unreachable, its answer lost) is retried
// in the background, from releaseRetryFirst doubling to releaseRetryMax,
// until it succeeds, the claim is found lost, or the lease lapses by
// itself: an outage then holds its in-flight events at most
// releaseRetryMax longer than it lasts, not a whole lease.
func (c *claim) release(ctx context.Context) {
	err := c.tryRelease(ctx)
	if err == nil {
		return
	}
	c.log(ctx, slog.LevelError, "dedupe release failed; retried until its lease lapses", "key", c.key, "err", err)
	// Unlocked: renew (of c, or of the claim c is held beside) wrote heldUntil before stopKeeping.
	go c.retryRelease(detached(ctx), c.heldUntil)
}

// The waits between the retries of a failed release.
const (
	releaseRetryFirst = 100 * time.Millisecond
	releaseRetryMax   = 500 * time.Millisecond
)

// tryRelease releases the claim once; nil when it is done with: released,
// or no longer this claim's to release.
func (c *claim) tryRelease(ctx context.Context) error {
	sctx, cancel := storeContext(ctx, c.d)
	defer cancel()
	if err := c.d.Release(sctx, c.key, c.token); !errors.Is(err, ErrClaimLost) {
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
	err := c.d.Renew(ctx, c.key, c.token, c.lease)
	if err == nil && c.also != nil {
		err = c.d.Renew(ctx, c.also.key, c.also.token, c.lease)
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
		c.log(c.hook, slog.LevelError, "claim lost while the hook ran; cancelling the hook", "key", c.key)
		c.cancel(fmt.Errorf("paygate: callback claim lost while the hook ran: %w", err))
	default:
		c.lastErr = err
		c.log(c.hook, slog.LevelWarn, "claim renewal failed; trying again", "key", c.key, "err", err)
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
	c.log(c.hook, slog.LevelError, "claim not renewed before its safety margin; cancelling the hook", "key", c.key, "err", cause)
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
