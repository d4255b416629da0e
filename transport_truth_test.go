package paygate_test

import (
	"context"
	"crypto/tls"
	"io"
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
	"github.com/paygate-go/paygate/zakat"
)

// writeRaw answers a request with head through its connection (TLS or
// plain), then raw bytes past its TLS layer (or straight on a plain one),
// and closes it: an answer that is not HTTP, or not TLS, after the
// handshake completed, or once the answer's head was read.
func writeRaw(t *testing.T, w http.ResponseWriter, head, raw string) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	defer conn.Close()
	_, _ = conn.Write([]byte(head))
	if tc, ok := conn.(*tls.Conn); ok {
		_, _ = tc.NetConn().Write([]byte(raw))
		return
	}
	_, _ = conn.Write([]byte(raw))
}

// The faults a bank's endpoint can show once the request reached it: each
// "may have reached" (Unconfirmed), never a failed handshake, and the send
// goes on to its next request (docs/assumptions.md A-webhook-answers).
var afterConnectFaults = []struct {
	name string
	tls  bool
	head string // written through TLS before raw, if any
	raw  string
}{
	{name: "TLS, then plain text", tls: true, raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	{name: "TLS, then garbage", tls: true, raw: "\x00\x01\x02\xff garbage \xfe"},
	{name: "plain http, then garbage", tls: false, raw: "\x00\x01\x02\xff garbage \xfe"},
	{name: "TLS, an answer's head, then garbage", tls: true, head: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"status\"", raw: "\x00\x01\x02\xff garbage \xfe"},
}

func TestSendAfterHandshakeIsUnconfirmed(t *testing.T) {
	for _, tc := range afterConnectFaults {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body) // stored, say
				if calls.Add(1) == 1 {
					writeRaw(t, w, tc.head, tc.raw)
					return
				}
				_, _ = w.Write([]byte(`{"status":"OK"}`))
			})
			srv := httptest.NewUnstartedServer(h)
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			s, err := paygate.NewWebhookSender(srv.URL+"/api/bank/webhook", "pw", paygate.WithHTTPClient(srv.Client()),
				paygate.WithBatchSize(2), paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
			require.NoError(t, err)
			txs := make([]zakat.Transaction, 4)
			for i := range txs {
				txs[i] = zakat.Transaction{Agency: zakat.AgencyTest, OrderNo: string(rune('A' + i)), Amount: 100, Name: "Ali",
					Email: "ali@example.com", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Status: zakat.StatusSuccess,
					Data: zakat.Data{Type: zakat.ZakatPendapatan}}
			}
			report, err := s.Send(context.Background(), txs)
			require.Error(t, err)
			require.Equal(t, []string{"A", "B"}, report.Unconfirmed, "%v", report.Requests[0].Err)
			require.Equal(t, []string{"C", "D"}, report.Accepted, "the send did not stop as for a TLS failure")
			require.Empty(t, report.NotSent)
			require.NotContains(t, report.Requests[0].Err.Error(), "handshake")
		})
	}
}

// CreateOrder's create-or-find looks the order up when the gateway's
// answer is not TLS, or not HTTP, after the handshake: the order it
// stored is found, not reported as never sent (docs/assumptions.md
// A-create-or-find).
func TestCreateOrderAfterHandshakeLooksUp(t *testing.T) {
	for _, tc := range afterConnectFaults {
		t.Run(tc.name, func(t *testing.T) {
			sb := gatewaytest.NewServer()
			defer sb.Close()
			target, err := url.Parse(sb.URL)
			require.NoError(t, err)
			proxy := httputil.NewSingleHostReverseProxy(target)
			var posts atomic.Int32
			front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || posts.Add(1) > 1 {
					proxy.ServeHTTP(w, r)
					return
				}
				rec := httptest.NewRecorder() // the gateway stores the order...
				proxy.ServeHTTP(rec, r)
				writeRaw(t, w, tc.head, tc.raw) // ...and its answer is not what the client reads
			}))
			if tc.tls {
				front.StartTLS()
			} else {
				front.Start()
			}
			defer front.Close()
			client, err := sb.Client(paygate.WithCheckoutURL(front.URL), paygate.WithReportsURL(front.URL), paygate.WithHTTPClient(front.Client()))
			require.NoError(t, err)
			res, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "INV-9", Amount: 1000,
				Email: "a@example.com", ReturnURL: "https://shop.example/return"})
			require.NoError(t, err)
			require.True(t, res.Found, "looked up and found")
			require.Len(t, sb.Orders(), 1)
			require.Equal(t, int32(1), posts.Load(), "not sent again")
		})
	}
}
