package paygate_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// lossPlan loses the answers of a reference's creates in turn: the first
// create at plan[0], the second at plan[1]...; past the plan, none.
type lossPlan struct {
	mu    sync.Mutex
	plan  []gatewaytest.CreateLoss
	sends int
}

func (p *lossPlan) lose(string) gatewaytest.CreateLoss {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends++
	if p.sends <= len(p.plan) {
		return p.plan[p.sends-1]
	}
	return gatewaytest.KeepAnswer
}

// createWithLosses creates one order against a sandbox that loses the
// answers as plan says, and returns the result, the orders the sandbox
// holds and the error.
func createWithLosses(t *testing.T, plan []gatewaytest.CreateLoss, sbOpts []gatewaytest.Option, opts ...paygate.Option) (*paygate.CheckoutResult, []gatewaytest.Order, error) {
	t.Helper()
	p := &lossPlan{plan: plan}
	sb := gatewaytest.NewServer(append([]gatewaytest.Option{gatewaytest.WithLostCreateAnswers(p.lose)}, sbOpts...)...)
	defer sb.Close()
	client, err := sb.Client(opts...)
	require.NoError(t, err)
	res, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "INV-9", ExtraData: "cart-1", Amount: 1000,
		Email: "a@example.com", ReturnURL: "https://shop.example/return"})
	return res, sb.Orders(), err
}

// checkCreateResult holds a CreateOrder result to what the sandbox holds:
// a created order's Location is its hosted page, a found order's Record
// is it, and an error matching ErrCreateUnconfirmed names the reference.
func checkCreateResult(t *testing.T, res *paygate.CheckoutResult, err error, orders []gatewaytest.Order) {
	t.Helper()
	if err != nil {
		require.ErrorIs(t, err, paygate.ErrCreateUnconfirmed)
		require.Contains(t, err.Error(), `"INV-9~cart-1"`)
		return
	}
	require.Len(t, orders, 1, "an order created or found is one order at the gateway")
	if res.Found {
		require.NotNil(t, res.Record)
		require.Contains(t, string(res.Record.Raw), orders[0].OrderNo)
		require.Empty(t, res.Location)
		return
	}
	require.Nil(t, res.Record)
	require.True(t, strings.HasSuffix(res.Location, "/checkout/"+orders[0].OrderNo), "a created order's Location is its page: %q", res.Location)
}

func TestCreateOrFind(t *testing.T) {
	const (
		keep     = gatewaytest.KeepAnswer
		before   = gatewaytest.LoseBeforeStore
		after    = gatewaytest.LoseAfterStore
		inFlight = gatewaytest.LoseInFlight
	)
	tests := []struct {
		name        string
		plan        []gatewaytest.CreateLoss
		repeated    bool // the sandbox takes a reference twice
		found       bool
		unconfirmed bool
		orders      int
	}{
		{name: "answered", plan: nil, orders: 1},
		{name: "lost after storing: found", plan: []gatewaytest.CreateLoss{after}, found: true, orders: 1},
		{name: "lost after storing, references repeatable: found, not created again", plan: []gatewaytest.CreateLoss{after}, repeated: true, found: true, orders: 1},
		{name: "lost before storing: created again", plan: []gatewaytest.CreateLoss{before}, orders: 1},
		{name: "lost twice before storing: created on the third", plan: []gatewaytest.CreateLoss{before, before}, orders: 1},
		{name: "lost before storing, then after", plan: []gatewaytest.CreateLoss{before, after}, found: true, orders: 1},
		{name: "in flight at the lookup: the re-send refused, found", plan: []gatewaytest.CreateLoss{inFlight}, found: true, orders: 1},
		// The race A-create-or-find leaves: a service that takes a
		// reference twice holds both orders; the first one's page was
		// never seen, so it cannot be paid.
		{name: "in flight at the lookup, references repeatable: two orders", plan: []gatewaytest.CreateLoss{inFlight}, repeated: true, orders: 2},
		{name: "every answer lost before storing: unconfirmed", plan: []gatewaytest.CreateLoss{before, before, before}, unconfirmed: true},
		{name: "every answer lost, the last in flight: unconfirmed", plan: []gatewaytest.CreateLoss{before, before, inFlight}, unconfirmed: true, orders: 1},
		{name: "lost after storing on the last send: found", plan: []gatewaytest.CreateLoss{before, before, after}, found: true, orders: 1},
		{name: "kept answers are kept", plan: []gatewaytest.CreateLoss{keep}, orders: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sbOpts []gatewaytest.Option
			if tt.repeated {
				sbOpts = append(sbOpts, gatewaytest.WithRepeatedRefNos())
			}
			res, orders, err := createWithLosses(t, tt.plan, sbOpts)
			require.Len(t, orders, tt.orders)
			if tt.unconfirmed {
				require.ErrorIs(t, err, paygate.ErrCreateUnconfirmed)
				require.Contains(t, err.Error(), `"INV-9~cart-1"`)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.found, res.Found)
			if tt.orders == 1 {
				checkCreateResult(t, res, err, orders)
			}
		})
	}
}

// A lookup that fails leaves the outcome unknown: the error says so,
// names the reference, and claims nothing.
func TestCreateOrFindLookupFails(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "reports are down", http.StatusInternalServerError)
	}))
	defer down.Close()
	for _, loss := range []gatewaytest.CreateLoss{gatewaytest.LoseBeforeStore, gatewaytest.LoseAfterStore} {
		_, orders, err := createWithLosses(t, []gatewaytest.CreateLoss{loss}, nil,
			paygate.WithReportsURL(down.URL), paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
		require.ErrorIs(t, err, paygate.ErrCreateUnconfirmed)
		require.Contains(t, err.Error(), `refNo "INV-9~cart-1"`)
		require.Contains(t, err.Error(), "looking it up failed")
		require.Contains(t, err.Error(), "HTTP 500")
		require.LessOrEqual(t, len(orders), 1, "never created again without a lookup")
	}
}

// A create the gateway refuses (4xx) is not looked up: the refusal is the
// answer, though a lookup would find the order holding the reference.
func TestCreateRefusedNotLookedUp(t *testing.T) {
	sb := gatewaytest.NewServer()
	defer sb.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	o := paygate.Order{RefNo: "INV-2", Amount: 1000, Email: "a@example.com", ReturnURL: "https://shop.example/return"}
	res, err := client.CreateOrder(context.Background(), o)
	require.NoError(t, err)
	require.False(t, res.Found)
	res, err = client.CreateOrder(context.Background(), o)
	var apiErr *paygate.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusConflict, apiErr.StatusCode)
	require.NotErrorIs(t, err, paygate.ErrCreateUnconfirmed)
	require.Nil(t, res)
	require.Len(t, sb.Orders(), 1)
}

// WithoutCreateOrFind returns the lost answer's error as it is, with no
// lookup and no second POST.
func TestWithoutCreateOrFind(t *testing.T) {
	for _, loss := range []gatewaytest.CreateLoss{gatewaytest.LoseBeforeStore, gatewaytest.LoseAfterStore} {
		res, orders, err := createWithLosses(t, []gatewaytest.CreateLoss{loss}, nil, paygate.WithoutCreateOrFind())
		require.Error(t, err)
		require.Nil(t, res)
		require.NotErrorIs(t, err, paygate.ErrCreateUnconfirmed)
		var apiErr *paygate.APIError
		require.False(t, errors.As(err, &apiErr), "no answer came: %v", err)
		require.Len(t, orders, map[gatewaytest.CreateLoss]int{gatewaytest.LoseBeforeStore: 0, gatewaytest.LoseAfterStore: 1}[loss])
	}
}

// The instant of each loss is the fuzzer's: whatever it is, the gateway
// holds at most one order, a result says truly whether the order was
// created or found, and an error says the outcome is unknown.
func FuzzCreateOrFindLossInstant(f *testing.F) {
	for _, seed := range []string{"", "\x02", "\x01", "\x03", "\x01\x02", "\x01\x01\x01", "\x01\x01\x03", "\x03\x03", "\x03\x01\x02"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, instants []byte) {
		plan := make([]gatewaytest.CreateLoss, 0, 4)
		for _, b := range instants[:min(len(instants), 4)] {
			plan = append(plan, gatewaytest.CreateLoss(b%4))
		}
		res, orders, err := createWithLosses(t, plan, nil)
		require.LessOrEqual(t, len(orders), 1, "one order at the gateway whatever happens")
		checkCreateResult(t, res, err, orders)
	})
}
