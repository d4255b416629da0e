package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/paygate-go/paygate/internal/scrub"
	"github.com/stretchr/testify/require"
)

// echoPassword holds characters that every encoding rewrites differently.
const echoPassword = `Zq7 x/9k&w<"p>+%~`

// maxEchoRequests bounds an echo server: no test here makes more.
const maxEchoRequests = 200

// echoServer answers every request with status and a body that repeats the
// request's headers, query, body and the signature it carries, as sent,
// decoded, URL-encoded, JSON- and HTML-escaped and in ASCII upper case. It
// records every signature it sees, for the test to look for.
type echoServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	n      int
	sigs   []string
}

func newEchoServer(t *testing.T, status int) *echoServer {
	e := &echoServer{status: status}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.n++
		n := e.n
		e.mu.Unlock()
		if n > maxEchoRequests {
			t.Errorf("echo server: more than %d requests (the rule: every call here is bounded by its retry policy)", maxEchoRequests)
			http.Error(w, "too many requests for this test", http.StatusGone)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			body = nil // a webhook batch carries no credential, and would push the rest past the 4 KiB cut
		}
		form, _ := url.ParseQuery(string(body))
		var dump strings.Builder
		for k, vs := range r.Header {
			for _, v := range vs {
				fmt.Fprintf(&dump, "%s: %s\n", k, v)
			}
		}
		fmt.Fprintf(&dump, "query: %s\nbody: %s\n", r.URL.RawQuery, body)
		for _, vals := range []url.Values{r.URL.Query(), form} {
			for k, vs := range vals {
				fmt.Fprintf(&dump, "decoded %s=%s\n", k, strings.Join(vs, ","))
				if k == "signature" {
					e.mu.Lock()
					e.sigs = append(e.sigs, vs...)
					e.mu.Unlock()
				}
			}
		}
		if u, p, ok := r.BasicAuth(); ok {
			fmt.Fprintf(&dump, "basic %s:%s\n", u, p)
		}
		d := dump.String()
		js, _ := json.Marshal(map[string]any{"headers": r.Header, "query": r.URL.Query(), "form": form, "body": string(body)})
		echo := fmt.Sprintf("%s\njson: %s\nurl: %s\nhtml: %s\nupper: %s\n",
			d, js, url.QueryEscape(d), html.EscapeString(d), upperASCII(d))
		if len(echo) > maxErrorBody-64 {
			t.Errorf("echo server: a %d-byte echo would be cut, and the test would not see every form", len(echo))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(e.status)
		_, _ = io.WriteString(w, echo)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *echoServer) signatures() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.sigs...)
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// requireNoEchoedSecret fails if text holds any of secrets in any form an echo
// server writes, whatever the ASCII case.
func requireNoEchoedSecret(t *testing.T, what, text string, secrets []string) {
	t.Helper()
	low := strings.ToLower(text)
	for _, s := range secrets {
		js, _ := json.Marshal(s)
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s), string(js[1 : len(js)-1]), html.EscapeString(s)} {
			require.NotContains(t, low, strings.ToLower(form), "%s holds a secret", what)
		}
	}
}

// Whatever a 4xx or 5xx answer echoes of the request, no credential it
// carried (the AuthToken, the webhook password, a signature) reaches an
// error, a %v of it, a SendReport or the log, for every call of the Client
// that sends a request and for the WebhookSender.
func TestErrorBodiesNeverHoldSecrets(t *testing.T) {
	type call struct {
		name string
		do   func(ctx context.Context, c *Client) error
	}
	order := Order{RefNo: "INV-1", Amount: 1000, Email: "a@example.com", ReturnURL: "https://shop.example/return"}
	calls := []call{
		{"CreateOrder", func(ctx context.Context, c *Client) error { _, err := c.CreateOrder(ctx, order); return err }},
		{"GenerateQR", func(ctx context.Context, c *Client) error {
			_, err := c.GenerateQR(ctx, QRRequest{RefNo: "INV-1", Amount: 1000, Category: "fpx"})
			return err
		}},
		{"GenerateQR DuitNow", func(ctx context.Context, c *Client) error {
			_, err := c.GenerateQR(ctx, QRRequest{RefNo: "INV-1", Amount: 1000, Category: "fpx", DuitNow: true})
			return err
		}},
		{"PaymentReportPage", func(ctx context.Context, c *Client) error {
			_, err := c.PaymentReportPage(ctx, ReportQuery{}, 0)
			return err
		}},
		{"Payments", func(ctx context.Context, c *Client) error {
			for _, err := range c.Payments(ctx, ReportQuery{}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"LookupOrder", func(ctx context.Context, c *Client) error { _, err := c.LookupOrder(ctx, "INV-1"); return err }},
		{"LookupOrderByRefNo", func(ctx context.Context, c *Client) error { _, err := c.LookupOrderByRefNo(ctx, "INV-1"); return err }},
		{"Transactions", func(ctx context.Context, c *Client) error { _, err := c.Transactions(ctx, "a@example.com"); return err }},
		{"Version", func(ctx context.Context, c *Client) error { _, err := c.Version(ctx); return err }},
		{"Echo", func(ctx context.Context, c *Client) error { _, err := c.Echo(ctx); return err }},
	}
	fast := WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	for _, status := range []int{400, 401, 403, 404, 409, 422, 429, 500, 502, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e := newEchoServer(t, status)
			var logs bytes.Buffer
			logger := WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			bearer, err := NewClient(WithAgency(testAgency), WithKey(mustKey(t, testKeyUUID)), WithAuthToken(testAuthToken),
				WithCheckoutURL(e.srv.URL), WithReportsURL(e.srv.URL), logger, fast)
			require.NoError(t, err)
			signed, err := NewClient(WithAgency(testAgency), WithKey(mustKey(t, testKeyUUID)),
				WithCheckoutURL(e.srv.URL), WithReportsURL(e.srv.URL), logger, fast)
			require.NoError(t, err)
			sender, err := NewWebhookSender(e.srv.URL, echoPassword, logger, fast)
			require.NoError(t, err)

			ctx := context.Background()
			var texts []string
			seen := func(name string, err error) {
				if status == 404 && strings.HasPrefix(name, "Lookup") {
					require.ErrorIs(t, err, ErrOrderNotFound, name)
				} else {
					var apiErr *APIError
					require.ErrorAs(t, err, &apiErr, name)
					require.Equal(t, status, apiErr.StatusCode, name)
					if !strings.HasPrefix(name, "Version") && !strings.HasPrefix(name, "Echo") { // they send no credential
						require.Contains(t, string(apiErr.Body), redacted, "%s: the echo was scrubbed, not dropped", name)
					}
					texts = append(texts, string(apiErr.Body), fmt.Sprintf("%+v", *apiErr), fmt.Sprintf("%#v", *apiErr))
				}
				texts = append(texts, err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
			}
			for _, c := range calls {
				for _, cl := range []struct {
					name string
					c    *Client
				}{{"bearer", bearer}, {"signed", signed}} {
					seen(c.name+" "+cl.name, c.do(ctx, cl.c))
				}
			}
			report, err := sender.Send(ctx, validTxs(3))
			seen("Send", err)
			require.NotEmpty(t, report.Requests)
			for _, rr := range report.Requests {
				require.Error(t, rr.Err)
				texts = append(texts, rr.Err.Error())
			}
			texts = append(texts, fmt.Sprintf("%v", report), fmt.Sprintf("%+v", report), fmt.Sprintf("%#v", report),
				fmt.Sprintf("%+v", *report), logs.String())

			sigs := e.signatures()
			require.NotEmpty(t, sigs, "the signed calls sent signatures")
			secrets := append([]string{testAuthToken, echoPassword}, sigs...)
			for i, text := range texts {
				requireNoEchoedSecret(t, fmt.Sprintf("text %d", i), text, secrets)
			}
		})
	}
}

// A secret that straddles the 4 KiB cut of a kept body is scrubbed whole:
// not even its first part is kept.
func TestErrorBodyCutNeverHalvesASecret(t *testing.T) {
	for _, before := range []int{1, 5, len(echoPassword) - 1} {
		t.Run(fmt.Sprint(before), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, strings.Repeat(".", maxErrorBody-before)+r.Header.Get("X-API-Password")+"tail")
			}))
			t.Cleanup(srv.Close)
			sender, err := NewWebhookSender(srv.URL, echoPassword, WithRetry(RetryPolicy{MaxAttempts: 1}))
			require.NoError(t, err)
			_, err = sender.Send(context.Background(), validTxs(1))
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			require.LessOrEqual(t, len(apiErr.Body), maxErrorBody)
			kept := strings.TrimLeft(string(apiErr.Body), ".")
			require.False(t, strings.HasPrefix(echoPassword, kept) && kept != "", "the body ends with the password's first %d bytes: %q", len(kept), kept)
			require.True(t, strings.HasPrefix(redacted+"tail", kept), "the password became the marker: %q", kept)
		})
	}
}

// requestSecrets takes credential headers whole and without their scheme,
// the signature from the query and from a form body, and URL user
// information; never the plain headers or the other signed fields.
func TestRequestSecrets(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "https://u1:p1@h.example/x?signature=qsig&exp=1800000060&agency=AG",
		strings.NewReader("amount=10.00&signature=fsig"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Authorization", "Bearer TOK")
	req.Header.Set("X-API-Password", "pw")
	got := requestSecrets(req)
	for _, want := range []string{"bearer tok", "tok", "pw", "qsig", "fsig", "u1", "p1", "u1:p1", "dte6cde="} {
		require.Contains(t, got, want)
	}
	for _, plain := range []string{"1800000060", "ag", "10.00", "application/x-www-form-urlencoded", scrub.Lower(userAgent)} {
		require.NotContains(t, got, plain)
	}
}

// A form body that cannot be read again (GetBody fails, or the reader it
// gives does) adds nothing to the secrets, and is no panic; the query's
// are still taken.
func TestRequestSecretsOfABodyThatCannotBeReadAgain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		getBody func() (io.ReadCloser, error)
	}{
		{name: "GetBody fails", getBody: func() (io.ReadCloser, error) { return nil, errors.New("gone") }},
		{name: "its reader fails", getBody: func() (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader("signature=fsig&"), iotest.ErrReader(errors.New("gone")))), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, "https://h.example/x?signature=qsig", strings.NewReader("signature=fsig"))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.GetBody = tc.getBody
			got := requestSecrets(req)
			require.Contains(t, got, "qsig")
			require.NotContains(t, got, "fsig")
		})
	}
}

// A successful answer whose values the SDK quotes in an error (a report's
// status, a total_pages that is not a number) may echo the request too: no
// credential reaches the error.
func TestSuccessAnswerErrorsNeverHoldSecrets(t *testing.T) {
	for _, shape := range []string{"status", "total_pages"} {
		t.Run(shape, func(t *testing.T) {
			var mu sync.Mutex
			var sigs []string
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				if n > maxEchoRequests {
					mu.Unlock()
					t.Errorf("echo server: more than %d requests", maxEchoRequests)
					http.Error(w, "too many requests for this test", http.StatusGone)
					return
				}
				sigs = append(sigs, r.URL.Query()["signature"]...)
				mu.Unlock()
				// The credential first: total_pages is quoted cut at 40 bytes.
				echo := r.URL.Query().Get("signature") + r.Header.Get("Authorization") + " " + r.URL.RawQuery + " " + upperASCII(r.Header.Get("Authorization"))
				answer := map[string]any{"status": echo}
				if shape == "total_pages" {
					answer = map[string]any{"status": "OK", "data": []any{}, "stats": map[string]any{"total_pages": map[string]string{"echo": echo}}}
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(answer)
			}))
			t.Cleanup(srv.Close)
			bearer, err := NewClient(WithAgency(testAgency), WithAuthToken(testAuthToken), WithReportsURL(srv.URL))
			require.NoError(t, err)
			signed, err := NewClient(WithAgency(testAgency), WithKey(mustKey(t, testKeyUUID)), WithReportsURL(srv.URL))
			require.NoError(t, err)
			ctx := context.Background()
			var texts []string
			for _, c := range []*Client{bearer, signed} {
				_, err1 := c.PaymentReportPage(ctx, ReportQuery{}, 0)
				errs := []error{err1}
				if shape == "status" {
					_, err2 := c.LookupOrder(ctx, "INV-1")
					_, err3 := c.LookupOrderByRefNo(ctx, "INV-1")
					_, err4 := c.Transactions(ctx, "a@example.com")
					errs = append(errs, err2, err3, err4)
				}
				for _, err := range errs {
					require.Error(t, err)
					require.Contains(t, err.Error(), redacted, "the echo was scrubbed, not dropped")
					texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
				}
			}
			mu.Lock()
			secrets := append([]string{testAuthToken}, sigs...)
			mu.Unlock()
			require.Greater(t, len(secrets), 1, "the signed client sent signatures")
			for i, text := range texts {
				requireNoEchoedSecret(t, fmt.Sprintf("text %d", i), text, secrets)
			}
		})
	}
}
