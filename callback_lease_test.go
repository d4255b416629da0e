package paygate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
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
	steps       []renewStep
	after       error
	finishAfter int

	mu    sync.Mutex
	calls int
	used  chan struct{}
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

// The lease path keeps a claim exactly as long as the store holds it. A
// renewal's new deadline counts from when it was sent, not from when its
// (slow) answer came, nor from the claim: once renewals then fail, the
// hook is cancelled while the store still holds the claim, so no other
// delivery can take the event before the hook is told to stop. A failed
// renewal is retried soon (a tenth of the renewal period), so renewals
// that fail, recover and fail again keep the hook running past several
// leases. The store's deadlines are real time: a late timer can only
// cancel a hook early (a pass), and the slow renewal answers a twelfth of
// the lease before its guard would fire, so that a deadline counted from
// the answer is seen.
func TestCallbackLeaseRenewalTiming(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	down := errors.New("store down")
	tests := []struct {
		name  string
		lease time.Duration
		steps []renewStep
		after error // every renewal past the steps
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
			name: "renewals fail, recover, fail again", lease: 1200 * time.Millisecond,
			steps:       []renewStep{{err: down}, {err: down}, {}, {err: down}, {err: down}, {}, {err: down}, {err: down}, {}, {}},
			finishAfter: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := &renewSchedule{steps: tt.steps, after: tt.after, finishAfter: tt.finishAfter, used: make(chan struct{})}
			var cancelled bool
			var cause error
			var rival ClaimResult
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: tt.lease, Logger: slog.New(slog.DiscardHandler),
				Fulfil: func(ctx context.Context, cb *Callback) error {
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
				}}
			code := serve(h, signedRequest(t, key, callbackFields("INV-L", "GWL", StatusSuccess, "00"))).Code
			require.Equal(t, tt.wantCancelled, cancelled, "cause: %v", cause)
			if !tt.wantCancelled {
				require.Equal(t, http.StatusOK, code)
				return
			}
			require.Equal(t, http.StatusInternalServerError, code)
			require.ErrorIs(t, cause, errLeaseMargin)
			require.NotEqual(t, ClaimAcquired, rival.State, "the hook was cancelled only after its claim had lapsed in the store")
		})
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
func TestFailedReleaseIsRetried(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	d := &flakyRelease{failures: 3}
	var calls int
	var mu sync.Mutex
	var logs strings.Builder
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Fulfil: func(context.Context, *Callback) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return errors.New("the merchant's database hiccuped")
			}
			return nil
		}}
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
