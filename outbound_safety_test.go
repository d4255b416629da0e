package paygate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// capture is a second server that must see nothing: it records every
// request that reaches it.
type capture struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCapture(t *testing.T) *capture {
	c := &capture{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.seen = append(c.seen, r.Method+" "+r.URL.String()+" auth="+r.Header.Get("Authorization")+" pw="+r.Header.Get("X-API-Password"))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"status":"OK","data":[],"stats":{"total_pages":1},"fpxrequest":{"x":1}}`))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// No credentialed request follows a redirect, whatever its code: the
// capturing server sees nothing, and the error names only the host.
func TestNoCredentialFollowsRedirect(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			elsewhere := newCapture(t)
			redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.srv.URL+"/collect/path?token=leak", code)
			}))
			t.Cleanup(redirector.Close)
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			fast := WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
			// The caller's own client would follow redirects; the SDK must not.
			follows := WithHTTPClient(&http.Client{})
			signed, err := NewClient(WithAgency("AG01"), WithKey(mustKey(t, testKeyUUID)), WithCheckoutURL(redirector.URL),
				WithReportsURL(redirector.URL), follows, WithLogger(logger), fast)
			require.NoError(t, err)
			bearer, err := NewClient(WithAuthToken(testAuthToken), WithReportsURL(redirector.URL), follows, WithLogger(logger), fast)
			require.NoError(t, err)
			sender, err := NewWebhookSender(redirector.URL, testPassword, follows, WithLogger(logger), fast)
			require.NoError(t, err)

			ctx := context.Background()
			var errs []error
			_, err = bearer.PaymentReportPage(ctx, ReportQuery{}, 0)
			errs = append(errs, err)
			_, err = signed.PaymentReportPage(ctx, ReportQuery{}, 0)
			errs = append(errs, err)
			_, err = bearer.LookupOrder(ctx, "INV-1")
			errs = append(errs, err)
			_, err = signed.GenerateQR(ctx, QRRequest{RefNo: "INV-1", Amount: 1000, Category: "fpx"})
			errs = append(errs, err)
			report, err := sender.Send(ctx, validTxs(3))
			errs = append(errs, err)
			for _, err := range errs {
				require.ErrorIs(t, err, ErrRedirect)
				require.Contains(t, err.Error(), strings.TrimPrefix(elsewhere.srv.URL, "http://"))
				require.NotContains(t, err.Error(), "/collect/path")
				require.NotContains(t, err.Error(), "leak")
			}
			require.Len(t, report.Unconfirmed, 3, "a redirected batch is not proven stored nor refused")
			require.Empty(t, report.Accepted)

			// CreateOrder returns the redirect (the hosted page) without following it.
			res, err := signed.CreateOrder(ctx, testOrder())
			require.NoError(t, err)
			require.Equal(t, code, res.StatusCode)

			elsewhere.mu.Lock()
			defer elsewhere.mu.Unlock()
			require.Empty(t, elsewhere.seen, "the second server saw a credentialed request")
			requireNoSecret(t, logs.String())
		})
	}
}

// requireNoSecret fails if text holds a credential of the tests: the API
// key (any form), the AuthToken, the webhook password, a signature value or
// URL userinfo.
func requireNoSecret(t *testing.T, text string) {
	t.Helper()
	lower := strings.ToLower(text)
	for _, secret := range []string{"3f2504e0", strings.ReplaceAll(testKeyUUID, "-", ""), strings.ToLower(testAuthToken), strings.ToLower(testPassword), "hunter2"} {
		require.NotContains(t, lower, secret)
	}
	for _, m := range signatureValue.FindAllString(text, -1) {
		require.Contains(t, m, redacted, "a signature value in %q", text)
	}
}

// Errors and logs of failing requests carry no signature, and configuration
// errors no userinfo.
func TestErrorsCarryNoSecret(t *testing.T) {
	// A server that accepts and drops every connection: the transport error
	// net/http makes holds the whole URL, query and signature included.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	base := "http://" + ln.Addr().String()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fast := WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	signed, err := NewClient(WithAgency("AG01"), WithKey(mustKey(t, testKeyUUID)), WithCheckoutURL(base), WithReportsURL(base), WithLogger(logger), fast)
	require.NoError(t, err)
	bearer, err := NewClient(WithAuthToken(testAuthToken), WithReportsURL(base), WithLogger(logger), fast)
	require.NoError(t, err)
	sender, err := NewWebhookSender(base, testPassword, WithLogger(logger), fast)
	require.NoError(t, err)
	ctx := context.Background()
	var texts []string
	collect := func(err error) {
		require.Error(t, err)
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
	}
	_, err = signed.PaymentReportPage(ctx, ReportQuery{SellerOrderNo: "INV-1"}, 0)
	collect(err)
	var ue *url.Error
	require.ErrorAs(t, err, &ue, "the transport error is kept for errors.As")
	require.Contains(t, ue.URL, "signature="+redacted)
	_, err = bearer.PaymentReportPage(ctx, ReportQuery{}, 0)
	collect(err)
	_, err = signed.CreateOrder(ctx, testOrder())
	collect(err)
	_, err = signed.GenerateQR(ctx, QRRequest{RefNo: "INV-1", Amount: 1000, Category: "fpx"})
	collect(err)
	_, err = sender.Send(ctx, validTxs(2))
	collect(err)
	link, err := signed.PayURL(PayLink{RefNo: "INV-1", Amount: 1000, Category: "fpx", Signed: true})
	require.NoError(t, err)
	_, err = http.Get(link) // net/http's own error prints the query, signature and all
	require.Regexp(t, `signature=[0-9a-f]{16}`, err.Error())
	require.Contains(t, redactTransportError(err).Error(), "signature="+redacted)
	collect(redactTransportError(err))

	// Configuration errors with user information in a URL.
	for _, bad := range []string{"ftp://user:hunter2@checkout.example", "https://user:hunter2@checkout.example", "http://user:hunter2@remote.example"} {
		_, err := NewClient(WithCheckoutURL(bad))
		collect(err)
		_, err = NewClient(WithReportsURL(bad))
		collect(err)
		_, err = NewWebhookSender(bad, testPassword)
		collect(err)
	}
	texts = append(texts, logs.String())
	for _, text := range texts {
		requireNoSecret(t, text)
	}
	require.NotEmpty(t, logs.String())
}

// signatureValue finds signature values in text.
var signatureValue = regexp.MustCompile(`signature=[^&\s"]*`)
