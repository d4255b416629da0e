package paygate

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
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
	"github.com/paygate-go/paygate/internal/paths"
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
		WithClock(nil), WithLogger(nil), WithAttemptTimeout(0), WithKey(Key{}),
	} {
		_, err := NewClient(bad)
		require.Error(t, err)
	}
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

	// Set is refused, even empty (a deploy template's `PAYGATE_TOKEN=`):
	// the deprecated method must not be configurable, not even by accident.
	for _, name := range []string{"PAYGATE_TOKEN", "PAYGATE_USERNAME", "PAYGATE_PASSWORD"} {
		for _, value := range []string{"anything", ""} {
			t.Run(name+"="+value, func(t *testing.T) {
				t.Setenv(name, value)
				_, err := NewClientFromEnv()
				require.ErrorIs(t, err, ErrDeprecatedAuth)
				require.Contains(t, err.Error(), name)
				require.NotContains(t, err.Error(), "anything")
			})
		}
	}
	t.Setenv(EnvAPIKey, "bad-key")
	_, err = NewClientFromEnv()
	require.ErrorIs(t, err, ErrInvalidKey)
	require.Contains(t, err.Error(), EnvAPIKey)
}

// clearClientEnv unsets every variable NewClientFromEnv reads for the test.
func clearClientEnv(t *testing.T) {
	t.Helper()
	for _, e := range envVars {
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
		{name: "nothing set", env: nil, call: nil, want: []string{EnvCheckoutURL, EnvReportsURL}, notOpt: "WithCheckoutURL", is: ErrNoCredential},
		{name: "only the agency and key", env: map[string]string{EnvAgency: testAgency, EnvAPIKey: testKeyUUID}, call: nil, want: []string{EnvCheckoutURL, EnvReportsURL}, notOpt: "WithReportsURL", is: ErrNoCredential},
		{name: "checkout URL not a URL", env: map[string]string{EnvCheckoutURL: "ftp://x"}, call: nil, want: []string{EnvCheckoutURL + `: "ftp://x": want an absolute http(s) URL`}, notOpt: "WithCheckoutURL", is: nil},
		{name: "reports URL in clear", env: map[string]string{EnvReportsURL: "http://remote.example"}, call: nil, want: []string{EnvReportsURL, "loopback"}, notOpt: "WithReportsURL", is: nil},
		{name: "malformed key", env: map[string]string{EnvCheckoutURL: testCheckout, EnvAPIKey: "not-a-key"}, call: nil, want: []string{EnvAPIKey + ": "}, notOpt: "WithKey", is: ErrInvalidKey},
		{name: "token with a space", env: map[string]string{EnvReportsURL: testReports, EnvAuthToken: "tok en"}, call: nil, want: []string{EnvAuthToken + ": empty, or holds white space"}, notOpt: "WithAuthToken", is: nil},
		{name: "order without checkout URL", env: map[string]string{EnvReportsURL: testReports, EnvAgency: testAgency}, call: func(c *Client) error { _, err := c.CheckoutForm(order); return err }, want: []string{EnvCheckoutURL + " is not set"}, notOpt: "WithCheckoutURL", is: ErrNoCredential},
		{name: "pay URL without checkout URL", env: map[string]string{EnvReportsURL: testReports, EnvAgency: testAgency, EnvAPIKey: testKeyUUID}, call: func(c *Client) error {
			_, err := c.PayURL(PayLink{RefNo: "R", Amount: 100, Category: "fpx"})
			return err
		}, want: []string{EnvCheckoutURL + " is not set"}, notOpt: "WithCheckoutURL", is: ErrNoCredential},
		{name: "report without reports URL", env: map[string]string{EnvCheckoutURL: testCheckout, EnvAuthToken: "token"}, call: func(c *Client) error { _, err := c.LookupOrder(context.Background(), "S-1"); return err }, want: []string{EnvReportsURL + " is not set"}, notOpt: "WithReportsURL", is: ErrNoCredential},
		{name: "report without credential", env: map[string]string{EnvReportsURL: testReports}, call: func(c *Client) error { _, err := c.LookupOrder(context.Background(), "S-1"); return err }, want: []string{"needs an API key (" + EnvAPIKey + ")", "(or " + EnvAuthToken + ")"}, notOpt: "WithKey", is: ErrNoCredential},
		{name: "signed report without agency", env: map[string]string{EnvReportsURL: testReports, EnvAPIKey: testKeyUUID}, call: func(c *Client) error { _, err := c.LookupOrder(context.Background(), "S-1"); return err }, want: []string{"signed reports need " + EnvAgency}, notOpt: "WithAgency", is: ErrNoCredential},
		{name: "order without agency", env: map[string]string{EnvCheckoutURL: testCheckout}, call: func(c *Client) error { _, err := c.CheckoutForm(order); return err }, want: []string{"Order.Agency or " + EnvAgency}, notOpt: "WithAgency", is: nil},
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

// A nil option, untyped or a nil TransportOption, is an error of
// NewClient, not a panic.
func TestNewClientNilOption(t *testing.T) {
	var transport TransportOption
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{name: "a nil Option", opts: []Option{WithAgency("A"), nil}},
		{name: "a nil TransportOption", opts: []Option{transport}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = NewClient(tc.opts...) })
			require.ErrorContains(t, err, "nil option")
		})
	}
}

// KeyFromEnv reads the variable NewClientFromEnv reads, and its errors
// name it and what it must hold, never the value.
func TestKeyFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        error
		says        string
	}{
		{name: "a UUID", value: testKeyUUID},
		{name: "unset", value: "", want: ErrNoCredential, says: "PAYGATE_API_KEY is not set: want the agency's API key, a UUID"},
		{name: "malformed", value: "not-a-key-zzz", want: ErrInvalidKey, says: "PAYGATE_API_KEY: invalid API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvAPIKey, tc.value)
			key, err := KeyFromEnv()
			if tc.want == nil {
				require.NoError(t, err)
				signed, err := signCallback(key, url.Values{"refNo": {"INV-1"}})
				require.NoError(t, err)
				require.NoError(t, VerifyCallback(signed, mustKey(t, testKeyUUID)), "the key of the variable")
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.says)
			if tc.value != "" {
				require.NotContains(t, err.Error(), tc.value)
			}
		})
	}
}

// WithPayURL moves pay links and the QR image page off the checkout host,
// a path given with it prefixing theirs; unset, they stay on the checkout
// URL's host (docs/assumptions.md A-paylink-host).
func TestWithPayURL(t *testing.T) {
	link := PayLink{Category: "fpx", RefNo: "INV-1", Amount: 1000}
	for _, tc := range []struct {
		name          string
		opts          []Option
		pay, qrPrefix string
	}{
		{name: "unset", opts: nil, pay: testCheckout + "/pay/" + testAgency + "/fpx/INV-1/10.00", qrPrefix: testCheckout + "/qr2/?q="},
		{name: "checkout URL with a path, unset", opts: []Option{WithCheckoutURL("https://pay.tulus.my/")}, pay: "https://pay.tulus.my/pay/" + testAgency + "/fpx/INV-1/10.00", qrPrefix: "https://pay.tulus.my/qr2/?q="},
		{name: "a pay host", opts: []Option{WithPayURL("https://snapnpay.my")}, pay: "https://snapnpay.my/pay/" + testAgency + "/fpx/INV-1/10.00", qrPrefix: "https://snapnpay.my/qr2/?q="},
		{name: "a pay host with a path", opts: []Option{WithPayURL("https://links.example/shop/")}, pay: "https://links.example/shop/pay/" + testAgency + "/fpx/INV-1/10.00", qrPrefix: "https://links.example/shop/qr2/?q="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t, tc.opts...)
			u, err := f.c.PayURL(link)
			require.NoError(t, err)
			require.Equal(t, tc.pay, u)
			qr, err := f.c.QRCodeURL(link)
			require.NoError(t, err)
			require.Equal(t, tc.qrPrefix+url.QueryEscape(tc.pay), qr)
			target, err := f.c.checkoutTarget()
			require.NoError(t, err)
			require.NotContains(t, target, "snapnpay", "orders stay on the checkout URL")
		})
	}
	for _, bad := range []string{"ftp://snapnpay.my", "http://remote.example", "https://u:hunter2@snapnpay.my", "https://snapnpay.my/?x=1"} {
		_, err := NewClient(WithPayURL(bad))
		require.ErrorContains(t, err, "WithPayURL", bad)
		require.NotContains(t, err.Error(), "hunter2")
	}
	noCheckout, err := NewClient(WithAgency(testAgency), WithPayURL("https://snapnpay.my"))
	require.NoError(t, err)
	u, err := noCheckout.PayURL(link)
	require.NoError(t, err, "a pay link needs the pay host only")
	require.True(t, strings.HasPrefix(u, "https://snapnpay.my/pay/"))
}

// dated answers status with the service's clock at skewed from the
// client's (testNow).
func dated(status int, skewed time.Duration) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, `{"status":"OK","data":[]}`)
		resp.Header.Set("Date", testNow.Add(skewed).Format(http.TimeFormat))
		return resp, nil
	}
}

// The client learns the service's clock from any answer's Date header and
// signs exp on it (from 5 s to an hour off); a refused signed request
// whose answer shows a clock off from the one it was signed with says so,
// with the measured offset. Nothing is repeated for it.
func TestClockSkew(t *testing.T) {
	for _, tc := range []struct {
		name       string
		skew       time.Duration
		learnFirst bool // an Echo answered before the signed request
		status     int  // the signed request's answer
		wantExp    time.Duration
		explained  string // in the error; "" for none
	}{
		{name: "in step", skew: 2 * time.Second, learnFirst: true, status: 200, wantExp: 60 * time.Second},
		{name: "ahead, learnt", skew: 5 * time.Minute, learnFirst: true, status: 200, wantExp: 5*time.Minute + 60*time.Second},
		{name: "behind, learnt", skew: -5 * time.Minute, learnFirst: true, status: 200, wantExp: -5*time.Minute + 60*time.Second},
		{name: "beyond an hour is not followed", skew: 2 * time.Hour, learnFirst: true, status: 401, wantExp: 60 * time.Second, explained: "2h0m0s ahead of the client's (its Date header), so the signature's exp may have been out of date on it; that is more than the 1h0m0s"},
		{name: "refused before learning", skew: 5 * time.Minute, status: 401, wantExp: 60 * time.Second, explained: "5m0s ahead of the client's (its Date header), so the signature's exp may have been out of date on it; later requests are signed on the service's clock: try again"},
		{name: "refused after learning is not the clock", skew: 5 * time.Minute, learnFirst: true, status: 401, wantExp: 5*time.Minute + 60*time.Second},
		{name: "403 before learning", skew: -time.Minute, status: 403, wantExp: 60 * time.Second, explained: "1m0s behind the client's"},
		{name: "other refusals are not the clock", skew: 5 * time.Minute, status: 400, wantExp: 60 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t)
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/echo", dated(200, tc.skew))
			var exp string
			f.mt.RegisterResponder(http.MethodGet, testReports+paths.FPXRequest, func(req *http.Request) (*http.Response, error) {
				exp = req.URL.Query().Get("exp")
				return dated(tc.status, tc.skew)(req)
			})
			if tc.learnFirst {
				_, err := f.c.Echo(context.Background())
				require.NoError(t, err)
			}
			_, err := f.c.LookupOrder(context.Background(), "GW-1")
			require.Equal(t, strconv.FormatInt(testNow.Add(tc.wantExp).Unix(), 10), exp)
			offset, measured := f.c.ClockOffset()
			require.True(t, measured)
			require.Equal(t, tc.skew, offset)
			var apiErr *APIError
			if tc.status/100 != 2 {
				require.ErrorAs(t, err, &apiErr)
			}
			if tc.explained == "" {
				if apiErr != nil {
					require.Zero(t, apiErr.ClockSkew)
					require.NotContains(t, err.Error(), "clock")
				}
				return
			}
			require.Equal(t, tc.skew, apiErr.ClockSkew)
			require.Contains(t, err.Error(), tc.explained)
		})
	}
}

// A Bearer request carries no exp: its refusal is never the clock's.
func TestClockSkewNotForBearer(t *testing.T) {
	f := newTestClient(t, WithAuthToken(testAuthToken))
	f.mt.RegisterResponder(http.MethodGet, testReports+paths.FPXRequest, dated(401, 5*time.Minute))
	_, err := f.c.LookupOrder(context.Background(), "GW-1")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	require.Zero(t, apiErr.ClockSkew)
	offset, _ := f.c.ClockOffset()
	require.Equal(t, 5*time.Minute, offset, "still learnt")
}
