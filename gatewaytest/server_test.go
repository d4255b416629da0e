package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/zakat"
)

// merchant is a test shop: a CallbackHandler on its returnUrl that records
// fulfilments and other statuses, failing the first failFirst deliveries.
type merchant struct {
	srv       *httptest.Server
	h         *paygate.CallbackHandler
	mu        sync.Mutex
	fulfilled map[string]int
	statuses  []string
	returns   int
	failFirst int
}

func newMerchant(t *testing.T, sb *Server) *merchant {
	t.Helper()
	m := &merchant{fulfilled: map[string]int{}}
	h := &paygate.CallbackHandler{
		Keys:   []paygate.Key{sb.Key()},
		Logger: slog.New(slog.DiscardHandler),
		Now:    sb.cfg.now, // the sandbox's clock, a TestClock's too
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.failFirst > 0 {
				m.failFirst--
				return errors.New("stock system down")
			}
			m.fulfilled[cb.RefNo]++
			return nil
		}),
		OnStatus: func(_ context.Context, cb *paygate.Callback) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			st := cb.RefNo + "|" + string(cb.Status)
			if cb.Stale {
				st += "|stale"
			}
			m.statuses = append(m.statuses, st)
			return nil
		},
		OnReturn: func(w http.ResponseWriter, _ *http.Request, cb *paygate.Callback) {
			m.mu.Lock()
			m.returns++
			m.mu.Unlock()
			_, _ = io.WriteString(w, "thanks for order "+cb.RefNo)
		},
	}
	m.h = h
	m.srv = httptest.NewServer(h)
	t.Cleanup(m.srv.Close)
	return m
}

func (m *merchant) order(ref string) paygate.Order {
	return paygate.Order{RefNo: ref, ExtraData: "cart", Amount: 2590, Email: "buyer@example.com", ReturnURL: m.srv.URL + "/return"}
}

func newSandbox(t *testing.T, opts ...Option) *Server {
	t.Helper()
	sb := NewServer(append([]Option{WithRetryInterval(10 * time.Millisecond)}, opts...)...)
	t.Cleanup(sb.Close)
	return sb
}

func TestCheckoutPayFulfilsOnce(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, err := sb.Client()
	require.NoError(t, err)
	res, err := client.CreateOrder(context.Background(), m.order("INV-1"))
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Location, sb.URL+"/checkout/SB"), "an absolute URL: %s", res.Location)

	require.NoError(t, sb.Pay("INV-1~cart", paygate.StatusSuccess))
	sb.Settle()
	require.Equal(t, map[string]int{"INV-1": 1}, m.fulfilled)
	log := sb.Callbacks()
	require.Len(t, log, 1)
	require.True(t, log[0].Delivered)
	require.Len(t, log[0].Attempts, 1)
	require.Equal(t, 200, log[0].Attempts[0].StatusCode)
	require.Error(t, sb.Pay("INV-1~cart", paygate.StatusSuccess), "an order is decided once")

	_, err = client.CreateOrder(context.Background(), m.order("INV-1"))
	var apiErr *paygate.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusConflict, apiErr.StatusCode, "one order per refNo")
}

// Whatever form the refNo arrives in and whatever shape fpx has, the
// merchant's handler fulfils the order once under its base reference.
func TestCallbackShapes(t *testing.T) {
	for _, form := range []RefNoForm{RefNoSplit, RefNoJoined} {
		for _, shape := range []FPXShape{FPXDetailed, FPXAbsent, FPXWithoutCode, FPXEmptyCode, FPXNull, FPXNotJSON} {
			t.Run(fmt.Sprint(form, shape), func(t *testing.T) {
				sb := newSandbox(t, WithCallbackRefNo(form), WithCallbackFPX(shape))
				m := newMerchant(t, sb)
				client, _ := sb.Client()
				_, err := client.CreateOrder(context.Background(), m.order("INV-S"))
				require.NoError(t, err)
				require.NoError(t, sb.Pay("INV-S~cart", paygate.StatusSuccess))
				sb.Settle()
				require.Equal(t, map[string]int{"INV-S": 1}, m.fulfilled)
				f := sb.callbackFields(sb.Orders()[0])
				if form == RefNoSplit {
					require.Equal(t, "INV-S", f.Get("refNo"))
				} else {
					require.Equal(t, "INV-S~cart", f.Get("refNo"))
				}
				require.Equal(t, "cart", f.Get("extraData"))
				require.Equal(t, shape != FPXAbsent, f.Has("fpx"))
			})
		}
	}
}

func TestDirectCallbackRetriedUntil2xx(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	m.failFirst = 2
	client, _ := sb.Client()
	_, err := client.CreateOrder(context.Background(), m.order("INV-2"))
	require.NoError(t, err)
	require.NoError(t, sb.Pay("INV-2~cart", paygate.StatusSuccess))
	sb.Settle()
	log := sb.Callbacks()
	require.Len(t, log[0].Attempts, 3)
	require.Equal(t, []int{500, 500, 200}, []int{log[0].Attempts[0].StatusCode, log[0].Attempts[1].StatusCode, log[0].Attempts[2].StatusCode})
	require.Equal(t, 1, m.fulfilled["INV-2"])
}

func TestMaxAttempts(t *testing.T) {
	sb := newSandbox(t, WithMaxAttempts(3))
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(502) }))
	defer down.Close()
	client, _ := sb.Client()
	_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "X", Amount: 100, Email: "a@b.co", ReturnURL: down.URL})
	require.NoError(t, err)
	require.NoError(t, sb.Pay("X", paygate.StatusSuccess))
	sb.Settle()
	log := sb.Callbacks()
	require.Len(t, log[0].Attempts, 3)
	require.False(t, log[0].Delivered)
}

func TestPendingThenComplete(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, _ := sb.Client()
	_, err := client.CreateOrder(context.Background(), m.order("INV-3"))
	require.NoError(t, err)
	require.NoError(t, sb.Pay("INV-3~cart", paygate.StatusPending))
	sb.Settle()
	require.Equal(t, []string{"INV-3|pending"}, m.statuses)
	require.Empty(t, m.fulfilled)
	require.NoError(t, sb.Complete("INV-3~cart", paygate.StatusSuccess))
	sb.Settle()
	require.Equal(t, 1, m.fulfilled["INV-3"])
	require.Error(t, sb.Complete("INV-3~cart", paygate.StatusFailed), "only a pending order completes")
	require.Len(t, sb.Callbacks(), 2)
}

func TestSignatureChecks(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	late, _ := sb.Client(paygate.WithClock(func() time.Time { return time.Now().Add(-2 * time.Minute) }))
	_, err := late.CreateOrder(context.Background(), m.order("INV-4"))
	var apiErr *paygate.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
	require.Contains(t, string(apiErr.Body), "signature expired")

	wrongKey, err := paygate.ParseKey("00000000-0000-4000-8000-000000000000")
	require.NoError(t, err)
	wrong, _ := sb.Client(paygate.WithKey(wrongKey))
	_, err = wrong.CreateOrder(context.Background(), m.order("INV-4"))
	require.ErrorIs(t, err, paygate.ErrUnauthorized)

	resp, err := http.PostForm(sb.URL+"/v2/checkout", url.Values{"agency": {sb.Agency}, "refNo": {"R"}, "amount": {"1.00"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "unsigned")
	require.Empty(t, sb.Orders())
}

func TestOrderValidation(t *testing.T) {
	sb := newSandbox(t)
	key := sb.Key()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(f url.Values) (int, string) {
		signed, err := paygate.SignForm(key, f, time.Now())
		require.NoError(t, err)
		resp, err := noFollow.PostForm(sb.URL+"/v2/checkout", signed)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	base := url.Values{"agency": {sb.Agency}, "refNo": {"R1"}, "amount": {"10.00"}, "email": {"a@b.co"}, "returnUrl": {"https://shop.example/r"}}
	for _, tt := range []struct{ field, value, rule string }{
		{field: "agency", value: "OTHER", rule: "agency"}, {field: "amount", value: "10", rule: "exactly 2 places"}, {field: "amount", value: "0.99", rule: "at least 1.00"},
		{field: "email", value: "nope", rule: "e-mail"}, {field: "returnUrl", value: "/r", rule: "absolute"}, {field: "refNo", value: "", rule: "required"}, {field: "refNo", value: "é", rule: "ASCII"},
	} {
		f := url.Values{}
		for k, v := range base {
			f[k] = v
		}
		f.Set(tt.field, tt.value)
		code, body := post(f)
		require.Equal(t, http.StatusBadRequest, code, tt)
		require.Contains(t, body, tt.rule)
	}
	code, _ := post(base)
	require.Equal(t, http.StatusSeeOther, code)
}

// The hosted page's buttons decide the order; the browser is sent back with
// the unsigned fields (display only) while the signed callback goes server to
// server.
func TestHostedPageFlow(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, _ := sb.Client()
	res, err := client.CreateOrder(context.Background(), m.order("INV-5"))
	require.NoError(t, err)
	page, err := http.Get(res.Location)
	require.NoError(t, err)
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	for _, id := range []string{`id="pay"`, `id="decline"`, `id="leave-pending"`, "RM 25.90"} {
		require.Contains(t, string(html), id)
	}
	choice, err := http.PostForm(res.Location, url.Values{"choice": {"success"}})
	require.NoError(t, err)
	back, _ := io.ReadAll(choice.Body)
	choice.Body.Close()
	require.Contains(t, string(back), `action="`+m.srv.URL+`/return"`)
	require.Contains(t, string(back), `name="status" value="success"`)
	require.NotContains(t, string(back), `name="signature"`, "the browser return is unsigned")
	sb.Settle()
	require.Equal(t, 1, m.fulfilled["INV-5"])

	// What the browser posts back is display only.
	fields := sb.callbackFields(sb.Orders()[0])
	resp, err := http.PostForm(m.srv.URL+"/return", fields)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, 1, m.returns)
	require.Equal(t, 1, m.fulfilled["INV-5"])
}

func TestPayLinkAndQR(t *testing.T) {
	sb := newSandbox(t)
	client, _ := sb.Client()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, signed := range []bool{false, true} {
		ref := "LINK-1"
		if signed {
			ref = "LINK-2"
		}
		u, err := client.PayURL(paygate.PayLink{Category: "fpx", RefNo: ref, Amount: 500, Signed: signed})
		require.NoError(t, err)
		resp, err := noFollow.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, u)
	}
	require.Len(t, sb.Orders(), 2)
	require.NoError(t, sb.Pay("LINK-1", paygate.StatusSuccess), "no returnUrl: no callback, the page shows the outcome")
	require.Empty(t, sb.Callbacks())

	qr, err := client.GenerateQR(context.Background(), paygate.QRRequest{RefNo: "QR-1", Amount: 1234, Category: "duitnow", DuitNow: true})
	require.NoError(t, err)
	var body struct {
		QRPayload string `json:"qr_payload"`
	}
	require.NoError(t, json.Unmarshal(qr.Body, &body))
	require.Equal(t, sb.URL+"/pay/SANDBOX01/duitnow/QR-1/12.34", body.QRPayload)
}

func TestReports(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, _ := sb.Client()
	ctx := context.Background()
	for i, st := range []paygate.Status{paygate.StatusSuccess, paygate.StatusFailed, paygate.StatusSuccess, paygate.StatusSuccess, paygate.StatusPending} {
		ref := "R" + string(rune('0'+i))
		_, err := client.CreateOrder(ctx, m.order(ref))
		require.NoError(t, err)
		require.NoError(t, sb.Pay(ref+"~cart", st))
	}
	sb.Settle()

	count := func(c *paygate.Client, q paygate.ReportQuery) int {
		n := 0
		for _, err := range c.Payments(ctx, q) {
			require.NoError(t, err)
			n++
		}
		return n
	}
	require.Equal(t, 5, count(client, paygate.ReportQuery{ItemsPerPage: 2}))
	require.Equal(t, 3, count(client, paygate.ReportQuery{ItemsPerPage: 2, ApprovedOnly: true}))
	require.Equal(t, 1, count(client, paygate.ReportQuery{SellerOrderNo: "R1~cart"}))
	today := time.Now().In(time.FixedZone("MYT", 8*3600))
	require.Equal(t, 5, count(client, paygate.ReportQuery{Start: today, End: today}))
	require.Equal(t, 0, count(client, paygate.ReportQuery{Start: today.AddDate(0, 0, 1)}))

	// The API-key signature works too, and a bad token is refused.
	keyOnly, err := paygate.NewClient(paygate.WithAgency(sb.Agency), paygate.WithKey(sb.Key()), paygate.WithReportsURL(sb.URL))
	require.NoError(t, err)
	require.Equal(t, 3, count(keyOnly, paygate.ReportQuery{ApprovedOnly: true}))
	badToken, _ := paygate.NewClient(paygate.WithAuthToken("nope"), paygate.WithReportsURL(sb.URL))
	_, err = badToken.PaymentReportPage(ctx, paygate.ReportQuery{}, 0)
	require.ErrorIs(t, err, paygate.ErrUnauthorized)

	rec, err := client.LookupOrder(ctx, "R2~cart")
	require.NoError(t, err)
	var row struct {
		Status string `json:"status"`
		Code   string `json:"fpx_debit_auth_code"`
	}
	require.NoError(t, rec.Decode(&row))
	require.Equal(t, "success", row.Status)
	require.Equal(t, "00", row.Code)
	_, err = client.LookupOrder(ctx, "NOPE")
	require.ErrorIs(t, err, paygate.ErrOrderNotFound)
}

func testTxs(n int) []zakat.Transaction {
	txs := make([]zakat.Transaction, n)
	for i := range txs {
		txs[i] = zakat.Transaction{
			Agency: zakat.AgencyTest, OrderNo: "BANK-" + string(rune('A'+i%26)) + strings.Repeat("x", i/26), Amount: zakat.Amount(100 * (i + 1)),
			Name: "Ali", Email: "ali@example.com", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("", 8*3600)),
			Status: zakat.StatusSuccess, Data: zakat.Data{Type: zakat.ZakatPendapatan},
		}
	}
	return txs
}

func TestWebhook(t *testing.T) {
	sb := newSandbox(t)
	sender, err := paygate.NewWebhookSender(sb.URL, sb.WebhookPassword, paygate.WithBatchSize(7))
	require.NoError(t, err)
	report, err := sender.Send(context.Background(), testTxs(30))
	require.NoError(t, err)
	require.Len(t, report.Accepted, 30)
	require.Len(t, sb.Transactions(), 30)
	// Sending again stores nothing twice.
	_, err = sender.Send(context.Background(), testTxs(30))
	require.NoError(t, err)
	require.Len(t, sb.Transactions(), 30)
	require.Equal(t, 60, sb.WebhookReceived())

	wrong, _ := paygate.NewWebhookSender(sb.URL, "wrong")
	_, err = wrong.Send(context.Background(), testTxs(1))
	require.ErrorIs(t, err, paygate.ErrUnauthorized)

	req, _ := http.NewRequest(http.MethodPost, sb.URL+paths.Webhook, strings.NewReader(`{"transactions":[{"agency":"X"}]}`))
	req.Header.Set("X-API-Password", sb.WebhookPassword)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), `"/transactions/0/agency"`)
	require.Contains(t, string(body), `"/transactions/0/orderno"`)
}

// A webhook that fails half of the requests still ends with every
// transaction stored exactly once.
func TestWebhookFaults(t *testing.T) {
	n := 0
	var mu sync.Mutex
	flaky := func() float64 { mu.Lock(); defer mu.Unlock(); n++; return float64(n%2) * 0.99 } // every other request fails, from the second
	sb := newSandbox(t, WithWebhookFaults(WebhookFaults{Error503: 0.5, RetryAfter: -1, Latency: time.Millisecond, Rand: flaky}))
	sender, _ := paygate.NewWebhookSender(sb.URL, sb.WebhookPassword, paygate.WithBatchSize(5),
		paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 10, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}))
	report, err := sender.Send(context.Background(), testTxs(40))
	require.NoError(t, err)
	require.Len(t, report.Accepted, 40)
	require.Len(t, sb.Transactions(), 40)
	require.Equal(t, 40, sb.WebhookReceived(), "a failed request stored nothing")
	retried := 0
	for _, r := range report.Requests {
		if r.Attempts > 1 {
			retried++
		}
	}
	require.GreaterOrEqual(t, retried, 3, "half the requests failed and were retried")
}

// Close may be called more than once, as httptest.Server's may (a deferred
// Close after an explicit one): the second closed the closed channel again
// and panicked.
func TestServerCloseTwice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(s *Server)
	}{
		{name: "twice in a row", close: func(s *Server) { s.Close(); s.Close() }},
		{name: "at once", close: func(s *Server) {
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() { defer wg.Done(); s.Close() }()
			}
			wg.Wait()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer()
			require.NotPanics(t, func() { tc.close(s) })
			_, err := http.Get(s.URL + paths.Version)
			require.Error(t, err, "the server is closed")
		})
	}
}

// Start refuses a nil Option and WithClock(nil) with an error, as
// paygate.NewClient does its nil options: the first panicked inside Start
// (which promises an error), the second started a sandbox that panicked on
// the first signed request (its exp is checked against the clock).
func TestStartNilOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
		want string
	}{
		{name: "nil option", opt: nil, want: "nil Option"},
		{name: "nil clock", opt: WithClock(nil), want: "WithClock"},
		{name: "nil test clock", opt: WithTestClock(nil), want: "WithTestClock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() {
				var s *Server
				if s, err = Start(tc.opt); err == nil {
					s.Close()
				}
			})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// WithPayHost serves pay links and the QR image page on a host of their
// own: a client given it (paygate.WithPayURL, as Server.Client does)
// builds links there, orders still go to the checkout host, and a client
// without it builds links the sandbox does not serve (docs/assumptions.md
// A-paylink-host).
func TestPayHost(t *testing.T) {
	sb := newSandbox(t, WithPayHost())
	require.NotEqual(t, sb.URL, sb.PayURL)
	client, err := sb.Client()
	require.NoError(t, err)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	link := paygate.PayLink{Category: "fpx", RefNo: "LINK-1", Amount: 500}
	u, err := client.PayURL(link)
	require.NoError(t, err)
	require.Equal(t, sb.PayURL+"/pay/SANDBOX01/fpx/LINK-1/5.00", u)
	resp, err := noFollow.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, sb.URL+hostedPagePath+sb.Orders()[0].OrderNo, resp.Header.Get("Location"), "the hosted page is on the checkout host")

	qr, err := client.QRCodeURL(paygate.PayLink{Category: "fpx", RefNo: "LINK-2", Amount: 500})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(qr, sb.PayURL+paths.QR2), qr)
	resp, err = http.Get(qr)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	m := newMerchant(t, sb)
	res, err := client.CreateOrder(context.Background(), m.order("INV-1"))
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "orders still go to the checkout host")

	onCheckoutHost, err := sb.Client(paygate.WithPayURL(sb.URL))
	require.NoError(t, err)
	u, err = onCheckoutHost.PayURL(paygate.PayLink{Category: "fpx", RefNo: "LINK-3", Amount: 500})
	require.NoError(t, err)
	resp, err = noFollow.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "pay links are not served on the checkout host")
	resp, err = noFollow.Get(sb.PayURL + paths.Echo)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "the pay host serves pay links and QR pages only")
}

// A sandbox whose clock runs 5 minutes ahead of the merchant's dates its
// answers on it. A client that has seen one answer signs on the sandbox's
// clock and its orders are accepted; one that has not is refused (its
// exp is 4 minutes past on the sandbox's clock), the error explains the
// skew, and its next order is accepted.
func TestClockAheadOfTheClient(t *testing.T) {
	ahead := func() time.Time { return time.Now().Add(5 * time.Minute) }
	for _, tc := range []struct {
		name       string
		learnFirst bool
	}{
		{name: "after an answer, accepted", learnFirst: true},
		{name: "before any answer, refused and explained, then accepted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(WithClock(ahead))
			defer s.Close()
			client, err := s.Client()
			require.NoError(t, err)
			ctx := context.Background()
			order := paygate.Order{RefNo: "INV-SKEW", Amount: 1050, Email: "a@b.example", ReturnURL: "https://shop.example/return"}
			if tc.learnFirst {
				_, err := client.Echo(ctx)
				require.NoError(t, err)
			} else {
				_, err := client.CreateOrder(ctx, order)
				var apiErr *paygate.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
				require.InDelta(t, (5 * time.Minute).Seconds(), apiErr.ClockSkew.Seconds(), 2)
				require.Contains(t, err.Error(), "ahead of the client's (its Date header), so the signature's exp may have been out of date on it")
				require.NotContains(t, err.Error(), s.APIKey)
				require.Empty(t, s.Orders(), "the refused order was not stored")
			}
			offset, measured := client.ClockOffset()
			require.True(t, measured)
			require.InDelta(t, (5 * time.Minute).Seconds(), offset.Seconds(), 2)
			_, err = client.CreateOrder(ctx, order)
			require.NoError(t, err)
			require.Len(t, s.Orders(), 1)
		})
	}
}
