package paygate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// renewStep is one renewal of a renewSchedule: how long it takes after
// the store renewed the claim, or the error it answers instead.
type renewStep struct {
	delay time.Duration
	err   error
}

// renewSchedule is a MemoryDeduper whose renewals follow steps, one a
// call; past the steps every renewal answers after. A slow step renews the
// claim in the store at once and answers only after its delay, so the
// store's deadline counts from when the renewal was sent. used is closed
// once finishAfter renewals were answered (0: never).
type renewSchedule struct {
	MemoryDeduper
	claimDelay  time.Duration // a claim is taken at once, answered after it
	steps       []renewStep
	after       error
	finishAfter int

	mu    sync.Mutex
	calls int
	used  chan struct{}
}

func (d *renewSchedule) Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error) {
	res, err := d.MemoryDeduper.Claim(ctx, key, lease)
	time.Sleep(d.claimDelay)
	return res, err
}

func (d *renewSchedule) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	d.mu.Lock()
	step := renewStep{err: d.after}
	if d.calls < len(d.steps) {
		step = d.steps[d.calls]
	}
	d.calls++
	n := d.calls
	d.mu.Unlock()
	if n == d.finishAfter {
		defer close(d.used)
	}
	if step.err != nil {
		return step.err
	}
	err := d.MemoryDeduper.Renew(ctx, key, token, lease)
	time.Sleep(step.delay)
	return err
}

// newKeptClaim is a claim whose hook runs on the lease path, with timers
// that never fire within a test, as keep leaves it; cause reads why its
// hook was cancelled.
func newKeptClaim(t *testing.T) (c *claim, cause func() error) {
	h := &CallbackHandler{Logger: slog.New(slog.DiscardHandler), Deduper: &renewSchedule{used: make(chan struct{})}}
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	c = &claim{d: h.deduper(), log: h.newEvent(&Callback{RefNo: "INV-K"}, origin{source: SourceLookup}).log, key: "fulfil|INV-K", lease: time.Hour, renewed: true,
		hook: ctx, cancel: cancel, every: time.Hour, margin: time.Hour / 4, heldUntil: time.Now().Add(time.Hour),
		tick: time.NewTimer(time.Hour), guard: time.NewTimer(time.Hour)}
	return c, func() error { return context.Cause(ctx) }
}

// lapse cancels the hook with the margin's cause and the last renewal's
// error, and gives the claim's mutex back.
func TestClaimLapseCancelsWithItsCause(t *testing.T) {
	c, cause := newKeptClaim(t)
	c.lastErr = errors.New("store down")
	c.lapse()
	require.ErrorIs(t, cause(), errLeaseMargin)
	require.ErrorContains(t, cause(), "store down")
	require.True(t, c.mu.TryLock(), "lapse kept the claim's mutex")
}

// Once the hook returned (stopKeeping), its timers are stopped, and a
// renewal or a lapse that still comes does nothing: no store call, no
// cancellation, the mutex given back.
func TestClaimStoppedKeepsNothing(t *testing.T) {
	c, cause := newKeptClaim(t)
	c.stopKeeping()
	require.False(t, c.tick.Stop(), "the renewal timer still ran")
	require.False(t, c.guard.Stop(), "the guard still ran")
	c.renew()
	require.True(t, c.mu.TryLock(), "renew kept the claim's mutex")
	c.mu.Unlock()
	c.lapse()
	require.NoError(t, cause())
	require.Zero(t, c.d.(*renewSchedule).calls, "renewed after the hook returned")
	require.True(t, c.mu.TryLock(), "the claim's mutex was kept")
}

// clockedRenew is a MemoryDeduper that records, on the clock, when each
// renewal and release came (since start); its renewals follow steps (an
// error fails one; past the steps they go through) and used is closed at
// the finishAfter-th; every release fails while failReleases is set.
type clockedRenew struct {
	MemoryDeduper
	start        time.Time
	steps        []error
	finishAfter  int
	failReleases bool
	used         chan struct{}

	mu               sync.Mutex
	renews, releases []time.Duration
}

func (d *clockedRenew) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	d.mu.Lock()
	n := len(d.renews)
	d.renews = append(d.renews, time.Since(d.start))
	d.mu.Unlock()
	if n+1 == d.finishAfter {
		defer close(d.used)
	}
	if n < len(d.steps) && d.steps[n] != nil {
		return d.steps[n]
	}
	return d.MemoryDeduper.Renew(ctx, key, token, lease)
}

func (d *clockedRenew) Release(ctx context.Context, key, token string) error {
	d.mu.Lock()
	d.releases = append(d.releases, time.Since(d.start))
	d.mu.Unlock()
	if d.failReleases {
		return errors.New("store unreachable")
	}
	return d.MemoryDeduper.Release(ctx, key, token)
}

// bubble runs f in a synctest bubble, and fails the test if the bubble has
// not ended within 5 s of real time (its work takes milliseconds): a
// goroutine blocked on a mutex is not durably blocked, so the bubble's
// clock then stands still, forever.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		synctest.Test(t, f)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // a bound, not a measure
		t.Fatal("the synctest bubble did not end within 5 s: a goroutine is stuck outside its clock (a mutex kept?)")
	}
}

// inBubble is f as a subtest's function, run in a bubble.
func inBubble(f func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		bubble(t, f)
	}
}

// The lease path's schedule, on synctest's clock (exact, whatever the
// machine's load): a claim is renewed every lease/3, 3 ms at least, counted
// from the last renewal's answer; a failed renewal is retried lease/30
// later, 1 ms at least; a failed release is retried from 100 ms doubling
// to 500 ms while its lease lasts.
func TestCallbackLeaseScheduleOnTheClock(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	down := errors.New("store down")
	for _, tc := range []struct {
		name  string
		lease time.Duration
		steps []error
		want  []time.Duration // when each renewal came, from the claim
	}{
		{name: "a third of the lease; a thirtieth after a failure", lease: 3 * time.Second, steps: []error{nil, down, down, nil, nil},
			want: []time.Duration{time.Second, 2 * time.Second, 2100 * time.Millisecond, 2200 * time.Millisecond, 3200 * time.Millisecond}},
		{name: "3 ms and 1 ms at least", lease: 6 * time.Millisecond, steps: []error{nil, down, nil},
			want: []time.Duration{3 * time.Millisecond, 6 * time.Millisecond, 7 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				d := &clockedRenew{start: time.Now(), steps: tc.steps, finishAfter: len(tc.want), used: make(chan struct{})}
				h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: tc.lease, Logger: slog.New(slog.DiscardHandler),
					Fulfil: FulfilFunc(func(ctx context.Context, cb *Callback) error {
						select {
						case <-d.used:
							return nil
						case <-ctx.Done():
							return context.Cause(ctx)
						}
					})}
				require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-C", "GWC", StatusSuccess, "00"))).Code)
				require.Equal(t, tc.want, d.renews)
			})
		})
	}
	t.Run("release retries", func(t *testing.T) {
		bubble(t, func(t *testing.T) {
			d := &clockedRenew{start: time.Now(), failReleases: true}
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Logger: slog.New(slog.DiscardHandler)}
			c := &claim{d: d, log: h.newEvent(&Callback{RefNo: "INV-C"}, origin{source: SourceLookup}).log, key: "fulfil|INV-C", heldUntil: d.start.Add(10 * time.Second)}
			c.release(context.Background())
			synctest.Wait()
			time.Sleep(11 * time.Second) // the lease lapses: the retries end
			synctest.Wait()
			ms := func(n ...int) []time.Duration {
				var out []time.Duration
				for _, m := range n {
					out = append(out, time.Duration(m)*time.Millisecond)
				}
				return out
			}
			require.Equal(t, ms(0, 100, 300, 700, 1200, 1700, 2200, 2700, 3200, 3700, 4200, 4700, 5200, 5700, 6200, 6700, 7200, 7700, 8200, 8700, 9200, 9700), d.releases)
		})
	})
}

// The lease path keeps a claim exactly as long as the store holds it. A
// renewal's new deadline counts from when it was sent, not from when its
// (slow) answer came, nor from the claim: once renewals then fail, the
// hook is cancelled while the store still holds the claim, so no other
// delivery can take the event before the hook is told to stop. A failed
// renewal is retried soon (a tenth of the renewal period), so renewals
// that fail, recover and fail again keep the hook running past several
// leases. On synctest's clock the schedule is exact: the slow renewal
// answers a twelfth of the lease before its guard would fire, so that a
// deadline counted from the answer is seen.
func TestCallbackLeaseRenewalTiming(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	down := errors.New("store down")
	tests := []struct {
		name       string
		lease      time.Duration
		claimDelay time.Duration
		steps      []renewStep
		after      error // every renewal past the steps
		// finishAfter: the hook returns once this many renewals were
		// answered; 0: it waits for its cancellation.
		finishAfter   int
		wantCancelled bool
	}{
		{
			// Renewed a third of a lease in, answered a third later (the
			// store renewed at once), then down: the claim lapses in the
			// store a lease after the renewal was sent; the hook must be
			// cancelled before, a margin (a quarter lease) earlier.
			name: "slow renewal then failures", lease: 3 * time.Second,
			steps: []renewStep{{delay: time.Second}}, after: down, wantCancelled: true,
		},
		{
			// Claimed at once, answered 0.7 lease later, then down: the
			// claim reaches its margin before its first renewal is due, so
			// the guard is armed at once, not at that renewal (which would
			// come after the claim lapsed in the store).
			name: "slow claim then failures", lease: 3 * time.Second,
			claimDelay: 2100 * time.Millisecond, after: down, wantCancelled: true,
		},
		{
			name: "renewals fail, recover, fail again", lease: 1200 * time.Millisecond,
			steps:       []renewStep{{err: down}, {err: down}, {}, {err: down}, {err: down}, {}, {err: down}, {err: down}, {}, {}},
			finishAfter: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			d := &renewSchedule{claimDelay: tt.claimDelay, steps: tt.steps, after: tt.after, finishAfter: tt.finishAfter, used: make(chan struct{})}
			var cancelled bool
			var cause error
			var rival ClaimResult
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: tt.lease, Logger: slog.New(slog.DiscardHandler),
				Fulfil: FulfilFunc(func(ctx context.Context, cb *Callback) error {
					select {
					case <-ctx.Done():
						// At the cancellation the store must still hold the
						// claim: another delivery's claim is refused.
						cancelled, cause = true, context.Cause(ctx)
						var err error
						rival, err = d.MemoryDeduper.Claim(context.Background(), fulfilKey(cb.RefNo), tt.lease)
						require.NoError(t, err)
						return ctx.Err()
					case <-d.used:
						return nil
					case <-time.After(10 * tt.lease): // a bound, not a measure
						return errors.New("the hook was neither cancelled nor done within ten leases")
					}
				})}
			code := serveWithin(t, h, signedRequest(t, key, callbackFields("INV-L", "GWL", StatusSuccess, "00")))
			require.Equal(t, tt.wantCancelled, cancelled, "cause: %v", cause)
			if !tt.wantCancelled {
				require.Equal(t, http.StatusOK, code)
				return
			}
			require.Equal(t, http.StatusInternalServerError, code)
			require.ErrorIs(t, cause, errLeaseMargin)
			require.NotEqual(t, ClaimAcquired, rival.State, "the hook was cancelled only after its claim had lapsed in the store")
		}))
	}
}

// flakyRelease is a MemoryDeduper whose first failures releases fail, as
// a store does while unreachable.
type flakyRelease struct {
	MemoryDeduper
	mu       sync.Mutex
	failures int
	releases int
}

func (d *flakyRelease) Release(ctx context.Context, key, token string) error {
	d.mu.Lock()
	d.releases++
	fail := d.releases <= d.failures
	d.mu.Unlock()
	if fail {
		return errors.New("store unreachable")
	}
	return d.MemoryDeduper.Release(ctx, key, token)
}

// A release that fails while the store is unreachable is retried until it
// succeeds, so the next delivery of the event is served once the store is
// back, not a whole lease later (here a lease of a minute: without the
// retries every delivery within the test's bound gets 503).
func TestFailedReleaseIsRetried(t *testing.T) { bubble(t, failedReleaseIsRetried) }

func failedReleaseIsRetried(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	d := &flakyRelease{failures: 3}
	var calls int
	var mu sync.Mutex
	var logs strings.Builder
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return errors.New("the merchant's database hiccuped")
			}
			return nil
		})}
	deliver := func() int {
		return serve(h, signedRequest(t, key, callbackFields("INV-R", "GWR", StatusSuccess, "00"))).Code
	}
	require.Equal(t, http.StatusInternalServerError, deliver())
	code := deliver()
	for deadline := time.Now().Add(10 * time.Second); code != http.StatusOK && time.Now().Before(deadline); code = deliver() {
		require.Equal(t, http.StatusServiceUnavailable, code, "in flight until the release goes through")
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, http.StatusOK, code, "the retried release let the next delivery fulfil")
	require.Equal(t, 2, calls)
	require.Contains(t, logs.String(), "store unreachable", "the failed release is logged with its error")
	d.mu.Lock()
	defer d.mu.Unlock()
	require.Equal(t, 4, d.releases, "three failed releases, then one that went through")
}

// serveWithin is serve for a test of the lease path: a handler that hangs
// (a lock never given back) fails the test within 20 s instead of at the
// test binary's timeout.
func serveWithin(t *testing.T, h http.Handler, r *http.Request) int {
	t.Helper()
	code := make(chan int, 1)
	go func() { code <- serve(h, r).Code }()
	select {
	case c := <-code:
		return c
	case <-time.After(20 * time.Second): // a bound, not a measure
		t.Fatal("the handler did not answer within 20 s")
		return 0
	}
}

// outageRenew is a MemoryDeduper whose renewals fail while down is set,
// and that tells each renewal that went through on renewed.
type outageRenew struct {
	MemoryDeduper
	down    atomic.Bool
	renewed chan struct{}
}

func (d *outageRenew) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	if d.down.Load() {
		return errors.New("store down")
	}
	err := d.MemoryDeduper.Renew(ctx, key, token, lease)
	if err == nil {
		select {
		case d.renewed <- struct{}{}:
		default:
		}
	}
	return err
}

// waitRenewals waits for n renewals that went through, up to bound.
func (d *outageRenew) waitRenewals(n int, bound time.Duration) error {
	timeout := time.After(bound)
	for i := 0; i < n; i++ {
		select {
		case <-d.renewed:
		case <-timeout: // a bound, not a measure
			return fmt.Errorf("%d renewals of %d went through within %v", i, n, bound)
		}
	}
	return nil
}

// A hook cancelled by the safety margin (its renewals failing) still holds
// its claim while it runs: once the store answers again its renewals go
// through, and no other delivery takes the event.
func TestCallbackMarginCancelledHookStillRenewed(t *testing.T) {
	bubble(t, callbackMarginCancelledHookStillRenewed)
}

func callbackMarginCancelledHookStillRenewed(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	const lease = 1200 * time.Millisecond
	d := &outageRenew{renewed: make(chan struct{}, 100)}
	d.down.Store(true)
	var cause, renewals error
	var rival ClaimResult
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: lease, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(ctx context.Context, cb *Callback) error {
			<-ctx.Done()
			cause = context.Cause(ctx)
			d.down.Store(false) // the store is back; the hook is still running
			renewals = d.waitRenewals(2, 5*lease)
			rival, _ = d.MemoryDeduper.Claim(context.Background(), fulfilKey(cb.RefNo), lease)
			return nil
		})}
	serveWithin(t, h, signedRequest(t, key, callbackFields("INV-M", "GWM", StatusSuccess, "00")))
	require.ErrorIs(t, cause, errLeaseMargin)
	require.NoError(t, renewals, "a hook cancelled by the margin is still renewed")
	require.Equal(t, ClaimBusy, rival.State)
}

// A hook that runs past HookTimeout no longer holds its event: its claim is
// not renewed, lapses, and another delivery may take it.
func TestCallbackHookPastItsTimeoutNotRenewed(t *testing.T) {
	bubble(t, callbackHookPastItsTimeoutNotRenewed)
}

func callbackHookPastItsTimeoutNotRenewed(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	const lease = 600 * time.Millisecond
	d := &outageRenew{renewed: make(chan struct{}, 100)}
	var rival ClaimResult
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: lease, HookTimeout: lease / 4, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(ctx context.Context, cb *Callback) error {
			// Ignores its cancellation: takes the event over as another
			// delivery would, once the claim lapsed.
			for bound := time.Now().Add(10 * lease); time.Now().Before(bound); time.Sleep(lease / 20) {
				if rival, _ = d.MemoryDeduper.Claim(context.Background(), fulfilKey(cb.RefNo), lease); rival.State == ClaimAcquired {
					break
				}
			}
			return nil
		})}
	serveWithin(t, h, signedRequest(t, key, callbackFields("INV-T", "GWT", StatusSuccess, "00")))
	require.Equal(t, ClaimAcquired, rival.State, "the claim of a hook past HookTimeout was still renewed after ten leases")
}

// The hold on a refNo's fulfilment beside a long OnStatus is renewed with
// the status claim, in the store and in the claim's own deadline, so that
// a failed release of the hold is retried as long as the store holds it.
func TestCallbackStatusHoldRenewedWithTheStatusClaim(t *testing.T) {
	bubble(t, callbackStatusHoldRenewedWithTheStatusClaim)
}

func callbackStatusHoldRenewedWithTheStatusClaim(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	const lease = 300 * time.Millisecond
	d := &outageRenew{renewed: make(chan struct{}, 100)}
	var renewals error
	var rival ClaimResult
	var heldUntil, holdUntil time.Time
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: lease, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil }),
		OnStatus: func(ctx context.Context, cb *Callback) error {
			renewals = d.waitRenewals(8, 20*lease) // four renewals of both: past the first lease
			rival, _ = d.MemoryDeduper.Claim(context.Background(), fulfilKey(cb.RefNo), lease)
			c := ctx.Value(hookClaimKey{}).(*claim)
			c.mu.Lock()
			heldUntil, holdUntil = c.heldUntil, c.also.heldUntil
			c.mu.Unlock()
			return nil
		}}
	require.Equal(t, http.StatusOK, serveWithin(t, h, signedRequest(t, key, callbackFields("INV-H", "GWH", StatusPending, "09"))))
	require.NoError(t, renewals)
	require.Equal(t, ClaimBusy, rival.State, "the hold on the fulfilment lapsed while OnStatus ran")
	require.Equal(t, heldUntil, holdUntil, "the hold's deadline is the status claim's")
}

// A release that goes through at once is neither logged as failed nor
// retried.
func TestReleaseThatSucceedsIsNotRetried(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var logs strings.Builder
	d := &flakyRelease{}
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { return errors.New("the shop's database hiccuped") })}
	require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(t, key, callbackFields("INV-OK", "GWOK", StatusSuccess, "00"))).Code)
	require.NotContains(t, logs.String(), "dedupe release failed")
}

// Every store call's context ends with the call (its timer is given back),
// whatever the call: a claim, a completion, a release.
func TestStoreCallContextsEndWithTheirCall(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	d := &storeCtxDeduper{}
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error {
			if cb.RefNo == "INV-FAIL" {
				return errors.New("shop down")
			}
			return nil
		}),
		OnStatus: func(context.Context, *Callback) error { return nil }}
	require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-OK", "GW1", StatusSuccess, "00"))).Code)
	require.Equal(t, http.StatusInternalServerError, serve(h, signedRequest(t, key, callbackFields("INV-FAIL", "GW2", StatusSuccess, "00"))).Code)
	require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-P", "GW3", StatusPending, "09"))).Code)
	d.mu.Lock()
	defer d.mu.Unlock()
	require.GreaterOrEqual(t, len(d.ctxs), 6)
	for i, ctx := range d.ctxs {
		require.ErrorIs(t, ctx.Err(), context.Canceled, "call %d's context still open", i)
	}
}

// flakyComplete is a MemoryDeduper whose first completion fails without
// landing, as a store does while unreachable.
type flakyComplete struct {
	MemoryDeduper
	mu        sync.Mutex
	completes int
}

func (d *flakyComplete) Complete(ctx context.Context, key, token, result string) error {
	d.mu.Lock()
	d.completes++
	fail := d.completes == 1
	d.mu.Unlock()
	if fail {
		return errors.New("store unreachable")
	}
	return d.MemoryDeduper.Complete(ctx, key, token, result)
}

// A completion that fails after the hook ran (the store unreachable) gives
// the claim back: the event's next delivery runs at once (the lease path's
// at-least-once), where the claim held it off for a whole lease (here a
// minute) before. For a success and for a status event, whose order's
// success then follows at once too.
func TestFailedCompleteGivesTheClaimBack(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, status := range []Status{StatusSuccess, StatusPending, StatusFailed} {
		t.Run(string(status), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var runs atomic.Int32
				hook := func(context.Context, *Callback) error { runs.Add(1); return nil }
				h := &CallbackHandler{Keys: []Key{key}, Deduper: &flakyComplete{}, Lease: time.Minute, Logger: slog.New(slog.DiscardHandler),
					Fulfil: FulfilFunc(hook), OnStatus: hook}
				deliver := func(s Status) int {
					return serve(h, signedRequest(t, key, callbackFields("INV-F", "GWF", s, map[Status]string{StatusSuccess: "00"}[s]))).Code
				}
				require.Equal(t, http.StatusInternalServerError, deliver(status), "the completion failed")
				synctest.Wait()
				require.Equal(t, http.StatusOK, deliver(status), "the next delivery is handled at once")
				require.EqualValues(t, 2, runs.Load(), "the hook ran again: the lease path's at-least-once")
				if status != StatusSuccess {
					require.Equal(t, http.StatusOK, deliver(StatusSuccess), "the order's success is fulfilled at once")
				}
			})
		})
	}
}

// downRelease is a MemoryDeduper whose releases fail until back, as a
// store does while unreachable, and that notes when each was tried.
type downRelease struct {
	MemoryDeduper
	back  time.Time
	mu    sync.Mutex
	tried []time.Time
}

func (d *downRelease) Release(ctx context.Context, key, token string) error {
	now := time.Now()
	d.mu.Lock()
	d.tried = append(d.tried, now)
	d.mu.Unlock()
	if now.Before(d.back) {
		return errors.New("store unreachable")
	}
	return d.MemoryDeduper.Release(ctx, key, token)
}

// A release that keeps failing is retried until its claim's lease lapses
// by itself, and no longer: the retries stop by then, however long the
// store stays away (here it comes back ten leases later; a retry then
// would find a key another delivery may hold by now).
func TestFailedReleaseRetriedUntilTheLeaseLapses(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	const lease = time.Minute
	for _, tt := range []struct {
		name   string
		status Status
	}{
		{name: "a failed fulfilment's claim", status: StatusSuccess},
		{name: "a status's check of the fulfilment", status: StatusPending},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				start := time.Now()
				d := &downRelease{back: start.Add(10 * lease)}
				h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: lease, Logger: slog.New(slog.DiscardHandler),
					Fulfil: FulfilFunc(func(context.Context, *Callback) error { return errors.New("the shop's database hiccuped") })}
				serve(h, signedRequest(t, key, callbackFields("INV-D", "GWD", tt.status, map[Status]string{StatusSuccess: "00"}[tt.status])))
				time.Sleep(20 * lease)
				synctest.Wait()
				d.mu.Lock()
				defer d.mu.Unlock()
				require.Greater(t, len(d.tried), 1, "the failed release was retried")
				for i, at := range d.tried {
					require.False(t, at.After(start.Add(lease)), "release %d tried %v after the claim, past its lease of %v", i, at.Sub(start), lease)
				}
			})
		})
	}
}
