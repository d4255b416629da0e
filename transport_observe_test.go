package paygate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/observe"
	"github.com/paygate-go/paygate/zakat"
	"github.com/stretchr/testify/require"
)

// eventLog is an observe.Observer that keeps every event, in order.
type eventLog struct {
	observe.Base
	mu     sync.Mutex
	events []any
}

func (l *eventLog) add(e any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) all() []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]any(nil), l.events...)
}

func (l *eventLog) CallStart(ctx context.Context, c observe.Call) context.Context {
	l.add(c)
	return ctx
}
func (l *eventLog) CallRetry(_ context.Context, r observe.Retry) { l.add(r) }
func (l *eventLog) CallEnd(_ context.Context, e observe.CallEnd) { l.add(e) }
func (l *eventLog) CallbackStart(ctx context.Context, c observe.Callback) context.Context {
	l.add(c)
	return ctx
}
func (l *eventLog) CallbackEnd(_ context.Context, e observe.CallbackEnd) { l.add(e) }
func (l *eventLog) SendStart(ctx context.Context, s observe.Send) context.Context {
	l.add(s)
	return ctx
}
func (l *eventLog) SendEnd(_ context.Context, e observe.SendEnd) { l.add(e) }
func (l *eventLog) ReconcileStart(ctx context.Context, r observe.Reconcile) context.Context {
	l.add(r)
	return ctx
}
func (l *eventLog) ReconcileEntry(_ context.Context, e observe.ReconcileEntry) { l.add(e) }
func (l *eventLog) ReconcileEnd(_ context.Context, e observe.ReconcileEnd)     { l.add(e) }

// A Client's call is told by its route (the path, never the query), each
// retry with the wait the service asked for, and how it ended.
func TestWithObserverTellsCalls(t *testing.T) {
	fail := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail > 0 {
			fail--
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"status":"OK"}`))
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		url      string
		fails    int
		attempts int // 0: two
		ctx      context.Context
		want     []any
	}{
		{name: "answered at once", url: srv.URL, ctx: context.Background(), want: []any{
			observe.Call{Method: "GET", Route: "/api/echo"},
			observe.CallEnd{Attempts: 1, Status: 200, Class: observe.ClassOK}}},
		{name: "a retry the service asked for", url: srv.URL, fails: 1, ctx: context.Background(), want: []any{
			observe.Call{Method: "GET", Route: "/api/echo"},
			observe.Retry{Attempt: 1, Status: 503, RetryAfter: time.Second, Wait: time.Second},
			observe.CallEnd{Attempts: 2, Status: 200, Class: observe.ClassOK}}},
		{name: "every attempt refused", url: srv.URL, fails: 2, ctx: context.Background(), want: []any{
			observe.Call{Method: "GET", Route: "/api/echo"},
			observe.Retry{Attempt: 1, Status: 503, RetryAfter: time.Second, Wait: time.Second},
			observe.CallEnd{Attempts: 2, Status: 503, Class: observe.ClassAnswer}}},
		{name: "no answer", url: dead.URL, attempts: 1, ctx: context.Background(), want: []any{
			observe.Call{Method: "GET", Route: "/api/echo"},
			observe.CallEnd{Attempts: 1, Class: observe.ClassTransport}}},
		{name: "context ended", url: srv.URL, ctx: cancelled, want: []any{
			observe.Call{Method: "GET", Route: "/api/echo"},
			observe.CallEnd{Class: observe.ClassContext}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail = tt.fails
			attempts := 2
			if tt.attempts != 0 {
				attempts = tt.attempts
			}
			log := &eventLog{}
			c, err := NewClient(WithReportsURL(tt.url), WithObserver(log),
				WithRetry(RetryPolicy{MaxAttempts: attempts, BaseDelay: time.Millisecond, MaxDelay: time.Minute}))
			require.NoError(t, err)
			c.transport.sleep = func(context.Context, time.Duration) error { return nil }
			_, _ = c.Echo(tt.ctx)
			require.Equal(t, tt.want, log.all())
		})
	}
}

// WithObserver refuses a nil Observer.
func TestWithObserverNil(t *testing.T) {
	_, err := NewClient(WithObserver(nil))
	require.ErrorContains(t, err, "nil observer")
}

// A Send is told with its transactions, each request as a call to the
// webhook's path, and its end by the transactions' states.
func TestWithObserverTellsSends(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	log := &eventLog{}
	s, err := NewWebhookSender(srv.URL+"/bank/hook", "pa55word", WithBatchSize(2), WithObserver(log))
	require.NoError(t, err)
	bad := validTx(9)
	bad.Email = "not an address"
	_, err = s.Send(context.Background(), []zakat.Transaction{validTx(1), validTx(2), validTx(3), bad})
	require.Error(t, err)
	call := observe.Call{Method: "POST", Route: "/bank/hook"}
	sent := observe.CallEnd{Attempts: 1, Status: 200}
	require.Equal(t, []any{observe.Send{Transactions: 4}, call, sent, call, sent,
		observe.SendEnd{Requests: 2, Accepted: 3, Invalid: 1, Failed: true}}, log.all())
}
