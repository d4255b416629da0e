package paygate

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/paygate-go/paygate/internal/testbound"
	"github.com/stretchr/testify/require"
)

const (
	testCheckout  = "https://checkout.example"
	testReports   = "https://reports.example"
	testAuthToken = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-9f8e7d"
	testAgency    = "AGENCY01"
)

// maxFakeRequests bounds the requests one test's fake server answers.
const maxFakeRequests = 500

// testNow is the fixed clock of the client tests.
var testNow = time.Unix(1_800_000_000, 0)

// independentSign recomputes a signature the way docs/protocol.md describes it,
// without calling the code under test: sorted keys, RFC 3986 through
// url.QueryEscape (space as %20), HMAC-SHA256 keyed with the hex of the UUID.
func independentSign(t *testing.T, prefix string, params url.Values) string {
	t.Helper()
	keys := make([]string, 0, len(params))
	for k := range params {
		if k != "signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		require.Len(t, params[k], 1, k)
		esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
		parts = append(parts, esc(k)+"="+esc(params[k][0]))
	}
	raw, err := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	require.NoError(t, err)
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(prefix + strings.Join(parts, "&")))
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// requireSignedForm checks a signed POST body independently.
func requireSignedForm(t *testing.T, form url.Values, now time.Time) {
	t.Helper()
	require.Equal(t, strconv.FormatInt(now.Unix()+60, 10), form.Get("exp"))
	require.Equal(t, independentSign(t, "", form), form.Get("signature"))
}

// requireSignedURL checks a signed GET independently.
func requireSignedURL(t *testing.T, u *url.URL, now time.Time) {
	t.Helper()
	q := u.Query()
	require.Equal(t, strconv.FormatInt(now.Unix()+60, 10), q.Get("exp"))
	require.Equal(t, independentSign(t, u.EscapedPath()+"?", q), q.Get("signature"))
}

type clientFixture struct {
	c    *Client
	mt   testbound.Mock
	logs *bytes.Buffer
	now  *time.Time
	mu   *sync.Mutex
}

// newTestClient builds a client on an httpmock transport, with a clock that
// tests can move and a captured debug log.
func newTestClient(t *testing.T, opts ...Option) clientFixture {
	t.Helper()
	f := clientFixture{mt: testbound.NewMock(t, maxFakeRequests, "a client's loops (retries, pages) end: at most "+strconv.Itoa(maxFakeRequests)+" requests in one test"), logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	now := testNow
	f.now = &now
	base := []Option{
		WithAgency(testAgency), WithKey(mustKey(t, testKeyUUID)),
		WithCheckoutURL(testCheckout), WithReportsURL(testReports),
		WithHTTPClient(&http.Client{Transport: f.mt}),
		WithClock(func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return *f.now }),
		WithLogger(slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}),
	}
	c, err := NewClient(append(base, opts...)...)
	require.NoError(t, err)
	f.c = c
	return f
}

func testOrder() Order {
	return Order{RefNo: "INV-1001", ExtraData: "cart 7", Amount: 14990, Email: "buyer@example.com", ReturnURL: "https://shop.example/paygate/return"}
}

func TestCheckoutForm(t *testing.T) {
	f := newTestClient(t)
	form, err := f.c.CheckoutForm(testOrder())
	require.NoError(t, err)
	require.Equal(t, testCheckout+"/v2/checkout", form.Action)
	require.Equal(t, testNow.Add(60*time.Second), form.Expires)
	require.Equal(t, "INV-1001~cart 7", form.Fields.Get("refNo"))
	require.Equal(t, "149.90", form.Fields.Get("amount"))
	require.Equal(t, testAgency, form.Fields.Get("agency"))
	requireSignedForm(t, form.Fields, testNow)

	form.CSPNonce = "n0nce"
	var page bytes.Buffer
	require.NoError(t, form.WriteHTML(&page))
	html := page.String()
	require.Contains(t, html, `action="https://checkout.example/v2/checkout"`)
	require.Contains(t, html, `<input type="hidden" name="signature" value="`+form.Fields.Get("signature")+`">`)
	require.Contains(t, html, `value="INV-1001~cart 7"`)
	require.Contains(t, html, `<script nonce="n0nce">`)
	require.Contains(t, html, `<button type="submit">`)
	require.Zero(t, f.mt.GetTotalCallCount())

	// Values are escaped: a hostile return URL cannot break out of the page.
	o := testOrder()
	o.ReturnURL = `https://shop.example/r?x="><script>alert(1)</script>`
	form, err = f.c.CheckoutForm(o)
	require.NoError(t, err)
	page.Reset()
	require.NoError(t, form.WriteHTML(&page))
	require.NotContains(t, page.String(), "<script>alert(1)")
	require.Contains(t, page.String(), "&lt;script&gt;alert(1)")
	require.NotContains(t, page.String(), "nonce=", "no nonce attribute without CSPNonce")
}

func TestCreateOrder(t *testing.T) {
	f := newTestClient(t)
	f.mt.RegisterResponder(http.MethodPost, testCheckout+"/v2/checkout", func(req *http.Request) (*http.Response, error) {
		require.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"))
		require.Equal(t, "paygate-go/"+Version, req.Header.Get("User-Agent"))
		require.Empty(t, req.Header.Get("Authorization"))
		body, _ := io.ReadAll(req.Body)
		form, err := url.ParseQuery(string(body))
		require.NoError(t, err)
		require.Equal(t, []string{"agency", "amount", "email", "exp", "refNo", "returnUrl", "signature"}, sortedKeys(form))
		requireSignedForm(t, form, testNow)
		resp := httpmock.NewStringResponse(http.StatusFound, "redirecting")
		resp.Header.Set("Location", testCheckout+"/pay/session/abc")
		return resp, nil
	})
	f.mt.RegisterResponder(http.MethodGet, testCheckout+"/pay/session/abc", httpmock.NewStringResponder(200, "hosted page"))
	res, err := f.c.CreateOrder(context.Background(), testOrder())
	require.NoError(t, err)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, testCheckout+"/pay/session/abc", res.Location)
	require.Equal(t, "redirecting", string(res.Body))
	require.Equal(t, 1, f.mt.GetTotalCallCount(), "the redirect is not followed")
}

func sortedKeys(v url.Values) []string {
	ks := make([]string, 0, len(v))
	for k := range v {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Every order rule is checked before anything is signed or sent, all at once,
// by field.
func TestOrderValidation(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Order)
		field string
		rule  string
	}{
		{"refNo missing", func(o *Order) { o.RefNo = "" }, "refNo", ruleRequired},
		{"refNo with ~", func(o *Order) { o.RefNo = "A~B" }, "refNo", "must not contain ~"},
		{"extraData with ~", func(o *Order) { o.ExtraData = "x~y" }, "extraData", "must not contain ~"},
		{"amount below 1.00", func(o *Order) { o.Amount = 99 }, "amount", "must be at least 1.00"},
		{"amount zero", func(o *Order) { o.Amount = 0 }, "amount", "must be at least 1.00"},
		{"email missing", func(o *Order) { o.Email = "" }, "email", ruleRequired},
		{"email with display name", func(o *Order) { o.Email = "Ali <ali@example.com>" }, "email", "must be a plain e-mail"},
		{"email bad", func(o *Order) { o.Email = "ali.example.com" }, "email", "must be a plain e-mail"},
		{"email address literal (one rule with the webhook)", func(o *Order) { o.Email = "a@[127.0.0.1]" }, "email", "must be a plain e-mail"},
		{"returnUrl missing", func(o *Order) { o.ReturnURL = "" }, "returnUrl", ruleRequired},
		{"returnUrl relative", func(o *Order) { o.ReturnURL = "/paygate/return" }, "returnUrl", "must be an absolute http(s) URL"},
		{"returnUrl ftp", func(o *Order) { o.ReturnURL = "ftp://shop.example/r" }, "returnUrl", "must be an absolute http(s) URL"},
		{"non-ASCII", func(o *Order) { o.ExtraData = "kedai makan é" }, "refNo", "must be ASCII"},
		{"over 255 bytes after composition", func(o *Order) { o.RefNo = strings.Repeat("R", 200); o.ExtraData = strings.Repeat("x", 60) }, "refNo", "must be at most 255 bytes"},
		{"agency missing", func(o *Order) { o.Agency = "" }, "agency", ruleRequired},
		{"cancelUrl relative", func(o *Order) { o.CancelURL = "/cancel" }, "cancelUrl", "must be an absolute http(s) URL"},
		{"cancelUrl javascript", func(o *Order) { o.CancelURL = "javascript:alert(1)" }, "cancelUrl", "must be an absolute http(s) URL"},
		{"utm_source non-ASCII", func(o *Order) { o.UTM.Source = "café" }, "utm_source", "must be ASCII"},
		{"utm_content over 255 bytes", func(o *Order) { o.UTM.Content = strings.Repeat("c", 256) }, "utm_content", "must be at most 255 bytes"},
		{"pref_bank over 255 bytes", func(o *Order) { o.PrefBank = strings.Repeat("B", 256) }, "pref_bank", "must be at most 255 bytes"},
		{"pref_method non-ASCII", func(o *Order) { o.PrefMethod = "fpx/b2b1é" }, "pref_method", "must be ASCII"},
		{"extra_data non-ASCII", func(o *Order) { o.DebugData = "ü" }, "extra_data", "must be ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []Option{}
			f := newTestClient(t, opts...)
			if tt.field == "agency" {
				f.c.agency = ""
			}
			f.mt.RegisterNoResponder(httpmock.NewStringResponder(200, ""))
			o := testOrder()
			tt.edit(&o)
			_, err1 := f.c.CheckoutForm(o)
			_, err2 := f.c.CreateOrder(context.Background(), o)
			for _, err := range []error{err1, err2} {
				var ve *ValidationError
				require.ErrorAs(t, err, &ve)
				require.Len(t, ve.Problems, 1, "%v", ve)
				require.Equal(t, tt.field, ve.Problems[0].Field)
				require.Contains(t, ve.Problems[0].Rule, tt.rule)
			}
			require.Zero(t, f.mt.GetTotalCallCount(), "nothing was sent")
		})
	}
	// All problems at once.
	f := newTestClient(t)
	_, err := f.c.CheckoutForm(Order{})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 4)
}

// The developer pages' optional order fields are sent only when set, with
// their pages' names, and signed like the rest.
func TestOrderOptionalFields(t *testing.T) {
	f := newTestClient(t)
	o := testOrder()
	form, err := f.c.CheckoutForm(o)
	require.NoError(t, err)
	require.Equal(t, []string{"agency", "amount", "email", "exp", "refNo", "returnUrl", "signature"}, sortedKeys(form.Fields), "unset fields are not sent")

	o.CancelURL = "https://shop.example/cart"
	o.PrefMethod, o.PrefBank = "fpx/b2b1", "ABB0235"
	o.UTM = UTM{Source: "instagram", Medium: "cpc", Campaign: "spring_sale", Term: "pay zakat", Content: "logolink"}
	o.DebugData = "debug 1"
	form, err = f.c.CheckoutForm(o)
	require.NoError(t, err)
	want := map[string]string{
		"cancelUrl": "https://shop.example/cart", "pref_method": "fpx/b2b1", "pref_bank": "ABB0235",
		"utm_source": "instagram", "utm_medium": "cpc", "utm_campaign": "spring_sale", "utm_term": "pay zakat",
		"utm_content": "logolink", "extra_data": "debug 1", "refNo": "INV-1001~cart 7",
	}
	for k, v := range want {
		require.Equal(t, v, form.Fields.Get(k), k)
	}
	require.Len(t, form.Fields, 7+9)
	requireSignedForm(t, form.Fields, testNow)
}

func TestPayURL(t *testing.T) {
	f := newTestClient(t)
	u, err := f.c.PayURL(PayLink{Category: "fpx", RefNo: "INV 1/2", ExtraData: "x", Amount: 1000})
	require.NoError(t, err)
	require.Equal(t, testCheckout+"/pay/AGENCY01/fpx/INV%201%2F2~x/10.00", u)

	signed, err := f.c.PayURL(PayLink{Agency: "AG/02", Category: "duitnow", RefNo: "R1", Amount: 150, Signed: true})
	require.NoError(t, err)
	pu, err := url.Parse(signed)
	require.NoError(t, err)
	require.Equal(t, "/pay/AG%2F02/duitnow/R1/1.50", pu.EscapedPath())
	requireSignedURL(t, pu, testNow)

	_, err = f.c.PayURL(PayLink{RefNo: "a~b", Amount: 50})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 3) // category, ~, amount
	noKey, err := NewClient(WithCheckoutURL(testCheckout), WithAgency(testAgency))
	require.NoError(t, err)
	_, err = noKey.PayURL(PayLink{Category: "fpx", RefNo: "R", Amount: 100, Signed: true})
	require.ErrorIs(t, err, ErrNoCredential)
	_, err = noKey.PayURL(PayLink{Category: "fpx", RefNo: "R", Amount: 100})
	require.NoError(t, err, "an unsigned pay URL needs no key")
}

// reportBody is a report page of n rows, numbered from first.
func reportBody(first, n, totalPages int) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id":%d,"seller_order_no":"INV-%d","amount":"10.00"}`, first+i, first+i)
	}
	return fmt.Sprintf(`{"status":"OK","data":[%s],"stats":{"total_pages":%d}}`, strings.Join(rows, ","), totalPages)
}

func TestPaymentReportPageAuth(t *testing.T) {
	q := ReportQuery{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), ApprovedOnly: true, ItemsPerPage: 50,
		SellerOrderNo: "INV-1", Extra: url.Values{"view": {"default"}}}
	t.Run("bearer", func(t *testing.T) {
		f := newTestClient(t, WithAuthToken(testAuthToken))
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(req *http.Request) (*http.Response, error) {
			require.Equal(t, "Bearer "+testAuthToken, req.Header.Get("Authorization"))
			qv := req.URL.Query()
			require.Equal(t, url.Values{"output": {"json"}, "items": {"50"}, "page": {"2"}, "is_approved": {"1"}, "start": {"2026-11-01"},
				"end": {"2026-11-21"}, "seller_order_no": {"INV-1"}, "view": {"default"}}, qv)
			return httpmock.NewStringResponse(200, reportBody(100, 2, 3)), nil
		})
		p, err := f.c.PaymentReportPage(context.Background(), q, 2)
		require.NoError(t, err)
		require.Len(t, p.Rows, 2)
		require.Equal(t, 3, p.TotalPages)
		require.Equal(t, 2, p.Page)
		var row struct{ ID int }
		require.NoError(t, p.Rows[1].Decode(&row))
		require.Equal(t, 101, row.ID)
	})
	t.Run("api key", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(req *http.Request) (*http.Response, error) {
			require.Empty(t, req.Header.Get("Authorization"))
			require.Equal(t, testAgency, req.URL.Query().Get("agency"))
			requireSignedURL(t, req.URL, testNow)
			return httpmock.NewStringResponse(200, reportBody(0, 1, 1)), nil
		})
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
		require.NoError(t, err)
	})
	t.Run("status not OK", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", httpmock.NewStringResponder(200, `{"status":"ERROR","data":[]}`))
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
		require.ErrorIs(t, err, ErrReportStatus)
	})
	t.Run("bad query: nothing sent", func(t *testing.T) {
		f := newTestClient(t)
		for _, bad := range []ReportQuery{
			{Start: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			{ItemsPerPage: -2},
			{MaxPages: -1},
			{Extra: url.Values{"page": {"7"}}},
		} {
			_, err := f.c.PaymentReportPage(context.Background(), bad, 0)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
		}
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, -1)
		require.Error(t, err)
		require.Zero(t, f.mt.GetTotalCallCount())
	})
}

func TestLookupOrder(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"found", 200, `{"status":"OK","fpxrequest":{"fpx_seller_order_no":"INV-1","fpx_debit_auth_code":"00"}}`, nil},
		{"404", 404, `{"status":"NOT_FOUND"}`, ErrOrderNotFound},
		{"null record", 200, `{"status":"OK","fpxrequest":null}`, ErrOrderNotFound},
		{"empty record", 200, `{"status":"OK","fpxrequest":{}}`, ErrOrderNotFound},
		{"status not OK", 200, `{"status":"FAIL"}`, ErrReportStatus},
		{"401", 401, `unauthorized`, ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestClient(t, WithAuthToken(testAuthToken))
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/fpxrequest", func(req *http.Request) (*http.Response, error) {
				require.Equal(t, url.Values{"fpx_seller_order_no": {"INV-1"}}, req.URL.Query())
				return httpmock.NewStringResponse(tt.status, tt.body), nil
			})
			rec, err := f.c.LookupOrder(context.Background(), "INV-1")
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			var r struct {
				Code FPXCode `json:"fpx_debit_auth_code"`
			}
			require.NoError(t, rec.Decode(&r))
			require.Equal(t, FPXCode("00"), r.Code)
		})
	}
}

// dialError is what a refused connection looks like: nothing was sent.
func dialError() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
}

func TestClientRetryMatrix(t *testing.T) {
	reset := errors.New("read: connection reset by peer")
	tests := []struct {
		name     string
		call     string // "get" (report) or "post" (CreateOrder)
		answers  []any
		attempts int
		ok       bool
	}{
		{"GET 500 then 200", "get", []any{500, 200}, 2, true},
		{"GET 502 503 504 then 200", "get", []any{502, 503, 504, 200}, 4, true},
		{"GET 429 then 200", "get", []any{429, 200}, 2, true},
		{"GET reset then 200", "get", []any{reset, 200}, 2, true},
		{"GET 500 always", "get", []any{500}, 4, false},
		{"GET 400 not retried", "get", []any{400}, 1, false},
		{"GET 404 not retried", "get", []any{404}, 1, false},
		{"POST 503 then 200", "post", []any{503, 200}, 2, true},
		{"POST 429 then 200", "post", []any{429, 200}, 2, true},
		{"POST refused connection then 200", "post", []any{dialError(), 200}, 2, true},
		{"POST 500 not retried (may have been created)", "post", []any{500, 200}, 1, false},
		{"POST 502 not retried", "post", []any{502, 200}, 1, false},
		{"POST reset not retried (may have been sent)", "post", []any{reset, 200}, 1, false},
		{"POST 401", "post", []any{401}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestClient(t)
			var exps []string
			calls := 0
			responder := func(req *http.Request) (*http.Response, error) {
				a := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				if req.Method == http.MethodPost {
					body, _ := io.ReadAll(req.Body)
					form, _ := url.ParseQuery(string(body))
					exps = append(exps, form.Get("exp"))
				} else {
					exps = append(exps, req.URL.Query().Get("exp"))
				}
				f.mu.Lock()
				*f.now = f.now.Add(7 * time.Second) // time passes between attempts
				f.mu.Unlock()
				if err, ok := a.(error); ok {
					return nil, err
				}
				return httpmock.NewStringResponse(a.(int), reportBody(0, 1, 1)), nil
			}
			f.mt.RegisterResponder(http.MethodPost, testCheckout+"/v2/checkout", responder)
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", responder)
			var err error
			if tt.call == "get" {
				_, err = f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
			} else {
				_, err = f.c.CreateOrder(context.Background(), testOrder())
			}
			require.Equal(t, tt.attempts, calls)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			for i := 1; i < len(exps); i++ {
				require.NotEqual(t, exps[i-1], exps[i], "every attempt is signed afresh")
			}
			if tt.name == "POST 401" {
				require.ErrorIs(t, err, ErrUnauthorized)
				var apiErr *APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, 401, apiErr.StatusCode)
			}
		})
	}
}

// Retry-After is honoured, and nothing is sent after the context ends.
func TestClientRetryAfterAndCancel(t *testing.T) {
	f := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Second}))
	var times []time.Time
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(*http.Request) (*http.Response, error) {
		times = append(times, time.Now())
		if len(times) == 1 {
			resp := httpmock.NewStringResponse(503, "")
			resp.Header.Set("Retry-After", "1")
			return resp, nil
		}
		return httpmock.NewStringResponse(200, reportBody(0, 1, 1)), nil
	})
	_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, times[1].Sub(times[0]), time.Second)

	g := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	g.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(*http.Request) (*http.Response, error) {
		time.AfterFunc(10*time.Millisecond, cancel)
		return httpmock.NewStringResponse(500, ""), nil
	})
	start := time.Now()
	_, err = g.c.PaymentReportPage(ctx, ReportQuery{}, 0)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, 1, g.mt.GetTotalCallCount())
	_, err = g.c.PaymentReportPage(ctx, ReportQuery{}, 0)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, g.mt.GetTotalCallCount(), "nothing after cancel")
}

// Neither the API key nor the AuthToken appears in a log line, an error or a
// %v of the client.
func TestClientNeverLeaksSecrets(t *testing.T) {
	f := newTestClient(t, WithAuthToken(testAuthToken))
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", httpmock.NewStringResponder(403, "token "+"rejected"))
	f.mt.RegisterResponder(http.MethodPost, testCheckout+"/v2/checkout", func(*http.Request) (*http.Response, error) { return nil, dialError() })
	_, err1 := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
	_, err2 := f.c.CreateOrder(context.Background(), testOrder())
	_, err3 := ParseKey(testKeyUUID[:30] + "zz")
	require.Error(t, err1)
	require.Error(t, err2)
	require.Error(t, err3)
	texts := []string{err1.Error(), err2.Error(), err3.Error(), f.logs.String(),
		fmt.Sprintf("%v", f.c), fmt.Sprintf("%+v", f.c), fmt.Sprintf("%#v", f.c), fmt.Sprintf("%+v", *f.c)}
	for _, s := range texts {
		require.NotContains(t, s, testAuthToken)
		require.NotContains(t, s, "c2VjcmV0LXRva2Vu")
		require.NotContains(t, strings.ToLower(s), "3f2504e0")
	}
	require.Contains(t, f.logs.String(), "path=/api/report/v1/payment")
	require.NotContains(t, f.logs.String(), "signature=")
}

func TestClientCredentials(t *testing.T) {
	none, err := NewClient()
	require.NoError(t, err)
	ctx := context.Background()
	_, err = none.CheckoutForm(testOrder())
	require.ErrorIs(t, err, ErrNoCredential)
	_, err = none.PaymentReportPage(ctx, ReportQuery{}, 0)
	require.ErrorIs(t, err, ErrNoCredential)
	urlsOnly, _ := NewClient(WithCheckoutURL(testCheckout), WithReportsURL(testReports))
	_, err = urlsOnly.LookupOrder(ctx, "INV-1")
	require.ErrorIs(t, err, ErrNoCredential)
	_, err = urlsOnly.GenerateQR(ctx, QRRequest{RefNo: "R", Amount: 100, Category: "fpx"})
	require.ErrorIs(t, err, ErrNoCredential)
	keyNoAgency, _ := NewClient(WithReportsURL(testReports), WithKey(mustKey(t, testKeyUUID)))
	_, err = keyNoAgency.PaymentReportPage(ctx, ReportQuery{}, 0)
	require.ErrorIs(t, err, ErrNoCredential)

	for _, bad := range []Option{
		WithAuthToken(""), WithAuthToken("a b"), WithCheckoutURL("http://checkout.example"),
		WithReportsURL("reports.example"), WithReportsURL("https://r.example/?x=1"), WithAgency(""), WithHTTPClient(nil),
		WithClock(nil), WithLogger(nil), WithAttemptTimeout(0), WithKey(Key{}), WithUserPassword("u", "p"),
	} {
		_, err := NewClient(bad)
		require.Error(t, err)
	}
	_, err = NewClient(WithUserPassword("merchant", "pw"))
	require.ErrorIs(t, err, ErrDeprecatedAuth)
}

// Without an API key an order is unsigned: no exp, no signature (the
// protocol asks for a signature only when using an API key).
func TestUnsignedOrder(t *testing.T) {
	c, err := NewClient(WithAgency(testAgency), WithCheckoutURL(testCheckout))
	require.NoError(t, err)
	form, err := c.CheckoutForm(testOrder())
	require.NoError(t, err)
	require.False(t, form.Fields.Has("signature"))
	require.False(t, form.Fields.Has("exp"))
	require.True(t, form.Expires.IsZero())
	require.Equal(t, "INV-1001~cart 7", form.Fields.Get("refNo"))
	_, err = c.GenerateQR(context.Background(), QRRequest{RefNo: "R", Amount: 100, Category: "fpx"})
	require.ErrorIs(t, err, ErrNoCredential, "QR requests are always signed")
}

func TestNewClientFromEnv(t *testing.T) {
	t.Setenv(EnvAgency, testAgency)
	t.Setenv(EnvAPIKey, testKeyUUID)
	t.Setenv(EnvCheckoutURL, testCheckout)
	t.Setenv(EnvReportsURL, "http://127.0.0.1:9999")
	c, err := NewClientFromEnv()
	require.NoError(t, err)
	require.Equal(t, testAgency, c.agency)
	require.True(t, c.key.valid())
	require.Equal(t, "http://127.0.0.1:9999", c.reportsURL.String())

	for _, name := range []string{"PAYGATE_TOKEN", "PAYGATE_USERNAME", "PAYGATE_PASSWORD"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "anything")
			_, err := NewClientFromEnv()
			require.ErrorIs(t, err, ErrDeprecatedAuth)
			require.Contains(t, err.Error(), name)
			require.NotContains(t, err.Error(), "anything")
		})
	}
	t.Setenv(EnvAPIKey, "bad-key")
	_, err = NewClientFromEnv()
	require.ErrorIs(t, err, ErrInvalidKey)
	require.Contains(t, err.Error(), EnvAPIKey)
}

// clearClientEnv unsets every variable NewClientFromEnv reads for the test.
func clearClientEnv(t *testing.T) {
	t.Helper()
	for _, e := range clientEnv {
		t.Setenv(e.name, "")
		os.Unsetenv(e.name)
	}
}

// NewClientFromEnv fails at construction when no host is set, and every
// configuration error of an env-built client, at construction or in a
// later call, names the variable and never the Go option nor a secret.
func TestClientFromEnvErrorsNameTheVariable(t *testing.T) {
	order := Order{RefNo: "INV-1", Amount: 100, Email: "a@b.example", ReturnURL: "https://shop.example/return"}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		call   func(c *Client) error // nil: the error is NewClientFromEnv's
		want   []string
		notOpt string // the option the error must not name
		is     error
	}{
		{"nothing set", nil, nil, []string{EnvCheckoutURL, EnvReportsURL}, "WithCheckoutURL", ErrNoCredential},
		{"only the agency and key", map[string]string{EnvAgency: testAgency, EnvAPIKey: testKeyUUID}, nil, []string{EnvCheckoutURL, EnvReportsURL}, "WithReportsURL", ErrNoCredential},
		{"checkout URL not a URL", map[string]string{EnvCheckoutURL: "ftp://x"}, nil, []string{EnvCheckoutURL + `: "ftp://x": want an absolute http(s) URL`}, "WithCheckoutURL", nil},
		{"reports URL in clear", map[string]string{EnvReportsURL: "http://remote.example"}, nil, []string{EnvReportsURL, "loopback"}, "WithReportsURL", nil},
		{"malformed key", map[string]string{EnvCheckoutURL: testCheckout, EnvAPIKey: "not-a-key"}, nil, []string{EnvAPIKey + ": "}, "WithKey", ErrInvalidKey},
		{"token with a space", map[string]string{EnvReportsURL: testReports, EnvAuthToken: "tok en"}, nil, []string{EnvAuthToken + ": empty, or holds white space"}, "WithAuthToken", nil},
		{"order without checkout URL", map[string]string{EnvReportsURL: testReports, EnvAgency: testAgency}, func(c *Client) error { _, err := c.CheckoutForm(order); return err }, []string{EnvCheckoutURL + " is not set"}, "WithCheckoutURL", ErrNoCredential},
		{"pay URL without checkout URL", map[string]string{EnvReportsURL: testReports, EnvAgency: testAgency, EnvAPIKey: testKeyUUID}, func(c *Client) error {
			_, err := c.PayURL(PayLink{RefNo: "R", Amount: 100, Category: "fpx"})
			return err
		}, []string{EnvCheckoutURL + " is not set"}, "WithCheckoutURL", ErrNoCredential},
		{"report without reports URL", map[string]string{EnvCheckoutURL: testCheckout, EnvAuthToken: "token"}, func(c *Client) error { _, err := c.LookupOrder(context.Background(), "S-1"); return err }, []string{EnvReportsURL + " is not set"}, "WithReportsURL", ErrNoCredential},
		{"report without credential", map[string]string{EnvReportsURL: testReports}, func(c *Client) error { _, err := c.LookupOrder(context.Background(), "S-1"); return err }, []string{"needs an API key (" + EnvAPIKey + ")", "(or " + EnvAuthToken + ")"}, "WithKey", ErrNoCredential},
		{"signed report without agency", map[string]string{EnvReportsURL: testReports, EnvAPIKey: testKeyUUID}, func(c *Client) error { _, err := c.LookupOrder(context.Background(), "S-1"); return err }, []string{"signed reports need " + EnvAgency}, "WithAgency", ErrNoCredential},
		{"order without agency", map[string]string{EnvCheckoutURL: testCheckout}, func(c *Client) error { _, err := c.CheckoutForm(order); return err }, []string{"Order.Agency or " + EnvAgency}, "WithAgency", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearClientEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := NewClientFromEnv()
			if tc.call != nil {
				require.NoError(t, err)
				err = tc.call(c)
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), tc.notOpt)
			require.NotContains(t, err.Error(), "tok en")
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// A client built with options still names the options in the same errors.
func TestClientOptionErrorsNameTheOption(t *testing.T) {
	clearClientEnv(t)
	_, err := NewClient(WithCheckoutURL("ftp://x"))
	require.ErrorContains(t, err, "WithCheckoutURL")
	c, err := NewClient(WithReportsURL(testReports))
	require.NoError(t, err)
	_, err = c.PayURL(PayLink{RefNo: "R", Amount: 100, Category: "fpx"})
	require.ErrorContains(t, err, "WithCheckoutURL is not set")
	_, err = c.LookupOrder(context.Background(), "S-1")
	require.ErrorContains(t, err, "needs an API key (WithKey)")
	t.Setenv(EnvReportsURL, testReports)
	_, err = NewClientFromEnv(WithCheckoutURL("ftp://x"))
	require.ErrorContains(t, err, "WithCheckoutURL", "an option given to NewClientFromEnv is named as an option")
	_, err = NewClientFromEnv(WithReportsURL(testReports))
	require.NoError(t, err)
}
