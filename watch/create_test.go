package watch_test

import (
	"context"
	"fmt"
	"net/http"
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
		{name: "refused by the gateway, with extra data", opts: []gatewaytest.Option{gatewaytest.WithB2BMinimumRefused()},
			order: paygate.Order{RefNo: "INV-5", ExtraData: "cart", Amount: 100, Email: "a@example.com", PrefMethod: "fpx/b2b1"}, refused: true},
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

// Refused is true only for an error that proves no order was stored: a
// create refused before it was sent, or a 4xx the gateway answered that
// is no timeout, conflict, too early or too many requests. A 5xx, a
// conflict (the reference may be taken by this very order) or an
// unconfirmed create may have stored the order: forgetting it would leave
// a paid order whose callback is lost looked up by no one.
func TestRefusedOnlyWhatProvesNoOrder(t *testing.T) {
	api := func(code int) error {
		return fmt.Errorf("create INV-1: %w", &paygate.APIError{Method: http.MethodPost, Path: "/api/order", StatusCode: code})
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "no error", err: nil},
		{name: "invalid order", err: &paygate.ValidationError{Problems: []paygate.FieldError{{Field: "amount"}}}, want: true},
		{name: "missing setting", err: fmt.Errorf("create: %w", paygate.ErrNoCredential), want: true},
		{name: "invalid amount", err: fmt.Errorf("create: %w", paygate.ErrInvalidAmount), want: true},
		{name: "400", err: api(http.StatusBadRequest), want: true},
		{name: "422", err: api(http.StatusUnprocessableEntity), want: true},
		{name: "408", err: api(http.StatusRequestTimeout)},
		{name: "409", err: api(http.StatusConflict)},
		{name: "425", err: api(http.StatusTooEarly)},
		{name: "429", err: api(http.StatusTooManyRequests)},
		{name: "500", err: api(http.StatusInternalServerError)},
		{name: "502", err: api(http.StatusBadGateway)},
		{name: "503", err: api(http.StatusServiceUnavailable)},
		{name: "unconfirmed, last answer 400", err: fmt.Errorf("%w: %w", paygate.ErrCreateUnconfirmed, api(http.StatusBadRequest))},
		{name: "lost answer", err: fmt.Errorf("create: %w", context.DeadlineExceeded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, watch.Refused(tc.err), "%v", tc.err)
		})
	}
}
