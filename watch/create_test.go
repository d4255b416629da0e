package watch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/watch"
)

// CreateOrder awaits, creates, and forgets the order when the create
// failed for sure: invalid (never sent) or refused by the gateway; a
// create whose outcome is unknown, or that succeeded, stays awaited.
func TestWatchCreateOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []gatewaytest.Option
		order   paygate.Order
		refused bool
		awaited []string
	}{
		{name: "created", order: paygate.Order{RefNo: "INV-1", ExtraData: "cart", Amount: 1000, Email: "a@example.com"},
			awaited: []string{"INV-1~cart"}},
		{name: "invalid, never sent", order: paygate.Order{RefNo: "INV-2", Amount: 0, Email: "a@example.com"}, refused: true},
		{name: "refused by the gateway", opts: []gatewaytest.Option{gatewaytest.WithB2BMinimumRefused()},
			order: paygate.Order{RefNo: "INV-3", Amount: 100, Email: "a@example.com", PrefMethod: "fpx/b2b1"}, refused: true},
		{name: "answer lost, outcome unknown",
			opts:  []gatewaytest.Option{gatewaytest.WithLostCreateAnswers(func(string) gatewaytest.CreateLoss { return gatewaytest.LoseBeforeStore })},
			order: paygate.Order{RefNo: "INV-4", Amount: 1000, Email: "a@example.com"}, awaited: []string{"INV-4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newShop(t, tc.opts...)
			w := s.watch(&watch.MemoryStore{})
			tc.order.ReturnURL = s.returnURL
			_, err := w.CreateOrder(context.Background(), tc.order)
			if tc.awaited != nil && tc.awaited[0] == "INV-4" {
				require.Error(t, err)
			}
			require.Equal(t, tc.refused, watch.Refused(err), "%v", err)
			if tc.awaited == nil && !tc.refused {
				require.NoError(t, err)
			}
			left, err := w.List(context.Background(), 10)
			require.NoError(t, err)
			var refs []string
			for _, o := range left {
				refs = append(refs, o.RefNo)
			}
			require.Equal(t, tc.awaited, refs)
		})
	}
}
