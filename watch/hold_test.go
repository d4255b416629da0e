package watch_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/watch"
)

// ctxLookup answers every lookup "not found" after a wait of d, unless
// the request's context ends first (a replica killed mid-lookup, a lookup
// cancelled); answered counts the lookups it answered.
type ctxLookup struct {
	d        time.Duration
	answered atomic.Int32
}

func (l *ctxLookup) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case <-time.After(l.d):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	l.answered.Add(1)
	return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"status":"NOT_FOUND","fpxrequest":null}`)), Request: r}, nil
}

// flakyHold is a Store whose renewals take a round trip of latency to
// land, the first fails of them failing (a database blip), not lost.
type flakyHold struct {
	watch.Store
	latency time.Duration
	fails   *atomic.Int32
}

func (s flakyHold) Hold(ctx context.Context, o watch.Order, until time.Time) error {
	time.Sleep(s.latency)
	if s.fails.Add(-1) >= 0 {
		return errors.New("connection reset")
	}
	return s.Store.Hold(ctx, o, until)
}

// With the default Lease, replica a's hold on the order it looks up (a
// lookup of minutes) is renewed well before it lapses, through a store a
// second away or one renewal failing, so replica b never takes the order
// meanwhile and a's lookup runs to its answer; once a dies mid-lookup, b
// checks the order within 30 s (issue 43: "back in seconds"), not minutes.
func TestWatchDefaultLeaseHoldsOnlyWhileTheReplicaLives(t *testing.T) {
	for _, tc := range []struct {
		name      string
		latency   time.Duration // of a's renewals
		failHolds int32         // a's first renewals that fail
		killAt    time.Duration // a dies this long into its lookup; 0: never
		bAt       time.Duration // b steps this long into a's lookup
		checked   int           // by b then
	}{
		{name: "renewed before it lapses through a slow store", latency: time.Second, bAt: 20*time.Second + 500*time.Millisecond},
		{name: "held through many leases", bAt: 2*time.Minute + 30*time.Second},
		{name: "a failed renewal is tried again, the lookup runs on", failHolds: 1, bAt: 30 * time.Second},
		{name: "a dead replica's order is checked within 30 s", killAt: 59 * time.Second, bAt: 89 * time.Second, checked: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				newClient := func(rt http.RoundTripper) *paygate.Client {
					c, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithAuthToken("tok"),
						paygate.WithReportsURL("http://127.0.0.1:9"), paygate.WithCheckoutURL("http://127.0.0.1:9"),
						paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}), paygate.WithAttemptTimeout(time.Hour),
						paygate.WithHTTPClient(&http.Client{Transport: rt}))
					require.NoError(t, err)
					return c
				}
				key, err := paygate.ParseKey("00000000-0000-0000-0000-000000000000")
				require.NoError(t, err)
				h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Logger: slog.New(slog.DiscardHandler), ReconcileInterval: -1,
					Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
				store := &watch.MemoryStore{}
				fails := new(atomic.Int32)
				fails.Store(tc.failHolds)
				slow := &ctxLookup{d: 3 * time.Minute}
				a := &watch.Watch{Handler: h, Client: newClient(slow), Store: flakyHold{store, tc.latency, fails},
					Logger: slog.New(slog.DiscardHandler)}
				b := &watch.Watch{Handler: h, Client: newClient(&ctxLookup{}), Store: store, Logger: slog.New(slog.DiscardHandler)}
				ctx := context.Background()
				require.NoError(t, a.Await(ctx, "INV-1"))
				time.Sleep(5 * time.Minute)

				actx, kill := context.WithCancel(ctx)
				defer kill()
				type result struct {
					p   watch.Pass
					err error
				}
				done := make(chan result, 1) // buffered: a failing test never leaves a sender behind
				go func() { p, err := a.Step(actx); done <- result{p, err} }()
				if tc.killAt > 0 {
					time.Sleep(tc.killAt)
					kill()
					<-done
					time.Sleep(tc.bAt - tc.killAt)
				} else {
					time.Sleep(tc.bAt)
				}
				p, err := b.Step(ctx)
				require.NoError(t, err)
				require.Equal(t, tc.checked, p.Checked, "checked by replica b")
				if tc.killAt == 0 {
					require.Equal(t, result{p: watch.Pass{Checked: 1, Rescheduled: 1}}, <-done)
					require.Equal(t, int32(1), slow.answered.Load(), "a's lookup ran to its answer")
				}
			})
		})
	}
}
