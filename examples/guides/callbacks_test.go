package guides

// The merchant receiving callbacks on one replica, and recovering a missed
// one: docs/receiving-callbacks.md.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// store is the shop's order book, as the guide's handler uses it.
type store struct {
	mu       sync.Mutex
	paid     map[string]paygate.Amount
	held     map[string][]paygate.FieldError
	refunds  []string
	statuses []string
}

func newStore() *store {
	return &store{paid: map[string]paygate.Amount{}, held: map[string][]paygate.FieldError{}}
}

func (s *store) MarkPaid(_ context.Context, refNo string, amount paygate.Amount) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paid[refNo] += amount
	return nil
}

func (s *store) HoldForReview(_ context.Context, refNo string, problems []paygate.FieldError) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[refNo] = problems
	return nil
}

func (s *store) QueueRefund(_ context.Context, refNo, orderNo string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refunds = append(s.refunds, refNo+" "+orderNo)
	return nil
}

func (s *store) RecordStatus(_ context.Context, refNo string, status paygate.Status, stale bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, fmt.Sprintf("%s %s stale=%v", refNo, status, stale))
	return nil
}

// callbackHandler is the guide's handler for one replica.
func callbackHandler(shop *store, key paygate.Key) http.Handler {
	// code: callback-handler
	mux := http.NewServeMux()
	mux.Handle("/paygate/return", &paygate.CallbackHandler{
		Keys: []paygate.Key{key}, // several: key rotation
		Fulfil: paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error {
			// A verified success, once per base reference (cb.RefNo, the
			// part before any "~"); an error or a panic: 500, the gateway
			// retries. Make it idempotent on cb.RefNo (the lease path).
			if !cb.Consistent() {
				return shop.HoldForReview(ctx, cb.RefNo, cb.Problems) // paid, but a field is odd
			}
			return shop.MarkPaid(ctx, cb.RefNo, cb.Amount)
		}),
		OnStatus: func(ctx context.Context, cb *paygate.Callback) error {
			// pending or failed, once per (refNo, orderNo, status); cb.Stale:
			// it came after the success, so never regress the order.
			return shop.RecordStatus(ctx, cb.RefNo, cb.Status, cb.Stale)
		},
		OnDoublePayment: func(ctx context.Context, cb *paygate.Callback, paidOrderNo string) error {
			return shop.QueueRefund(ctx, cb.RefNo, cb.OrderNo) // a second payment for a paid order
		},
		OnReturn: func(w http.ResponseWriter, r *http.Request, cb *paygate.Callback) {
			// The buyer's browser: unsigned, so anyone can post any refNo.
			// Show nothing looked up from it: send the buyer to pages behind
			// their own login, which show only their orders.
			http.Redirect(w, r, "/account/orders", http.StatusSeeOther)
		},
		Deduper: nil, // nil: in memory, one replica; pgstore for several
	})
	// end: callback-handler
	return mux
}

// callbackServer is the guide's http.Server around the handler.
func callbackServer(mux http.Handler) *http.Server {
	// code: callback-server
	srv := &http.Server{
		Addr:    ":8443",
		Handler: mux,
		// Slow headers: without it a client that never finishes its headers
		// holds a connection (and a goroutine) open for ever.
		ReadHeaderTimeout: 5 * time.Second,
		// Headers and body together: the backstop for the handler's own
		// ReadTimeout (5 s, per body), which a middleware's ResponseWriter
		// without Unwrap disables (the handler then logs a warning once).
		ReadTimeout: 15 * time.Second,
		// Reading, the hook and the answer: longer than HookTimeout (2 min),
		// or a slow Fulfil's 200 is cut off and the gateway retries for nothing.
		WriteTimeout: 3 * time.Minute,
		// Idle keep-alive connections between callbacks are closed after it.
		IdleTimeout: time.Minute,
	}
	// then: log.Fatal(srv.ListenAndServeTLS("cert.pem", "key.pem"))
	// end: callback-server
	return srv
}

// The handler behind its server: a payment is fulfilled once however
// often the callback comes, a pending one is a status, the browser is
// redirected.
func TestCallbackHandler(t *testing.T) {
	sb := sandboxEnv(t, gatewaytest.WithRetryInterval(10*time.Millisecond))
	shop := newStore()
	srv := callbackServer(callbackHandler(shop, sb.Key()))
	require.Equal(t, 3*time.Minute, srv.WriteTimeout)
	merchant := httptest.NewServer(srv.Handler)
	defer merchant.Close()
	client, err := newClient()
	require.NoError(t, err)
	ctx := context.Background()
	for _, ref := range []string{"INV-1", "INV-2"} {
		_, err := client.CreateOrder(ctx, paygate.Order{RefNo: ref, Amount: 1000,
			Email: "a@example.com", ReturnURL: merchant.URL + "/paygate/return"})
		require.NoError(t, err)
	}
	require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("INV-2", paygate.StatusPending))
	sb.Settle()

	// The same callback again: answered 200, not fulfilled twice.
	req, err := gatewaytest.NewCallbackRequest(sb.Key(), merchant.URL+"/paygate/return", url.Values{
		"refNo": {"INV-1"}, "orderNo": {sb.Orders()[0].OrderNo}, "status": {"success"}, "amount": {"10.00"}})
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	shop.mu.Lock()
	require.Equal(t, map[string]paygate.Amount{"INV-1": 1000}, shop.paid)
	require.Equal(t, []string{"INV-2 pending stale=false"}, shop.statuses)
	shop.mu.Unlock()

	back, err := gatewaytest.NewReturnRequest("/paygate/return", url.Values{"refNo": {"INV-1"}, "status": {"success"}})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	srv.Handler.ServeHTTP(rec, back)
	require.Equal(t, http.StatusSeeOther, rec.Code)
}

// reconcileAwaited is the guide's recovery of missed callbacks.
func reconcileAwaited(ctx context.Context, out io.Writer, handler *paygate.CallbackHandler, client *paygate.Client, awaitedRefNos []string) error {
	// code: reconcile
	// handler: the one serving callbacks, or one sharing its Deduper (pgstore).
	// References as created: refNo~extraData for an order made with extra data.
	rec, err := handler.Reconcile(ctx, client, awaitedRefNos) // looks each order up at the gateway
	if err != nil {
		return err // ctx ended, or no client: the entries so far are in rec
	}
	for _, e := range rec.Entries {
		fmt.Fprintf(out, "%s: %s\n", e.RefNo, e.Outcome) // fulfilled, already_fulfilled, pending, failed, not_found, held_back, ...
	}
	// end: reconcile
	return nil
}

// A payment whose callback was lost is fulfilled by reconciliation, once.
func TestReconcile(t *testing.T) {
	sb := sandboxEnv(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	shop := newStore()
	handler := &paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()}, ReconcileInterval: time.Millisecond,
		Fulfil: paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error { return shop.MarkPaid(ctx, cb.RefNo, cb.Amount) })}
	client, err := newClient()
	require.NoError(t, err)
	ctx := context.Background()
	_, err = client.CreateOrder(ctx, paygate.Order{RefNo: "INV-7", ExtraData: "cart-1", Amount: 1200,
		Email: "a@example.com", ReturnURL: "https://shop.example/paygate/return"})
	require.NoError(t, err)
	require.NoError(t, sb.Pay("INV-7", paygate.StatusSuccess))
	sb.Settle()

	for _, want := range []string{"fulfilled", "already_fulfilled"} {
		var out strings.Builder
		require.NoError(t, reconcileAwaited(ctx, &out, handler, client, []string{"INV-7~cart-1", "INV-8"}))
		require.Equal(t, "INV-7~cart-1: "+want+"\nINV-8: not_found\n", out.String())
	}
	require.Equal(t, map[string]paygate.Amount{"INV-7": 1200}, shop.paid)
}
