package gatewaytest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// Each instant of WithLostCreateAnswers: the POST gets no answer, and the
// sandbox holds the order as the instant says; an order in flight lands
// after the next lookup of its reference was read, which does not see it.
func TestLostCreateAnswers(t *testing.T) {
	tests := []struct {
		loss          CreateLoss
		before, after int // orders held before and after a lookup
		lookupFinds   bool
	}{
		{loss: KeepAnswer, before: 1, after: 1, lookupFinds: true},
		{loss: LoseBeforeStore, before: 0, after: 0},
		{loss: LoseAfterStore, before: 1, after: 1, lookupFinds: true},
		{loss: LoseInFlight, before: 0, after: 1},
	}
	for _, tt := range tests {
		sb := newSandbox(t, WithLostCreateAnswers(func(string) CreateLoss { return tt.loss }))
		client, err := sb.Client(paygate.WithoutCreateOrFind())
		require.NoError(t, err)
		o := paygate.Order{RefNo: "INV-1", Amount: 1000, Email: "a@example.com", ReturnURL: "https://shop.example/r"}
		_, err = client.CreateOrder(context.Background(), o)
		require.Equal(t, tt.loss == KeepAnswer, err == nil, "loss %d: %v", tt.loss, err)
		require.Len(t, sb.Orders(), tt.before, "loss %d", tt.loss)
		_, err = client.LookupOrderByRefNo(context.Background(), "INV-1")
		require.Equal(t, tt.lookupFinds, err == nil, "loss %d: %v", tt.loss, err)
		require.Len(t, sb.Orders(), tt.after, "loss %d", tt.loss)
	}
}

// A create in flight lands before the next create of its reference, which
// is then refused (409) as a second order; WithRepeatedRefNos stores both.
func TestInFlightCreateLandsFirst(t *testing.T) {
	for _, repeated := range []bool{false, true} {
		var sends atomic.Int32 // the sandbox's handler goroutines count them
		opts := []Option{WithLostCreateAnswers(func(string) CreateLoss {
			return map[bool]CreateLoss{true: LoseInFlight, false: KeepAnswer}[sends.Add(1) == 1]
		})}
		if repeated {
			opts = append(opts, WithRepeatedRefNos())
		}
		sb := newSandbox(t, opts...)
		client, err := sb.Client(paygate.WithoutCreateOrFind())
		require.NoError(t, err)
		o := paygate.Order{RefNo: "INV-1", Amount: 1000, Email: "a@example.com", ReturnURL: "https://shop.example/r"}
		_, err = client.CreateOrder(context.Background(), o)
		require.Error(t, err)
		_, err = client.CreateOrder(context.Background(), o)
		var apiErr *paygate.APIError
		if repeated {
			require.NoError(t, err)
			require.Len(t, sb.Orders(), 2)
			continue
		}
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, 409, apiErr.StatusCode)
		require.Len(t, sb.Orders(), 1)
	}
}
