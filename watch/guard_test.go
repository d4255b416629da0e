package watch_test

// Guards of the watch's promises that no other test held (issue 42): each
// fails on the defect its comment names.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/watch"
)

// lookupShaper passes every request to the sandbox and, while held is
// set, turns a lookup's success into a status nobody can prove, so that
// the callback path holds the record back (docs/assumptions.md
// A-reconcile); while failing is set, it fails every request as an
// unreachable gateway would.
type lookupShaper struct {
	held, failing atomic.Bool
}

func (l *lookupShaper) RoundTrip(r *http.Request) (*http.Response, error) {
	if l.failing.Load() {
		return nil, io.ErrUnexpectedEOF
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !l.held.Load() || r.Method != http.MethodGet {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	body = bytes.ReplaceAll(body, []byte(`"status":"success"`), []byte(`"status":"SUCCESS"`))
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// shapedClient is s's client on a lookupShaper.
func shapedClient(t *testing.T, s *shop) (*paygate.Client, *lookupShaper) {
	t.Helper()
	l := &lookupShaper{}
	c, err := s.sb.Client(paygate.WithHTTPClient(&http.Client{Transport: l}), paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	return c, l
}

// completing is a Deduper whose first Complete waits until release is
// closed, having closed entered: a delivery held there has run Fulfil and
// still holds the event's claim, as one whose fulfilment is under way.
type completing struct {
	paygate.Deduper
	entered, release chan struct{}
	once             sync.Once
}

func (d *completing) Complete(ctx context.Context, key, token, result string) error {
	d.once.Do(func() {
		close(d.entered)
		<-d.release
	})
	return d.Deduper.Complete(ctx, key, token, result)
}

// An order whose own callback is being fulfilled at the moment of its
// last lookup (at its maximum age) is not given up: the lookup meets the
// claim in flight, the watch waits as its doc promises, and its next
// lookup finds the order fulfilled, once. Defect caught: OutcomeInFlight
// not taken as transient (the order given up at its maximum age, or
// counted as settled).
func TestWatchWaitsForACallbackInFlightAtMaxAge(t *testing.T) {
	s := newShop(t)
	gate := &completing{Deduper: &paygate.MemoryDeduper{}, entered: make(chan struct{}), release: make(chan struct{})}
	s.handler.Deduper = gate
	// The sandbox's signed callback goes to a sink that keeps it, for the
	// test to deliver to the shop when it chooses.
	sent := make(chan url.Values, 1)
	sink := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.ParseForm() == nil && r.PostForm.Get("signature") != "" {
			select {
			case sent <- r.PostForm:
			default: // a retry: the first is kept
			}
		}
	}))
	t.Cleanup(sink.Close)
	w := s.watch(&watch.MemoryStore{})
	w.MaxAge, w.Schedule = time.Hour, []time.Duration{30 * time.Minute}
	ctx := context.Background()
	o := paygate.Order{RefNo: "INV-1", Amount: 1000, Email: "a@example.com", ReturnURL: sink.URL}
	require.NoError(t, w.AwaitOrder(ctx, o))
	_, err := s.client.CreateOrder(ctx, o)
	require.NoError(t, err)
	step := func(d time.Duration) watch.Pass {
		t.Helper()
		s.clock.Advance(d)
		p, err := w.Step(ctx)
		require.NoError(t, err)
		return p
	}
	require.Equal(t, watch.Pass{Checked: 1, Rescheduled: 1}, step(30*time.Minute), "pending at 30 minutes")

	require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
	s.sb.Settle()
	form := <-sent
	// Its callback reaches the shop, and is being fulfilled at the last lookup.
	delivered := make(chan int, 1)
	go func() {
		r := httptest.NewRequest(http.MethodPost, "/return", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, r)
		delivered <- rec.Code
	}()
	<-gate.entered
	p := step(30 * time.Minute)
	require.Equal(t, watch.Pass{Checked: 1, Rescheduled: 1}, p, "at its maximum age, its callback in flight: kept")
	left, err := w.List(ctx, 10)
	require.NoError(t, err)
	require.Len(t, left, 1, "still awaited")

	close(gate.release)
	require.Equal(t, http.StatusOK, <-delivered)
	p = step(30 * time.Minute)
	require.Equal(t, watch.Pass{Checked: 1, Settled: 1}, p, "the next lookup finds it fulfilled")
	require.Empty(t, s.gaveUp, "never given up")
	require.Len(t, s.fulfilled["INV-1"], 1, "fulfilled once, by its callback")
	left, err = w.List(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, left)
}

// A paid order whose lookups are held back (a record the SDK cannot
// trust) stays in the watch and is looked up again: trusted later, it is
// fulfilled; held back to the end, it is given up at its maximum age with
// that outcome. It is never counted as settled while held back. Defects
// caught: OutcomeHeldBack among the settled outcomes (the order leaves the
// watch unfulfilled and untold), or among the transient ones (given up a
// day late).
func TestWatchKeepsAHeldBackOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		heldUntil time.Duration // how long the lookups are held back
	}{
		{name: "trusted at the third lookup", heldUntil: 50 * time.Minute},
		{name: "held back to the end", heldUntil: 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
			client, shaper := shapedClient(t, s)
			w := s.watch(&watch.MemoryStore{})
			w.Client, w.MaxAge, w.Schedule = client, time.Hour, []time.Duration{20 * time.Minute}
			s.order(t, w, "INV-1", "")
			require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
			shaper.held.Store(true)
			ctx := context.Background()
			var total watch.Pass
			for s.clock.Now().Before(start.Add(2 * time.Hour)) {
				s.clock.Advance(20 * time.Minute)
				shaper.held.Store(s.clock.Now().Sub(start) < tc.heldUntil)
				p, err := w.Step(ctx)
				require.NoError(t, err)
				total.Checked += p.Checked
				total.Settled += p.Settled
				total.Rescheduled += p.Rescheduled
				total.GivenUp += p.GivenUp
			}
			left, err := w.List(ctx, 10)
			require.NoError(t, err)
			require.Empty(t, left)
			if tc.heldUntil < time.Hour {
				require.Equal(t, watch.Pass{Checked: 3, Rescheduled: 2, Settled: 1}, total)
				require.Len(t, s.fulfilled["INV-1"], 1)
				require.Empty(t, s.gaveUp)
				return
			}
			require.Equal(t, watch.Pass{Checked: 3, Rescheduled: 2, GivenUp: 1}, total, "looked up at 20, 40 and 60 minutes")
			require.Empty(t, s.fulfilled["INV-1"])
			require.Equal(t, map[string]paygate.Outcome{"INV-1": paygate.OutcomeHeldBack}, s.gaveUp)
			require.Equal(t, start.Add(time.Hour), s.gaveUpAt["INV-1"], "given up at its maximum age")
		})
	}
}

// A paid order the watch finds only after CallbackHandler.MaxTxnAge (its
// lookups failed until then: the gateway unreachable for 31 days, its
// callbacks lost) is fulfilled: a lookup is the gateway's own answer, not
// a replay, and the replay bound holds back callbacks only. Defect caught:
// the bound applied to every source (a reconciliation's old success held
// back, the order given up unfulfilled).
func TestWatchFulfilsAnOldPaymentFoundByALookup(t *testing.T) {
	s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	client, shaper := shapedClient(t, s)
	w := s.watch(&watch.MemoryStore{})
	w.Client, w.MaxAge = client, 40*24*time.Hour
	s.order(t, w, "INV-1", "")
	require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
	shaper.failing.Store(true)
	ctx := context.Background()
	for s.clock.Now().Before(start.Add(50 * 24 * time.Hour)) {
		s.clock.Advance(6 * time.Hour)
		shaper.failing.Store(s.clock.Now().Sub(start) < paygate.DefaultMaxTxnAge+24*time.Hour)
		_, err := w.Step(ctx)
		require.NoError(t, err)
	}
	require.Len(t, s.fulfilled["INV-1"], 1, "fulfilled by the first lookup that reached the gateway")
	require.Greater(t, s.fulfilled["INV-1"][0].Sub(start), paygate.DefaultMaxTxnAge, "found past the replay bound")
	require.Empty(t, s.gaveUp)
	left, err := w.List(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, left)
}
