package paygate_test

// Guards of promises no other test held (issue 42): each fails on the
// defect its comment names.

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// A paid order whose callbacks were all lost, reconciled 40 days later
// (past DefaultMaxTxnAge), is fulfilled by Reconcile and by
// ReconcileReport: a reconciliation reads the gateway's own answer, which
// no one can replay, and the replay bound holds back callbacks only.
// Defect caught: MaxTxnAge applied to every source.
func TestReconciliationsNotBoundByMaxTxnAge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reconcile func(ctx context.Context, h *paygate.CallbackHandler, c *paygate.Client, paid time.Time) (*paygate.Reconciliation, error)
	}{
		{name: "Reconcile", reconcile: func(ctx context.Context, h *paygate.CallbackHandler, c *paygate.Client, _ time.Time) (*paygate.Reconciliation, error) {
			return h.Reconcile(ctx, c, []string{"INV-1"})
		}},
		{name: "ReconcileReport", reconcile: func(ctx context.Context, h *paygate.CallbackHandler, c *paygate.Client, paid time.Time) (*paygate.Reconciliation, error) {
			day := paid.In(paygate.MalaysiaTime())
			return h.ReconcileReport(ctx, c, paygate.ReportQuery{Start: day, End: day})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
			sb := gatewaytest.NewServer(gatewaytest.WithTestClock(clock), gatewaytest.WithCallbackLoss(func(string) bool { return true }))
			t.Cleanup(sb.Close)
			client, err := sb.Client()
			require.NoError(t, err)
			log := newShopLog()
			h := log.handler(sb.Key(), &paygate.MemoryDeduper{Now: clock.Now})
			h.Now = clock.Now
			var held atomic.Int32
			h.OnHeldBack = func(context.Context, *paygate.Callback, error) error { held.Add(1); return nil }
			ctx := context.Background()
			_, err = client.CreateOrder(ctx, paygate.Order{RefNo: "INV-1", Amount: 1000, Email: "a@example.com", ReturnURL: "https://shop.example/return"})
			require.NoError(t, err)
			paid := clock.Now()
			require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess))
			sb.Settle()
			clock.Advance(paygate.DefaultMaxTxnAge + 10*24*time.Hour)

			rec, err := tc.reconcile(ctx, h, client, paid)
			require.NoError(t, err)
			require.Equal(t, map[paygate.Outcome]int{paygate.OutcomeFulfilled: 1}, rec.Counts, "%+v", rec.Entries)
			require.Equal(t, map[string]int{"INV-1": 1}, log.fulfils)
			require.Zero(t, held.Load())
		})
	}
}

// An order POST answered 503 by a gateway that stored it (an overloaded
// front, say), then refused on its retry because its reference is taken:
// the first attempt may have created it, so create-or-find looks it up
// and finds it, rather than returning the refusal. Defect caught: only
// the last attempt's outcome consulted (a refusal after an unknown outcome
// taken as the answer).
func TestCreateOrFindAfterAnUnknownThenARefusal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored bool // whether the gateway stored the order it answered 503
		found  bool
	}{
		{name: "stored, then the reference refused: found", stored: true, found: true},
		{name: "not stored: created by the retry", stored: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := gatewaytest.NewServer()
			t.Cleanup(sb.Close)
			target, err := url.Parse(sb.URL)
			require.NoError(t, err)
			rp := httputil.NewSingleHostReverseProxy(target)
			var posts atomic.Int32
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && posts.Add(1) == 1 {
					if tc.stored {
						rp.ServeHTTP(httptest.NewRecorder(), r)
					}
					http.Error(w, "overloaded", http.StatusServiceUnavailable)
					return
				}
				rp.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			client, err := sb.Client(paygate.WithCheckoutURL(front.URL), paygate.WithLogger(slog.New(slog.DiscardHandler)),
				paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}))
			require.NoError(t, err)
			res, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "INV-9", ExtraData: "cart-1", Amount: 1000,
				Email: "a@example.com", ReturnURL: "https://shop.example/return"})
			require.NoError(t, err)
			require.EqualValues(t, 2, posts.Load(), "the 503 retried once")
			require.Equal(t, tc.found, res.Found)
			checkCreateResult(t, res, err, sb.Orders())
		})
	}
}
