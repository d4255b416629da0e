package paygate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/paygate-go/paygate/internal/callid"
	"github.com/paygate-go/paygate/internal/observing"
	"github.com/paygate-go/paygate/internal/scrub"
	"github.com/paygate-go/paygate/internal/skew"
	"github.com/paygate-go/paygate/observe"
)

// userAgent identifies the SDK to the service.
const userAgent = "paygate-go/" + Version

// attemptFunc makes the request of one attempt; it is called again for every
// retry, so that a signed request can be signed afresh (new exp).
type attemptFunc func(ctx context.Context) (*http.Request, error)

// retryRule decides from one attempt's outcome whether another attempt is
// safe: status is the HTTP status of an error answer (an *APIError), or 0
// when err is a transport error (no answer came).
type retryRule func(status int, err error) bool

// response is what a successful (2xx) exchange returns: status, headers and
// the body, read whole up to maxBody.
type response struct {
	StatusCode int
	Header     http.Header
	Body       string
	Attempts   int
	// request is the attempt answered, for scrub; callID names the exchange.
	request *http.Request
	callID  string
}

// transport runs requests with retries, logging and error mapping
// (docs/protocol.md "Errors"). It never logs a query string, a body or a
// header, and never follows a redirect: every request it makes carries a
// credential.
type transport struct {
	// client never follows redirects (noRedirects).
	client *http.Client
	logger *slog.Logger
	retry  RetryPolicy
	now    func() time.Time
	// sleep waits between attempts (sleepCtx); tests record the waits.
	sleep func(ctx context.Context, d time.Duration) error
	// attemptTimeout bounds each attempt (> 0: WithAttemptTimeout refuses less).
	attemptTimeout time.Duration
	// clock: the service's, per its Date headers (A-clock-skew); shared.
	clock *skew.Clock
	// observer is told of each call (WithObserver); nil: none.
	observer observe.Observer
}

// exchange is one logical request: how to make each attempt, when another is
// safe, how much of a successful body to keep, whether a longer one is cut
// (its status alone is the answer) rather than an error, and whether a 3xx
// answer counts as success (CreateOrder does not follow redirects). method
// and target (the URL without its query) name it to an Observer.
type exchange struct {
	method, target string
	attempt        attemptFunc
	retryable      retryRule
	maxBody        int64
	cutBody        bool
	accept3xx      bool
}

// do runs attempts until one succeeds, one fails in a way x.retryable does
// not retry, the retry policy is exhausted, or ctx is done. A non-success
// answer is an *APIError; a transport error is returned wrapped; the error
// of a failed exchange is an *attemptsError (how many attempts, whether
// any may have reached the service, a Retry-After not waited for). One
// call ID (callid.New) names every attempt, log line and error of it.
func (t *transport) do(ctx context.Context, x exchange) (*response, error) {
	if t.observer != nil {
		return t.observed(ctx, x)
	}
	return t.run(ctx, x)
}

// run is do without its Observer's start and end.
func (t *transport) run(ctx context.Context, x exchange) (*response, error) {
	st := &attemptsError{callID: callid.New()}
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, st.end(n-1, err)
		}
		if err := passGate(ctx, n); err != nil { // unsent: the attempts so far stand
			return nil, st.end(n-1, err)
		}
		resp, wait, err := t.once(ctx, x, n, st.callID)
		if err == nil {
			return resp, nil
		}
		st.record(err)
		if ctx.Err() != nil {
			return nil, st.end(n, ctx.Err())
		}
		if !x.retryable(answerStatus(err), err) {
			return nil, st.end(n, nil)
		}
		d, ok := t.retry.wait(n, wait)
		if !ok {
			st.refuseWait(wait, t.retry.MaxDelay)
			return nil, st.end(n, nil)
		}
		if t.observer != nil {
			t.observer.CallRetry(ctx, observe.Retry{Attempt: n, Status: answerStatus(err), RetryAfter: wait, Wait: d})
		}
		if err := t.sleep(ctx, d); err != nil {
			return nil, st.end(n, err)
		}
	}
}

// fail names err, found in r, by r's call.
func (r *response) fail(err error) error { return &readError{err: err, callID: r.callID} }

// answerStatus is the HTTP status of an attempt's error answer (an
// *APIError), or 0 when the attempt got no answer.
func answerStatus(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// outcomeUnknown reports whether a failed attempt may still have been acted
// on by the service: an error after the request may have reached it (a
// reset, a timeout, a lost answer) or a server error (5xx), which a service
// can answer after storing. A failed dial, 429 and any other answer are
// known: the request was not acted on.
func outcomeUnknown(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode >= 500
	}
	return !notSent(err)
}

// once makes attempt n of call id; on an error answer it also returns the
// Retry-After wait the service asked for. Every answer's Date updates clock.
func (t *transport) once(ctx context.Context, x exchange, n int, id string) (*response, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, t.attemptTimeout)
	defer cancel()
	signedWith := t.clock.Offset() // before x.attempt dates a signature with it
	req, err := x.attempt(ctx)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set(callid.Header, id)
	var connected atomic.Bool // a connection made: its TLS handshake completed
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	}))
	start := t.now()
	resp, err := t.client.Do(req)
	var status int
	if resp != nil {
		status = resp.StatusCode
	}
	t.logger.LogAttrs(ctx, slog.LevelDebug, "paygate request",
		slog.String("method", req.Method), slog.String("host", req.URL.Host),
		slog.String("path", req.URL.Path), slog.Int("status", status),
		slog.Int("attempt", n), slog.Duration("duration", t.now().Sub(start)), slog.String("call_id", id))
	if err != nil {
		return nil, 0, &transportError{method: req.Method, path: req.URL.Path, err: redactTransportError(err), connected: connected.Load()}
	}
	defer resp.Body.Close()
	skewed := t.learnClock(req, resp, signedWith)
	redirect := resp.StatusCode/100 == 3
	ok := resp.StatusCode/100 == 2 || x.accept3xx && redirect
	limit := int64(maxErrorBody)
	var secrets []string
	if ok {
		limit = x.maxBody
	} else {
		// An error body is kept: read past the cap by the longest secret, so
		// that one straddling the cut is whole when it is scrubbed.
		secrets = requestSecrets(req)
		limit += int64(scrub.Longest(secrets))
	}
	body, err := readBody(resp, limit, ok && !x.cutBody)
	if err != nil {
		return nil, 0, &transportError{method: req.Method, path: req.URL.Path, err: err, connected: true}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	if !ok {
		body = scrub.Replace(body, secrets)
		if len(body) > maxErrorBody {
			body = body[:maxErrorBody]
		}
		apiErr := &APIError{Method: req.Method, Path: req.URL.Path, StatusCode: resp.StatusCode, Body: []byte(body),
			CallID: id, RequestID: callid.FromHeader(resp.Header), ClockSkew: skewed}
		if redirect {
			// Scrubbed as the body is: a server may echo a secret into it.
			apiErr.Location = scrub.Replace(redirectHost(req, resp.Header.Get("Location")), secrets)
		}
		return nil, retryAfter(resp.Header, t.now()), apiErr
	}
	return &response{StatusCode: resp.StatusCode, Header: resp.Header, Body: body, Attempts: n, request: req, callID: id}, 0, nil
}

// learnClock updates the clock from an answer's Date and returns the
// offset measured when it explains a refused exp (APIError.ClockSkew).
func (t *transport) learnClock(req *http.Request, resp *http.Response, signedWith time.Duration) time.Duration {
	m, dated := t.clock.Learn(resp.Header, t.now())
	refused := (&APIError{StatusCode: resp.StatusCode}).Is(ErrUnauthorized)
	if !dated || !refused || !skew.Explains(m, signedWith) || !req.URL.Query().Has("exp") && !formBody(req).Has("exp") {
		return 0
	}
	return m
}

// noRedirects returns a copy of hc that never follows a redirect: the 3xx
// answer comes back to the SDK, which refuses it (ErrRedirect) or, for
// CreateOrder, returns it. hc itself is not changed.
func noRedirects(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// redirectHost is the host a Location header points to, resolved against
// the request's URL, for an error message; never its path or query.
func redirectHost(req *http.Request, location string) string {
	u, err := req.URL.Parse(location)
	if err != nil || u.Host == "" {
		return "(no valid Location)"
	}
	return u.Scheme + "://" + u.Host
}

// readBody reads an answer into one string, sized from Content-Length when
// the server sends it, so that a large report page is held once, without the
// doubling copies of a growing buffer. An error answer is cut at limit; a
// success answer over limit is an error rather than a silently truncated body.
func readBody(resp *http.Response, limit int64, strict bool) (string, error) {
	var b strings.Builder
	if n := resp.ContentLength; n > 0 && n <= limit {
		b.Grow(int(n))
	}
	var chunk [4096]byte // io.Copy's default 32 KiB would outweigh a small answer
	n, err := io.CopyBuffer(&b, io.LimitReader(resp.Body, limit+1), chunk[:])
	if err != nil {
		return "", fmt.Errorf("reading the answer: %w", err)
	}
	if n > limit {
		if strict {
			return "", fmt.Errorf("answer over %d bytes", limit)
		}
		return b.String()[:limit], nil
	}
	return b.String(), nil
}

// transportError is a request that got no HTTP answer. It names the method
// and path, never the query (which may hold a signature) or the host's
// credentials.
type transportError struct {
	method, path string
	err          error
	// connected: a connection was made (for https, its TLS handshake
	// completed), so the request may have reached the service whatever
	// went wrong after (afterConnect).
	connected bool
}

// afterConnect reports whether a transport error came once a connection
// was made: "may have reached the service", never a failed dial or
// handshake, whatever its cause (bytes that are not TLS after a completed
// handshake included).
func afterConnect(err error) bool {
	var te *transportError
	return errors.As(err, &te) && te.connected
}

// Error names the request and the cause.
func (e *transportError) Error() string {
	return "paygate: " + e.method + " " + e.path + ": " + e.err.Error()
}

// Unwrap returns the cause.
func (e *transportError) Unwrap() error { return e.err }

// discardLogger is the default logger: it drops everything, cheaply.
func discardLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
}

// attemptsError is the error of a failed exchange: how many attempts it
// took, what they prove, and the last attempt's error, to which it
// unwraps.
type attemptsError struct {
	attempts int
	// earlierUnknown: an attempt before the last one may have been acted on
	// (outcomeUnknown), so the last answer cannot prove a rejection.
	earlierUnknown bool
	// reached: some attempt got an answer or may have reached the service
	// (not notSent); false when nothing was sent.
	reached bool
	// retryAfter is the service's Retry-After that exceeded maxDelay, the
	// policy's longest wait, and so ended the retries; 0 otherwise.
	retryAfter, maxDelay time.Duration
	// last is the last attempt's error; err is what Unwrap returns: last,
	// joined with what ended the exchange (the context's end) if anything.
	last, err error
	callID    string // names the exchange (CallID)
}

// record notes a failed attempt's error.
func (e *attemptsError) record(err error) {
	e.earlierUnknown = e.earlierUnknown || e.last != nil && outcomeUnknown(e.last)
	e.reached = e.reached || !notSent(err)
	e.last = err
}

// refuseWait notes a Retry-After longer than maxDelay, if wait is one.
func (e *attemptsError) refuseWait(wait, maxDelay time.Duration) {
	if wait > maxDelay {
		e.retryAfter, e.maxDelay = wait, maxDelay
	}
}

// end closes the exchange after n attempts; cause, if not nil, is what
// ended it besides the last error (the context's end).
func (e *attemptsError) end(n int, cause error) error {
	e.attempts, e.err = n, e.last
	if cause != nil {
		e.err = errors.Join(cause, e.last)
	}
	return e
}

// Error names the attempt count when there was more than one, the call ID
// (an *APIError names it itself), and a Retry-After not waited for.
func (e *attemptsError) Error() string {
	msg := e.err.Error()
	if e.attempts > 1 {
		msg = fmt.Sprintf("%s (after %d attempts)", msg, e.attempts)
	}
	if answerStatus(e.last) == 0 {
		msg += " (call " + e.callID + ")"
	}
	if e.retryAfter > 0 {
		msg += fmt.Sprintf("; the service asked to retry after %v (Retry-After), longer than the longest wait allowed (RetryPolicy.MaxDelay %v)", e.retryAfter, e.maxDelay)
	}
	return msg
}

// Unwrap returns the last attempt's error (joined with the context's end
// when that ended the exchange).
func (e *attemptsError) Unwrap() error { return e.err }

// retryTransient retries transport errors, 429 and 5xx: the rule for requests
// that are safe to repeat (GETs, and webhook batches, whose orderno is unique).
// A TLS failure (tlsFailure) is not retried: a certificate the client does
// not trust, or a handshake the server refuses, fails the same way again.
func retryTransient(status int, err error) bool {
	return status == 0 && !tlsFailure(err) || status == http.StatusTooManyRequests || status >= 500
}

// retrySignedPost retries a signed POST only when it provably did not reach
// the service (the connection was never made) or the service said 429 or 503
// (it did not act on it: docs/assumptions.md A-errors). A reset or timeout after sending may have created
// the order, so it is not repeated; nor is a failed TLS handshake, which
// fails the same way again.
func retrySignedPost(status int, err error) bool {
	if status != 0 {
		return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
	}
	if tlsFailure(err) {
		return false
	}
	return notSent(err)
}

// notSent reports whether a transport error happened before any byte of the
// request could reach the server: a failed dial or name lookup, or a TLS
// handshake that failed (tlsFailure) or timed out, after which no byte of
// the request is written; never once a connection was made (afterConnect).
func notSent(err error) bool {
	if afterConnect(err) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) || tlsFailure(err) {
		return true
	}
	_, untyped := untypedHandshake(err)
	return untyped
}

// tlsFailure reports whether a transport error is a failed TLS handshake
// that fails the same way when tried again: a certificate the client does
// not trust or that does not name the host, an alert from the server, or
// an answer that is not TLS at all; never once the handshake completed
// (afterConnect), whatever the bytes that follow.
func tlsFailure(err error) bool {
	if afterConnect(err) {
		return false
	}
	var verify *tls.CertificateVerificationError
	var authority x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var alert tls.AlertError
	var header tls.RecordHeaderError
	if errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &host) ||
		errors.As(err, &invalid) || errors.As(err, &alert) || errors.As(err, &header) {
		return true
	}
	again, untyped := untypedHandshake(err)
	return untyped && !again
}

// untypedHandshakeFailures are the failed handshakes net/http reports as
// plain errors, with no type to match, by their text, each with whether it
// may succeed when tried again. Nothing of the request was written in
// either.
var untypedHandshakeFailures = map[string]bool{
	// The server did not finish the handshake within the transport's
	// TLSHandshakeTimeout: it may be loaded, so the request is retried.
	"net/http: TLS handshake timeout": true,
	// The server answered in plain HTTP: a wrong URL, the same next time.
	"http: server gave HTTP response to HTTPS client": false,
}

// untypedHandshake looks up the innermost error of err's chain of single
// wraps in untypedHandshakeFailures: found reports a failed handshake, and
// again whether it may succeed when tried again.
func untypedHandshake(err error) (again, found bool) {
	for err != nil {
		if next := errors.Unwrap(err); next != nil {
			err = next
			continue
		}
		again, found = untypedHandshakeFailures[err.Error()]
		break
	}
	return again, found
}

// scrub is s, a value of a successful answer about to be quoted in an
// error (a report's status, say), with the request's credentials replaced
// by [REDACTED], as an error answer's body is.
func (r *response) scrub(s string) string {
	return scrub.Replace(s, requestSecrets(r.request))
}

// CallID returns the ID of the call that failed with err, as its log
// lines (call_id) name it: its requests failed, or its answer could not be
// read or said the order was not found; "" for an error before any request
// (invalid input, no credential).
func CallID(err error) string {
	var ae *attemptsError
	if errors.As(err, &ae) {
		return ae.callID
	}
	var re *readError
	if errors.As(err, &re) {
		return re.callID
	}
	return ""
}

// A call told to the transport's Observer (WithObserver): do hands an
// observed exchange to observed, which tells its start and end around run;
// run tells each retry. Without an Observer, do is run and each hook a nil
// check.

// WithObserver tells o of every call a Client or a WebhookSender makes,
// of its retries and their waits, and of each WebhookSender.Send (package
// observe says what an event holds: never a reference, an amount or a
// credential). A CallbackHandler takes its own (its Observer field); its
// Reconcile uses the Client's when it has none.
func WithObserver(o observe.Observer) TransportOption {
	return func(t *transport) error {
		if o == nil {
			return errors.New("paygate: WithObserver: nil observer")
		}
		t.observer = o
		return nil
	}
}

// observed runs x as run does, telling the Observer of its start and end.
func (t *transport) observed(ctx context.Context, x exchange) (*response, error) {
	ctx = t.observer.CallStart(ctx, observing.Call(x.method, x.target))
	resp, err := t.run(ctx, x)
	end := observe.CallEnd{Class: callClass(ctx, err)}
	var ae *attemptsError
	switch {
	case resp != nil:
		end.Attempts, end.Status = resp.Attempts, resp.StatusCode
	case errors.As(err, &ae):
		end.Attempts, end.Status = ae.attempts, answerStatus(ae.last)
	}
	t.observer.CallEnd(ctx, end)
	return resp, err
}

// callClass is how a call that ended with err failed.
func callClass(ctx context.Context, err error) observe.ErrorClass {
	var te *transportError
	switch {
	case err == nil:
		return observe.ClassOK
	case answerStatus(err) != 0:
		return observe.ClassAnswer
	case ctx.Err() != nil:
		return observe.ClassContext
	case errors.As(err, &te):
		return observe.ClassTransport
	}
	return observe.ClassRequest
}
