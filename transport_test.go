package paygate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// The retry rules decide from an attempt's status (0: no answer) and error
// alone: a transient failure is retried for a repeatable request; a signed
// POST only when it provably did not reach the service or was refused
// unacted (429, 503).
func TestRetryRules(t *testing.T) {
	reset := errors.New("read: connection reset by peer")
	tests := []struct {
		name                  string
		status                int
		err                   error
		transient, signedPost bool
		handshake             bool // a failed TLS handshake: nothing sent
	}{
		{name: "refused connection", err: dialError(), transient: true, signedPost: true},
		{name: "name lookup failed", err: fmt.Errorf("lookup: %w", &net.DNSError{Err: "no such host", Name: "reports.example"}), transient: true, signedPost: true},
		{name: "reset after sending", err: reset, transient: true, signedPost: false},
		{name: "429", status: 429, err: &APIError{StatusCode: 429}, transient: true, signedPost: true},
		{name: "503", status: 503, err: &APIError{StatusCode: 503}, transient: true, signedPost: true},
		{name: "500", status: 500, err: &APIError{StatusCode: 500}, transient: true, signedPost: false},
		{name: "502", status: 502, err: &APIError{StatusCode: 502}, transient: true, signedPost: false},
		{name: "400", status: 400, err: &APIError{StatusCode: 400}, transient: false, signedPost: false},
		{name: "401", status: 401, err: &APIError{StatusCode: 401}, transient: false, signedPost: false},
		{name: "302", status: 302, err: &APIError{StatusCode: 302}, transient: false, signedPost: false},
		// A failed TLS handshake sent nothing and fails the same way again.
		{name: "untrusted certificate", err: tlsError(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), transient: false, signedPost: false, handshake: true},
		{name: "certificate for another host", err: tlsError(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "bank.example"}), transient: false, signedPost: false, handshake: true},
		{name: "expired certificate", err: tlsError(x509.CertificateInvalidError{Reason: x509.Expired}), transient: false, signedPost: false, handshake: true},
		{name: "handshake refused", err: tlsError(tls.AlertError(40)), transient: false, signedPost: false, handshake: true},
		{name: "not TLS", err: tlsError(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), transient: false, signedPost: false, handshake: true},
		// Once the handshake completed, bytes that are not TLS are an
		// answer lost after the request may have reached the service.
		{name: "not TLS after the handshake", err: &transportError{err: tlsError(tls.RecordHeaderError{Msg: "received record with version 5454"}), connected: true}, transient: true, signedPost: false},
		{name: "alert after the handshake", err: &transportError{err: tlsError(tls.AlertError(20)), connected: true}, transient: true, signedPost: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.status, answerStatus(tt.err), "answerStatus")
			require.Equal(t, tt.transient, retryTransient(answerStatus(tt.err), tt.err), "retryTransient")
			require.Equal(t, tt.signedPost, retrySignedPost(answerStatus(tt.err), tt.err), "retrySignedPost")
			require.Equal(t, tt.handshake, tlsFailure(tt.err), "tlsFailure")
			if tt.handshake {
				require.True(t, notSent(tt.err), "a failed handshake sent nothing")
			}
			if afterConnect(tt.err) {
				require.False(t, notSent(tt.err), "once connected, it may have reached the service")
			}
		})
	}
}

// The failed handshakes net/http reports without a type, made for real: a
// server that answers TLS in plain HTTP fails the same way again (not
// retried, nothing sent); a handshake that times out sent nothing and may
// pass next time (retried, a signed POST included).
func TestUntypedHandshakeFailures(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("no request passes a failed handshake")
	}))
	defer plain.Close()
	stalled, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer stalled.Close()
	go func() {
		var held []net.Conn // accepted and never answered, until the test ends
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := stalled.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	client := &http.Client{Transport: &http.Transport{TLSHandshakeTimeout: 100 * time.Millisecond}}
	for _, tc := range []struct {
		name             string
		addr             string
		fails, retryable bool
	}{
		{name: "a server that does not speak TLS", addr: plain.Listener.Addr().String(), fails: true, retryable: false},
		{name: "a handshake that times out", addr: stalled.Addr().String(), fails: false, retryable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.Post("https://"+tc.addr+"/api/bank/webhook", "application/json", strings.NewReader("[]"))
			require.Error(t, err)
			require.True(t, notSent(err), "nothing was sent: %v", err)
			require.Equal(t, tc.fails, tlsFailure(err), "fails the same way again: %v", err)
			require.Equal(t, tc.retryable, retryTransient(0, err), "retryTransient")
			require.Equal(t, tc.retryable, retrySignedPost(0, err), "retrySignedPost")
		})
	}
}

// tlsError is a failed handshake as http.Client.Do returns it.
func tlsError(err error) error {
	return &url.Error{Op: "Post", URL: "https://bank.example/api/bank/webhook", Err: err}
}

// dialError is what a refused connection looks like: nothing was sent.
func dialError() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
}

func TestClientRetryMatrix(t *testing.T) {
	getReport := func(c *Client) error {
		_, err := c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
		return err
	}
	postOrder := func(c *Client) error {
		_, err := c.CreateOrder(context.Background(), testOrder())
		return err
	}
	reset := errors.New("read: connection reset by peer")
	tests := []struct {
		name     string
		call     func(c *Client) error // a report GET or a CreateOrder POST
		answers  []any
		attempts int
		ok       bool
		// check, when set, looks further at the error.
		check func(t *testing.T, err error)
	}{
		{name: "GET 500 then 200", call: getReport, answers: []any{500, 200}, attempts: 2, ok: true},
		{name: "GET 502 503 504 then 200", call: getReport, answers: []any{502, 503, 504, 200}, attempts: 4, ok: true},
		{name: "GET 429 then 200", call: getReport, answers: []any{429, 200}, attempts: 2, ok: true},
		{name: "GET reset then 200", call: getReport, answers: []any{reset, 200}, attempts: 2, ok: true},
		{name: "GET 500 always", call: getReport, answers: []any{500}, attempts: 4, ok: false},
		{name: "GET 400 not retried", call: getReport, answers: []any{400}, attempts: 1, ok: false},
		{name: "GET 404 not retried", call: getReport, answers: []any{404}, attempts: 1, ok: false},
		{name: "POST 503 then 200", call: postOrder, answers: []any{503, 200}, attempts: 2, ok: true},
		{name: "POST 429 then 200", call: postOrder, answers: []any{429, 200}, attempts: 2, ok: true},
		{name: "POST refused connection then 200", call: postOrder, answers: []any{dialError(), 200}, attempts: 2, ok: true},
		{name: "POST 500 not retried (may have been created)", call: postOrder, answers: []any{500, 200}, attempts: 1, ok: false},
		{name: "POST 502 not retried", call: postOrder, answers: []any{502, 200}, attempts: 1, ok: false},
		{name: "POST reset not retried (may have been sent)", call: postOrder, answers: []any{reset, 200}, attempts: 1, ok: false},
		{name: "POST 401", call: postOrder, answers: []any{401}, attempts: 1, ok: false, check: func(t *testing.T, err error) {
			require.ErrorIs(t, err, ErrUnauthorized)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, 401, apiErr.StatusCode)
		}},
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
			err := tt.call(f.c)
			require.Equal(t, tt.attempts, calls)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			for i := 1; i < len(exps); i++ {
				require.NotEqual(t, exps[i-1], exps[i], "every attempt is signed afresh")
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

// Retry-After is honoured, a wait ends with the context, and nothing is
// sent after the context ends. The waits are recorded, not timed.
func TestClientRetryAfterAndCancel(t *testing.T) {
	f := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Second}))
	var waits []time.Duration
	f.c.transport.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	calls := 0
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(*http.Request) (*http.Response, error) {
		calls++
		if calls == 1 {
			resp := httpmock.NewStringResponse(503, "")
			resp.Header.Set("Retry-After", "1")
			return resp, nil
		}
		return httpmock.NewStringResponse(200, reportBody(0, 1, 1)), nil
	})
	_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{time.Second}, waits, "the one wait is the service's Retry-After, not the 1 ms backoff")

	g := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	var asked []time.Duration
	g.c.transport.sleep = func(ctx context.Context, d time.Duration) error {
		asked = append(asked, d)
		cancel() // the context ends during the hour-long wait
		return sleepCtx(ctx, d)
	}
	g.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", httpmock.NewStringResponder(500, ""))
	done := make(chan error, 1)
	go func() {
		_, err := g.c.PaymentReportPage(ctx, ReportQuery{}, 0)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the hour-long wait did not end with its context (10 s bound)")
	}
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, asked, 1)
	require.GreaterOrEqual(t, asked[0], 30*time.Minute, "the backoff asked for: half to all of an hour")
	require.Equal(t, 1, g.mt.GetTotalCallCount())
	_, err = g.c.PaymentReportPage(ctx, ReportQuery{}, 0)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, g.mt.GetTotalCallCount(), "nothing after cancel")
}

// A redirect's Location is scrubbed of the request's secrets as an error
// body is: a server that echoes the X-API-Password into the host it
// redirects to does not put it in the error, its %v or the report.
func TestRedirectLocationScrubbed(t *testing.T) {
	for _, tc := range []struct {
		name, location string
	}{
		{name: "host", location: "https://" + testPassword + ".elsewhere.example/x"},
		{name: "host, upper case", location: "https://" + strings.ToUpper(testPassword) + ".elsewhere.example/"},
		{name: "scheme", location: "x" + testPassword + "://elsewhere.example/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, mt, logs := newTestSender(t)
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(http.StatusFound, "")
				resp.Header.Set("Location", tc.location)
				return resp, nil
			})
			report, err := s.Send(context.Background(), validTxs(1))
			require.ErrorIs(t, err, ErrRedirect)
			require.Len(t, report.Unconfirmed, 1)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			for _, txt := range []string{err.Error(), apiErr.Location, fmt.Sprintf("%+v", report), logs.String()} {
				require.NotContains(t, strings.ToLower(txt), strings.ToLower(testPassword))
			}
			require.Contains(t, err.Error(), "elsewhere.example", "the redirect still names where it pointed")
		})
	}
}

// A Retry-After past MaxDelay ends the retries and the error says what the
// service asked for, with the value, not only its status: no wait is made
// (the recorded sleeps stay empty).
func TestClientRetryAfterBeyondMaxDelay(t *testing.T) {
	for _, tc := range []struct {
		header, want string
	}{
		{header: "31536000", want: "the service asked to retry after 8760h0m0s (Retry-After), longer than the longest wait allowed (RetryPolicy.MaxDelay 5s)"},
		{header: "6", want: "retry after 6s (Retry-After)"},
	} {
		t.Run(tc.header, func(t *testing.T) {
			f := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Second}))
			var waits []time.Duration
			f.c.transport.sleep = func(ctx context.Context, d time.Duration) error {
				waits = append(waits, d)
				return ctx.Err()
			}
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(503, "")
				resp.Header.Set("Retry-After", tc.header)
				return resp, nil
			})
			_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
			require.ErrorContains(t, err, "HTTP 503")
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, waits)
			require.Equal(t, 1, f.mt.GetTotalCallCount())
		})
	}
}

// callIDLine finds the call_id of a transport log line.
var callIDLine = regexp.MustCompile(`call_id=([0-9a-f]{16})`)

// One logical call has one ID: every attempt sends it (X-Request-Id),
// every log line and the error name it, and the service's own request
// ID, when it sends one, is kept beside it. No secret is in any of it.
func TestCallIDIsOnePerLogicalCall(t *testing.T) {
	refused := errors.New("connection reset by peer")
	for _, tc := range []struct {
		name      string
		answers   []int // status per attempt; 0: a transport error
		serverID  string
		wantErr   bool
		wantInErr string
	}{
		{name: "retried then answered", answers: []int{503, 502, 200}},
		{name: "retries exhausted on 500", answers: []int{500, 500, 500, 500}, wantErr: true, wantInErr: "HTTP 500 (call "},
		{name: "service request ID kept", answers: []int{503, 401}, serverID: "srv-42", wantErr: true, wantInErr: ", service request srv-42)"},
		{name: "no answer", answers: []int{0, 0, 0, 0}, wantErr: true, wantInErr: "(after 4 attempts) (call "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t, WithAuthToken(testAuthToken))
			var sent []string
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/user/v1/transactions", func(req *http.Request) (*http.Response, error) {
				sent = append(sent, req.Header.Get("X-Request-Id"))
				status := tc.answers[len(sent)-1]
				if status == 0 {
					return nil, refused
				}
				resp := httpmock.NewStringResponse(status, `{"status":"OK","data":[]}`)
				if tc.serverID != "" {
					resp.Header.Set("X-Request-Id", tc.serverID)
				}
				return resp, nil
			})
			_, err := f.c.Transactions(context.Background(), "buyer@example.com")
			require.Len(t, sent, len(tc.answers))
			id := sent[0]
			require.Regexp(t, `^[0-9a-f]{16}$`, id)
			for _, s := range sent {
				require.Equal(t, id, s, "every attempt of one call sends its ID")
			}
			logged := callIDLine.FindAllStringSubmatch(f.logs.String(), -1)
			require.Len(t, logged, len(tc.answers), "one log line per attempt")
			for _, m := range logged {
				require.Equal(t, id, m[1])
			}
			for _, secret := range []string{testAuthToken, testKeyUUID} {
				require.NotContains(t, f.logs.String(), secret)
				require.NotContains(t, id, secret)
			}
			if !tc.wantErr {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, id, CallID(err))
			require.Contains(t, err.Error(), id)
			require.Contains(t, err.Error(), tc.wantInErr)
			require.NotContains(t, err.Error(), testAuthToken)
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				require.Equal(t, id, apiErr.CallID)
				require.Equal(t, tc.serverID, apiErr.RequestID)
			}
		})
	}
}

// Two calls never share an ID, and an error raised before any request
// has none.
func TestCallIDDiffersBetweenCalls(t *testing.T) {
	f := newTestClient(t)
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/echo", httpmock.NewStringResponder(500, "down"))
	_, err1 := f.c.Echo(context.Background())
	_, err2 := f.c.Echo(context.Background())
	require.NotEmpty(t, CallID(err1))
	require.NotEqual(t, CallID(err1), CallID(err2))
	_, err := f.c.Transactions(context.Background(), "not an address")
	require.Error(t, err)
	require.Empty(t, CallID(err), "no request was made")
}

// readBody takes an answer of exactly its limit whole, and one byte more is
// over it: refused when strict, cut to the limit otherwise. The size the
// answer announces only sizes the buffer.
func TestReadBodyAtItsLimit(t *testing.T) {
	const limit = 16
	for _, tc := range []struct {
		name          string
		body          string
		contentLength int64
		strict        bool
		want, wantErr string
	}{
		{name: "at the limit", body: strings.Repeat("a", limit), contentLength: limit, strict: true, want: strings.Repeat("a", limit)},
		{name: "at the limit, length unknown", body: strings.Repeat("a", limit), contentLength: -1, strict: true, want: strings.Repeat("a", limit)},
		{name: "one over, strict", body: strings.Repeat("a", limit+1), contentLength: limit + 1, strict: true, wantErr: "answer over 16 bytes"},
		{name: "one over, cut", body: strings.Repeat("a", limit) + "b", contentLength: limit + 1, want: strings.Repeat("a", limit)},
		{name: "a length that lies low", body: strings.Repeat("a", limit), contentLength: 1, strict: true, want: strings.Repeat("a", limit)},
		{name: "a length that lies high sizes nothing", body: "ab", contentLength: 1 << 62, strict: true, want: "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{Body: io.NopCloser(strings.NewReader(tc.body)), ContentLength: tc.contentLength}
			got, err := readBody(resp, limit, tc.strict)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// An exchange's error counts its attempts when there was more than one,
// also when the context ends between two of them, and mentions a
// Retry-After only when one longer than MaxDelay ended the retries: one of
// exactly MaxDelay on the last attempt was allowed, the attempts ran out.
func TestExchangeErrorNamesItsAttempts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		attempts    int    // RetryPolicy.MaxAttempts
		cancelAfter int    // the sleep after this attempt ends the context (0: none)
		retryAfter  string // the answers' Retry-After
		calls       int
		want        string // in the error; "" for no attempt count
	}{
		{name: "one attempt", attempts: 1, calls: 1},
		{name: "two attempts", attempts: 2, calls: 2, want: "(after 2 attempts)"},
		{name: "the context ends after the second attempt", attempts: 4, cancelAfter: 2, calls: 2, want: "(after 2 attempts)"},
		{name: "a Retry-After of exactly MaxDelay, attempts used up", attempts: 2, retryAfter: "5", calls: 2, want: "(after 2 attempts)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: tc.attempts, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Second}))
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			sleeps := 0
			f.c.transport.sleep = func(context.Context, time.Duration) error {
				if sleeps++; sleeps == tc.cancelAfter {
					cancel() // the context ends as the wait does: the next attempt is not made
				}
				return nil
			}
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(503, "busy")
				if tc.retryAfter != "" {
					resp.Header.Set("Retry-After", tc.retryAfter)
				}
				return resp, nil
			})
			_, err := f.c.PaymentReportPage(ctx, ReportQuery{}, 0)
			require.ErrorContains(t, err, "HTTP 503")
			require.Equal(t, tc.calls, f.mt.GetTotalCallCount())
			if tc.want == "" {
				require.NotContains(t, err.Error(), "attempts)")
			} else {
				require.ErrorContains(t, err, tc.want)
			}
			require.NotContains(t, err.Error(), "Retry-After", "no Retry-After longer than MaxDelay was refused")
		})
	}
}

// failingBody is an answer body whose read fails midway.
type failingBody struct{ sent bool }

func (b *failingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"status":"OK","da`), nil
	}
	return 0, errors.New("connection reset while reading")
}

func (*failingBody) Close() error { return nil }

// An attempt that gets no whole answer (no connection, or an answer whose
// body breaks off) is a transport error, retried after the policy's
// backoff: no Retry-After came, so none is waited for.
func TestTransportErrorRetriedAfterBackoff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func() (*http.Response, error)
		want   string
	}{
		{name: "no connection", answer: func() (*http.Response, error) { return nil, dialError() }, want: "connection refused"},
		{name: "the body breaks off", answer: func() (*http.Response, error) {
			resp := httpmock.NewStringResponse(200, "")
			resp.Body = &failingBody{}
			return resp, nil
		}, want: "reading the answer: connection reset while reading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Hour, MaxDelay: time.Hour}))
			var waits []time.Duration
			f.c.transport.sleep = func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(*http.Request) (*http.Response, error) {
				return tc.answer()
			})
			_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "(after 2 attempts)")
			var apiErr *APIError
			require.False(t, errors.As(err, &apiErr), "no answer: not an *APIError")
			require.Len(t, waits, 1)
			require.GreaterOrEqual(t, waits[0], 30*time.Minute, "the backoff of an hour's base, not a Retry-After")
		})
	}
}

// Each attempt has its own time limit (WithAttemptTimeout): an attempt the
// service never answers ends at it and is retried, within the call's
// context.
func TestAttemptTimeoutBoundsEachAttempt(t *testing.T) {
	f := newTestClient(t, WithAttemptTimeout(time.Millisecond),
		WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}))
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(req *http.Request) (*http.Response, error) {
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(10 * time.Second): // a bound, not a measure: without the limit the attempt is answered
			return httpmock.NewStringResponse(200, reportBody(0, 1, 1)), nil
		}
	})
	_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 2, f.mt.GetTotalCallCount(), "the attempt that timed out is retried")
}

// An error answer longer than an APIError keeps is cut to maxErrorBody,
// still an *APIError with its status: only a success answer over its
// limit is refused.
func TestErrorAnswerCutNotRefused(t *testing.T) {
	f := newTestClient(t, WithRetry(RetryPolicy{MaxAttempts: 1}))
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment",
		httpmock.NewStringResponder(400, strings.Repeat("e", 3*maxErrorBody)))
	_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 400, apiErr.StatusCode)
	require.Equal(t, strings.Repeat("e", maxErrorBody), string(apiErr.Body))
}

// A redirect's host is named from its Location resolved against the
// request, and a Location that does not parse is named as such.
func TestRedirectHost(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "https://gw.example/v2/checkout?x=1", nil)
	for _, tc := range []struct{ location, want string }{
		{location: "https://elsewhere.example/pay?token=s", want: "https://elsewhere.example"},
		{location: "/moved", want: "https://gw.example"},
		{location: "https://[::1", want: "(no valid Location)"},
		{location: "%zz", want: "(no valid Location)"},
	} {
		require.Equal(t, tc.want, redirectHost(req, tc.location), tc.location)
	}
}

// An answer that cannot be read, says the order is not found, or carries
// a status that is not OK fails with its call's ID, the one its request
// sent and its log line names, so that a support ticket can quote it.
func TestCallIDOfAnAnswerNotRead(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		status           int
		call             func(c *Client) error
		is               error
	}{
		{"lookup not JSON", "/api/report/v1/fpxrequest", `<html>`, 200,
			func(c *Client) error { _, err := c.LookupOrderByRefNo(context.Background(), "INV-1"); return err }, nil},
		{"lookup status", "/api/report/v1/fpxrequest", `{"status":"ERROR"}`, 200,
			func(c *Client) error { _, err := c.LookupOrderByRefNo(context.Background(), "INV-1"); return err }, ErrReportStatus},
		{"lookup empty record", "/api/report/v1/fpxrequest", `{"status":"OK","fpxrequest":{}}`, 200,
			func(c *Client) error { _, err := c.LookupOrder(context.Background(), "INV-1"); return err }, ErrOrderNotFound},
		{"lookup 404", "/api/report/v1/fpxrequest", `{"status":"NOT_FOUND"}`, 404,
			func(c *Client) error { _, err := c.LookupOrderByRefNo(context.Background(), "INV-1"); return err }, ErrOrderNotFound},
		{"report page not JSON", "/api/report/v1/payment", `[1,`, 200,
			func(c *Client) error {
				_, err := c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
				return err
			}, nil},
		{"report page status", "/api/report/v1/payment", `{"status":"DENIED","data":[]}`, 200,
			func(c *Client) error {
				_, err := c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
				return err
			}, ErrReportStatus},
		{"bank list", "/api/v1/fpx/banklist/b2c", `{"status":"OK","data":"none"}`, 200,
			func(c *Client) error { _, err := c.Banks(context.Background(), BankChannelB2C); return err }, nil},
		{"transactions not JSON", "/api/user/v1/transactions", `oops`, 200,
			func(c *Client) error { _, err := c.Transactions(context.Background(), "a@example.com"); return err }, nil},
		{"transactions status", "/api/user/v1/transactions", `{"status":"FAIL"}`, 200,
			func(c *Client) error { _, err := c.Transactions(context.Background(), "a@example.com"); return err }, ErrReportStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t, WithAuthToken(testAuthToken))
			var sent string
			f.mt.RegisterResponder(http.MethodGet, testReports+tc.path, func(req *http.Request) (*http.Response, error) {
				sent = req.Header.Get("X-Request-Id")
				return httpmock.NewStringResponse(tc.status, tc.body), nil
			})
			err := tc.call(f.c)
			require.Error(t, err)
			require.Regexp(t, `^[0-9a-f]{16}$`, sent)
			require.Equal(t, sent, CallID(err))
			require.Contains(t, err.Error(), "(call "+sent+")")
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			logged := callIDLine.FindAllStringSubmatch(f.logs.String(), -1)
			require.NotEmpty(t, logged)
			require.Equal(t, sent, logged[0][1])
		})
	}
}
