package paygate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// settlerLog records what a Settler was told.
type settlerLog struct {
	mu   sync.Mutex
	refs []string
	err  error
}

func (s *settlerLog) Settled(_ context.Context, cb *Callback) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs = append(s.refs, cb.CreatedRefNo())
	return s.err
}

// The Settler is told of each event that settled its order (fulfilled,
// already fulfilled, failed), after it is recorded; never of a pending
// status nor of an event whose hook failed; its error changes no answer.
func TestSettlerIsToldOfSettledOrders(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name    string
		status  []Status
		fulfil  error
		settler error
		code    int
		settled []string
	}{
		{name: "paid", status: []Status{StatusSuccess}, code: http.StatusOK, settled: []string{"INV-S~cart 7"}},
		{name: "paid, then its retry", status: []Status{StatusSuccess, StatusSuccess}, code: http.StatusOK, settled: []string{"INV-S~cart 7", "INV-S~cart 7"}},
		{name: "failed", status: []Status{StatusFailed}, code: http.StatusOK, settled: []string{"INV-S~cart 7"}},
		{name: "pending", status: []Status{StatusPending}, code: http.StatusOK},
		{name: "Fulfil fails", status: []Status{StatusSuccess}, fulfil: errors.New("stock down"), code: http.StatusInternalServerError},
		{name: "the Settler fails", status: []Status{StatusSuccess}, settler: errors.New("watch down"), code: http.StatusOK, settled: []string{"INV-S~cart 7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &settlerLog{err: tc.settler}
			h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.DiscardHandler), Settler: s,
				Fulfil: FulfilFunc(func(context.Context, *Callback) error { return tc.fulfil })}
			var code int
			for _, st := range tc.status {
				code = serve(h, signedRequest(t, key, callbackFields("INV-S", "GWS", st, "00"))).Code
			}
			require.Equal(t, tc.code, code)
			require.Equal(t, tc.settled, s.refs)
		})
	}
}

// A request gate is asked before every attempt of a call, retries
// included; its error ends the call unsent, and the call's error matches it.
func TestRequestGateSeesEveryAttempt(t *testing.T) {
	var mu sync.Mutex
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent++
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(WithAgency("AG"), WithAuthToken("tok"), WithReportsURL(srv.URL), WithCheckoutURL(srv.URL),
		WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: 1, MaxDelay: 1}))
	require.NoError(t, err)
	spent := errors.New("budget spent")
	for _, tc := range []struct {
		name        string
		allow       int // attempts the gate lets through
		asked, sent int
	}{
		{name: "every attempt passes", allow: 4, asked: 4, sent: 4},
		{name: "the third is refused", allow: 2, asked: 3, sent: 2},
		{name: "the first is refused", allow: 0, asked: 1, sent: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			sent = 0
			mu.Unlock()
			var asked []int
			ctx := WithRequestGate(context.Background(), func(_ context.Context, n int) error {
				asked = append(asked, n)
				if n > tc.allow {
					return spent
				}
				return nil
			})
			_, err := c.LookupOrderByRefNo(ctx, "INV-G")
			require.Error(t, err)
			require.Len(t, asked, tc.asked)
			require.Equal(t, tc.sent, sent)
			require.Equal(t, tc.allow < 4, errors.Is(err, spent), "%v", err)
		})
	}
}
