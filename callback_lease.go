package paygate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// leaseKeeper keeps the claim a hook runs under (the lease path of
// CallbackHandler): it renews the claim every lease/3 and cancels the
// hook's context when renewal reports the claim lost, at once, or, by a
// timer of its own, a safety margin (lease/leaseMarginDivisor) before an
// unrenewed claim could lapse, so that a hook that stops on cancellation
// never overlaps the next claimant: a claim answered so late that it is
// past that margin already starts its hook cancelled. It runs on timers:
// nothing runs until the first renewal is due, so a hook shorter than
// lease/3 costs one timer and no goroutine.
type leaseKeeper struct {
	h      *CallbackHandler
	ctx    context.Context // the hook's
	origin origin          // where the event came from, for log lines
	d      Deduper
	key    string
	token  string
	// also is a claim renewed beside the event's own (nil: none).
	also   *heldClaim
	lease  time.Duration
	every  time.Duration
	margin time.Duration
	cancel context.CancelCauseFunc
	// completed is set once the hook committed the event's completion
	// itself (HookClaim.Completed): a renewal then finds the claim done,
	// which is no loss.
	completed *atomic.Bool

	mu        sync.Mutex
	stopped   bool
	heldUntil time.Time
	tick      *time.Timer // the next renewal
	guard     *time.Timer // the safety margin, armed at the first renewal
	lastErr   error       // the last failed renewal's, for the cause
}

// start starts keeping the claim of ev under token, held until heldUntil,
// and ev.also's beside it; ctx is the hook's, cancel cancels it.
func (k *leaseKeeper) start(ctx context.Context, h *CallbackHandler, o origin, d Deduper, ev event, token string, heldUntil time.Time, lease time.Duration, cancel context.CancelCauseFunc, completed *atomic.Bool) {
	k.h, k.ctx, k.origin, k.d, k.key, k.token, k.also = h, ctx, o, d, ev.key, token, ev.also
	k.lease, k.every, k.margin = lease, max(lease/3, 3*time.Millisecond), lease/leaseMarginDivisor
	k.cancel, k.completed, k.heldUntil = cancel, completed, heldUntil
	k.mu.Lock()
	k.tick = time.AfterFunc(k.every, k.renew)
	// A claim answered slowly can reach its margin before the first
	// renewal: the guard then starts now. One past its margin already
	// starts its hook cancelled, with a guard that counts as fired.
	left := time.Until(heldUntil) - k.margin
	switch {
	case left <= 0:
		k.guard = time.NewTimer(k.lease)
		k.guard.Stop()
	case left < k.every:
		k.guard = time.AfterFunc(left, k.lapse)
	}
	k.mu.Unlock()
	if left <= 0 {
		k.lapse()
	}
}

// renew extends the claim and schedules the next renewal: lease/3 later
// after a success, lease/30 after a failure. It stops once the hook has
// returned, its claim is lost, or it ran past HookTimeout (such a hook no
// longer holds the event); a hook cancelled by the safety margin is still
// renewed while it runs, since a renewal that succeeds late still holds the
// claim.
func (k *leaseKeeper) renew() {
	k.mu.Lock()
	if k.stopped || k.ctx.Err() != nil && !errors.Is(context.Cause(k.ctx), errLeaseMargin) {
		k.mu.Unlock()
		return
	}
	if k.guard == nil {
		k.guard = time.AfterFunc(time.Until(k.heldUntil)-k.margin, k.lapse)
	}
	k.mu.Unlock()
	sent := time.Now()
	ctx, done := context.WithTimeout(context.WithoutCancel(k.ctx), k.lease)
	err := k.d.Renew(ctx, k.key, k.token, k.lease)
	if err == nil && k.also != nil {
		err = k.d.Renew(ctx, k.also.key, k.also.token, k.lease)
	}
	done()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.completed.Load() {
		return
	}
	switch {
	case err == nil:
		k.heldUntil = sent.Add(k.lease)
		if k.guard.Stop() { // once fired, a cancelled hook stays cancelled
			k.guard.Reset(time.Until(k.heldUntil) - k.margin)
		}
		k.tick.Reset(k.every)
	case errors.Is(err, ErrClaimLost):
		k.h.logAt(k.ctx, k.origin, slog.LevelError, "claim lost while the hook ran; cancelling the hook", "key", k.key)
		k.cancel(fmt.Errorf("paygate: callback claim lost while the hook ran: %w", err))
	default:
		k.lastErr = err
		k.h.logAt(k.ctx, k.origin, slog.LevelWarn, "claim renewal failed; trying again", "key", k.key, "err", err)
		k.tick.Reset(max(k.every/10, time.Millisecond))
	}
}

// lapse cancels the hook: its claim was not renewed before the margin.
func (k *leaseKeeper) lapse() {
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	last := k.lastErr
	k.mu.Unlock()
	if last == nil {
		last = errors.New("no renewal answered")
	}
	cause := fmt.Errorf("%w (last renewal error: %w)", errLeaseMargin, last)
	k.h.logAt(k.ctx, k.origin, slog.LevelError, "claim not renewed before its safety margin; cancelling the hook", "key", k.key, "err", cause)
	k.cancel(cause)
}

// stop ends the keeping once the hook has returned. A renewal in flight
// finishes on its own and changes nothing.
func (k *leaseKeeper) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	k.tick.Stop()
	if k.guard != nil {
		k.guard.Stop()
	}
}
