package guides

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/watch"
)

// newWatch is the guide's pending watch.
func newWatch(handler *paygate.CallbackHandler, client *paygate.Client) *watch.Watch {
	// code: watch
	// handler: the one serving callbacks, or one sharing its Deduper (pgstore).
	// A fleet's replicas share a store on their database: dedupe.WatchStore("").
	w := &watch.Watch{Handler: handler, Client: client, Store: &watch.MemoryStore{}}
	handler.Settler = w // an order its callback settles leaves the watch at once
	// end: watch
	return w
}

// awaitThenCreate is the guide's order creation under the watch.
func awaitThenCreate(ctx context.Context, w *watch.Watch, order paygate.Order) error {
	// code: await
	// Awaits the order, then creates it; forgets it again if the create
	// failed for sure (watch.Refused), keeps it awaited if the outcome is unknown.
	_, err := w.CreateOrder(ctx, order)
	if watch.Refused(err) {
		return fmt.Errorf("order refused, not awaited: %w", err)
	}
	// end: await
	return err
}

// An order whose callback is lost is fulfilled by the watch's first
// lookup, five minutes on (test time), and leaves the watch.
func TestWatch(t *testing.T) {
	clock := gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	sb := sandboxEnv(t, gatewaytest.WithTestClock(clock), gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	shop := newStore()
	handler := &paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()}, Now: clock.Now,
		Fulfil: paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error { return shop.MarkPaid(ctx, cb.RefNo, cb.Amount) })}
	client, err := newClient()
	require.NoError(t, err)
	w := newWatch(handler, client)
	w.Now = clock.Now
	ctx := context.Background()
	require.NoError(t, awaitThenCreate(ctx, w, paygate.Order{RefNo: "INV-8", ExtraData: "cart-2", Amount: 1500,
		Email: "a@example.com", ReturnURL: "https://shop.example/paygate/return"}))
	require.NoError(t, sb.Pay("INV-8", paygate.StatusSuccess))

	clock.Advance(5 * time.Minute)
	p, err := w.Step(ctx)
	require.NoError(t, err)
	require.Equal(t, watch.Pass{Checked: 1, Settled: 1}, p)
	require.Equal(t, map[string]paygate.Amount{"INV-8": 1500}, shop.paid)
	left, err := w.List(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, left)

	// A create refused for sure is not awaited.
	err = awaitThenCreate(ctx, w, paygate.Order{RefNo: "INV-9", Amount: 0, Email: "a@example.com", ReturnURL: "https://shop.example/paygate/return"})
	require.ErrorContains(t, err, "order refused, not awaited")
	left, err = w.List(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, left)
}
