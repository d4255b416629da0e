package watch_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/watch"
)

// A replica whose hold is lost mid-lookup (its renewals too slow: the
// hold lapsed and replica b took the order) acts on nothing its cut-short
// lookup saw: b, which holds the order, looked it up and gave it up at
// its maximum age once; a neither gives it up again nor counts a
// reschedule, though its lookup "failed" past MaxAge and its grace.
func TestWatchLostHoldActsOnNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		age    time.Duration // of the order when a takes it
		a, b   watch.Pass
		gaveUp int32
	}{
		{name: "young order", age: 5 * time.Minute, a: watch.Pass{Checked: 1}, b: watch.Pass{Checked: 1, Rescheduled: 1}},
		{name: "past its maximum age and grace", age: watch.DefaultMaxAge + 25*time.Hour, a: watch.Pass{Checked: 1},
			b: watch.Pass{Checked: 1, GivenUp: 1}, gaveUp: 1},
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
				var gaveUp atomic.Int32
				onGiveUp := func(context.Context, watch.Order, paygate.ReconcileEntry) error { gaveUp.Add(1); return nil }
				store := &watch.MemoryStore{}
				a := &watch.Watch{Handler: h, Client: newClient(&ctxLookup{d: 3 * time.Minute}),
					Store: flakyHold{store, 30 * time.Second, new(atomic.Int32)}, OnGiveUp: onGiveUp, Logger: slog.New(slog.DiscardHandler)}
				b := &watch.Watch{Handler: h, Client: newClient(&ctxLookup{}), Store: store, OnGiveUp: onGiveUp,
					Logger: slog.New(slog.DiscardHandler)}
				ctx := context.Background()
				require.NoError(t, a.Await(ctx, "INV-1"))
				time.Sleep(tc.age)

				type result struct {
					p   watch.Pass
					err error
				}
				done := make(chan result, 1) // buffered: a failing test never leaves a sender behind
				go func() { p, err := a.Step(ctx); done <- result{p, err} }()
				time.Sleep(watch.DefaultLease + time.Second) // a's first renewal still on its way
				p, err := b.Step(ctx)
				require.NoError(t, err)
				require.Equal(t, tc.b, p, "replica b, which took the lapsed hold")
				require.Equal(t, result{p: tc.a}, <-done, "replica a, whose hold was lost")
				require.Equal(t, tc.gaveUp, gaveUp.Load(), "OnGiveUp calls")
			})
		})
	}
}
