package paygateotel_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/watch"
)

// The pending watch's lookups are counted by outcome and by what became
// of the order, with the order's age at each: a lost callback settled by
// the first lookup, five minutes on; an order never paid looked up until
// it is given up.
func TestWatchChecksAndAges(t *testing.T) {
	clock := gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	s := newShop(t, gatewaytest.WithTestClock(clock), gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	s.handler.Now = clock.Now
	w := &watch.Watch{Handler: s.handler, Client: s.client, Store: &watch.MemoryStore{}, Now: clock.Now,
		MaxAge: time.Hour, Schedule: []time.Duration{5 * time.Minute, 20 * time.Minute},
		Logger: slog.New(slog.DiscardHandler), Observer: s.tm.obs}
	ctx := context.Background()
	for _, ref := range []string{"INV-1", "INV-2"} {
		o := paygate.Order{RefNo: ref, Amount: 1000, Email: "siti@example.com", ReturnURL: s.server.URL}
		require.NoError(t, w.AwaitOrder(ctx, o))
		_, err := s.client.CreateOrder(ctx, o)
		require.NoError(t, err)
	}
	require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
	for range 13 {
		clock.Advance(5 * time.Minute)
		_, err := w.Step(ctx)
		require.NoError(t, err)
	}
	m := s.tm.metrics(t)
	require.Equal(t, map[string]int64{
		"paygate.outcome=fulfilled,paygate.watch.state=settled": 1,
		"paygate.outcome=pending,paygate.watch.state=awaited":   3, // at 5, 25 and 45 minutes
		"paygate.outcome=pending,paygate.watch.state=given_up":  1, // at its maximum age, an hour
	}, m["paygate.watch.checks"])
	require.Equal(t, m["paygate.watch.checks"], m["paygate.watch.age"], "one age a lookup")
}
