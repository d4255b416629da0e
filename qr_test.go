package paygate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// The QR image URL is the public client's qr2 shape: the checkout host's
// /qr2/ with the unsigned pay URL, query-escaped, in q.
func TestQRCodeURL(t *testing.T) {
	f := newTestClient(t, WithCheckoutURL("https://snapnpay.my/"))
	link := PayLink{Category: "fpx", RefNo: "INV-1", ExtraData: "cart 7", Amount: 1050}
	got, err := f.c.QRCodeURL(link)
	require.NoError(t, err)
	require.Equal(t, "https://snapnpay.my/qr2/?q=https%3A%2F%2Fsnapnpay.my%2Fpay%2FAGENCY01%2Ffpx%2FINV-1~cart%25207%2F10.50", got)
	u, err := url.Parse(got)
	require.NoError(t, err)
	require.Equal(t, "https://snapnpay.my/pay/AGENCY01/fpx/INV-1~cart%207/10.50", u.Query().Get("q"))
	require.Zero(t, f.mt.GetTotalCallCount(), "nothing is sent")

	link.Signed = true
	_, err = f.c.QRCodeURL(link)
	require.ErrorContains(t, err, "unsigned")
	_, err = f.c.QRCodeURL(PayLink{Category: "fpx", RefNo: "A~B", Amount: 1050})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve, "the pay link's rules apply")
}

func TestGenerateQR(t *testing.T) {
	for _, duitnow := range []bool{false, true} {
		f := newTestClient(t)
		path := "/api/qrcode/v1/generator"
		if duitnow {
			path = "/api/duitnowqr/v1/generator"
		}
		f.mt.RegisterResponder(http.MethodPost, testReports+path, func(req *http.Request) (*http.Response, error) {
			body, _ := io.ReadAll(req.Body)
			form, _ := url.ParseQuery(string(body))
			require.Equal(t, "INV-9~x", form.Get("refno"))
			require.Equal(t, "12.00", form.Get("amount"))
			require.Equal(t, "fpx", form.Get("paymentCategory"))
			require.Equal(t, testAgency, form.Get("agency"))
			requireSignedForm(t, form, testNow)
			resp := httpmock.NewBytesResponse(200, []byte("\x89PNG..."))
			resp.Header.Set("Content-Type", "image/png")
			return resp, nil
		})
		qr, err := f.c.GenerateQR(context.Background(), QRRequest{RefNo: "INV-9", ExtraData: "x", Amount: 1200, Category: "fpx", DuitNow: duitnow})
		require.NoError(t, err)
		require.Equal(t, "image/png", qr.ContentType)
		require.Equal(t, "\x89PNG...", string(qr.Body))
	}
	f := newTestClient(t)
	_, err := f.c.GenerateQR(context.Background(), QRRequest{RefNo: "a~b", Amount: 99, Category: "fpx"})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 2)
	require.Zero(t, f.mt.GetTotalCallCount())
}

// resetServer is a loopback server that resets the connection of each
// path's first request after reading it whole (the request reached the
// service, its answer is lost), and answers the next ones 200 with body.
type resetServer struct {
	mu    sync.Mutex
	calls map[string]int
}

func (s *resetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.calls[r.URL.Path]++
	n := s.calls[r.URL.Path]
	s.mu.Unlock()
	if n > 1 {
		_, _ = io.WriteString(w, `{"status":"OK","data":[],"stats":{"total_pages":1},"fpxrequest":{"seller_order_no":"INV-1","status":"pending"}}`)
		return
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.(*net.TCPConn).SetLinger(0) // close with a reset
	_ = conn.Close()
}

// Every signed POST (order creation and both QR generators) is sent at
// most once when the connection is reset after the request was written:
// the service may have acted on it, and a second signed request could
// create a second order or code. A GET reset the same way is retried.
// CreateOrder looks the order up instead (create-or-find), and finds it.
func TestSignedPostsNeverRetriedAfterReset(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		call    func(c *Client) error
		retried bool
		// lookups are the lookup GETs that follow (create-or-find).
		lookups int
	}{
		{name: "CreateOrder", path: "/v2/checkout", lookups: 2, call: func(c *Client) error {
			res, err := c.CreateOrder(context.Background(), testOrder())
			if err == nil && !res.Found {
				return errors.New("the order's lookup was not reported")
			}
			return err
		}},
		{name: "GenerateQR", path: "/api/qrcode/v1/generator", call: func(c *Client) error {
			_, err := c.GenerateQR(context.Background(), QRRequest{RefNo: "INV-9", Amount: 1200, Category: "fpx"})
			return err
		}},
		{name: "GenerateQR DuitNow", path: "/api/duitnowqr/v1/generator", call: func(c *Client) error {
			_, err := c.GenerateQR(context.Background(), QRRequest{RefNo: "INV-9", Amount: 1200, Category: "fpx", DuitNow: true})
			return err
		}},
		{name: "payment report GET", path: "/api/report/v1/payment", retried: true, call: func(c *Client) error {
			_, err := c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
			return err
		}},
		{name: "order lookup GET", path: "/api/report/v1/fpxrequest", retried: true, call: func(c *Client) error {
			_, err := c.LookupOrderByRefNo(context.Background(), "INV-1")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &resetServer{calls: map[string]int{}}
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			c, err := NewClient(WithAgency(testAgency), WithKey(mustKey(t, testKeyUUID)), WithAuthToken(testAuthToken),
				WithCheckoutURL(srv.URL), WithReportsURL(srv.URL), WithLogger(slog.New(slog.DiscardHandler)),
				WithRetry(RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}))
			require.NoError(t, err)
			err = tt.call(c)
			s.mu.Lock()
			defer s.mu.Unlock()
			if tt.retried {
				require.NoError(t, err)
				require.Equal(t, map[string]int{tt.path: 2}, s.calls, "a GET is retried after a reset")
				return
			}
			want := map[string]int{tt.path: 1}
			if tt.lookups > 0 {
				require.NoError(t, err)
				want["/api/report/v1/fpxrequest"] = tt.lookups // its first reset, then found
			} else {
				require.Error(t, err)
			}
			require.Equal(t, want, s.calls, "a signed POST is never sent twice once it may have been sent")
		})
	}
}
