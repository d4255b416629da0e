package watch_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/watch"
)

// With the watch as the handler's Settler, an order its callback settled
// (paid, failed) leaves the watch then and costs no lookup at the
// sandbox; a pending callback settles nothing (the success after it may be
// lost), nor does a callback that never came.
func TestWatchSettledByItsCallbackCostsNoLookup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []gatewaytest.Option
		pay     paygate.Status
		extra   string
		settler bool
		lookups int // at the sandbox, over the first lookup's due time
		awaited int // after it
	}{
		{name: "paid, callback delivered", pay: paygate.StatusSuccess, settler: true},
		{name: "paid with extra data, callback delivered", pay: paygate.StatusSuccess, extra: "cart-1", settler: true},
		{name: "failed, callback delivered", pay: paygate.StatusFailed, settler: true},
		{name: "paid, callback lost", pay: paygate.StatusSuccess, settler: true,
			opts: []gatewaytest.Option{gatewaytest.WithCallbackLoss(func(string) bool { return true })}, lookups: 1},
		{name: "pending, callback delivered", pay: paygate.StatusSuccess, settler: true,
			opts:    []gatewaytest.Option{gatewaytest.WithLateSettlement(48*time.Hour, func(string) bool { return true })},
			lookups: 1, awaited: 1},
		{name: "paid, callback delivered, no Settler", pay: paygate.StatusSuccess, lookups: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newShop(t, tc.opts...)
			w := s.watch(&watch.MemoryStore{})
			if tc.settler {
				s.handler.Settler = w
			}
			s.order(t, w, "INV-1", tc.extra)
			require.NoError(t, s.sb.Pay("INV-1", tc.pay))
			s.sb.Settle()
			s.clock.Advance(5 * time.Minute)
			_, err := w.Step(context.Background())
			require.NoError(t, err)
			require.Len(t, s.sb.Lookups(), tc.lookups)
			left, err := w.List(context.Background(), 10)
			require.NoError(t, err)
			require.Len(t, left, tc.awaited)
			if tc.pay == paygate.StatusSuccess && tc.awaited == 0 {
				require.Len(t, s.fulfilled["INV-1"], 1)
			}
		})
	}
}

// Each retry of a lookup is paid from the fleet's budget: with every
// lookup answered 503, the requests at the sandbox stay within Burst
// (the bucket refills by nothing on the test clock); before, the
// Client's retries landed on top, four requests per lookup.
func TestWatchBudgetCountsRetries(t *testing.T) {
	s := newShop(t, gatewaytest.WithLookupFailures(func(string) bool { return true }))
	client, err := s.sb.Client(paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}))
	require.NoError(t, err)
	w := s.watch(&watch.MemoryStore{})
	w.Client, w.Budget = client, watch.Budget{PerSecond: 0.001, Burst: 6}
	for _, ref := range []string{"INV-1", "INV-2", "INV-3", "INV-4"} {
		s.order(t, w, ref, "")
	}
	s.clock.Advance(5 * time.Minute)
	_, err = w.Step(context.Background())
	require.NoError(t, err)
	require.Len(t, s.sb.Lookups(), 6, "requests at the sandbox: the budget's burst, retries counted")
	left, err := w.List(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, left, 4)
	checks := 0
	for _, o := range left {
		checks += o.Checks
	}
	// One lookup ran its four attempts; the next paid two, and the one it
	// could not pay put it back unchecked.
	require.Equal(t, 1, checks)
}

// slowLookup answers every lookup "not found" after a wait of its own
// (fake time inside a synctest bubble).
type slowLookup time.Duration

func (d slowLookup) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(time.Duration(d))
	return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"status":"NOT_FOUND","fpxrequest":null}`)), Request: r}, nil
}

// A replica renews its short hold while its lookup runs: a lookup three
// leases long keeps the order from the other replica throughout, and once
// it ends the order is rescheduled, not taken twice. A replica that dies
// holding an order (no renewal) frees it one lease later.
func TestWatchHoldIsRenewedWhileTheLookupRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease = 20 * time.Second
		client, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithAuthToken("tok"),
			paygate.WithReportsURL("http://127.0.0.1:9"), paygate.WithCheckoutURL("http://127.0.0.1:9"),
			paygate.WithHTTPClient(&http.Client{Transport: slowLookup(3 * lease)}))
		require.NoError(t, err)
		key, err := paygate.ParseKey("00000000-0000-0000-0000-000000000000")
		require.NoError(t, err)
		h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Logger: slog.New(slog.DiscardHandler), ReconcileInterval: -1,
			Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
		store := &watch.MemoryStore{}
		a := &watch.Watch{Handler: h, Client: client, Store: store, Logger: slog.New(slog.DiscardHandler)}
		b := &watch.Watch{Handler: h, Client: client, Store: store, Logger: slog.New(slog.DiscardHandler)}
		ctx := context.Background()
		require.NoError(t, a.Await(ctx, "INV-1"))
		time.Sleep(5 * time.Minute)
		type result struct {
			p   watch.Pass
			err error
		}
		done := make(chan result, 2) // buffered: a failing test never leaves a sender behind
		go func() { p, err := a.Step(ctx); done <- result{p, err} }()
		for range 5 {
			time.Sleep(lease / 2)
			p, err := b.Step(ctx)
			require.NoError(t, err)
			require.Zero(t, p.Checked, "held by the replica looking it up")
		}
		require.Equal(t, result{p: watch.Pass{Checked: 1, Rescheduled: 1}}, <-done)

		// A replica that dies holding it: free one lease later.
		time.Sleep(time.Hour)
		_, err = store.Take(ctx, time.Now(), 1, watch.DefaultLease)
		require.NoError(t, err)
		p, err := b.Step(ctx)
		require.NoError(t, err)
		require.Zero(t, p.Checked)
		time.Sleep(watch.DefaultLease)
		go func() { p, err := b.Step(ctx); done <- result{p, err} }()
		require.Equal(t, result{p: watch.Pass{Checked: 1, Rescheduled: 1}}, <-done)
	})
}
