package paygate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Version is the SDK version sent in the User-Agent header.
const Version = "0.1.0"

// userAgent identifies the SDK to the service.
const userAgent = "paygate-go/" + Version

// attemptFunc makes the request of one attempt; it is called again for every
// retry, so that a signed request can be signed afresh (new exp).
type attemptFunc func(ctx context.Context) (*http.Request, error)

// retryRule decides from one attempt's outcome whether another attempt is
// safe: resp is nil when err is a transport error.
type retryRule func(resp *http.Response, err error) bool

// response is what a successful (2xx) exchange returns: status, headers and
// the body, read whole up to maxBody.
type response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	Attempts   int
}

// transport runs requests with retries, logging and error mapping (DESIGN.md,
// Retries and Secrets). It never logs a query string, a body or a header.
type transport struct {
	client *http.Client
	logger *slog.Logger
	retry  RetryPolicy
	now    func() time.Time
}

// do runs attempts until one succeeds (2xx), one fails in a way rule does not
// retry, the retry policy is exhausted, or ctx is done. A non-2xx answer is
// an *APIError; a transport error is returned wrapped; after retries the
// error of the last attempt is returned. maxBody caps a 2xx body.
func (t *transport) do(ctx context.Context, attempt attemptFunc, rule retryRule, maxBody int64) (*response, error) {
	var lastErr error
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(err, lastErr)
		}
		req, err := attempt(ctx)
		if err != nil {
			return nil, err
		}
		start := t.now()
		resp, err := t.client.Do(req)
		var status int
		if resp != nil {
			status = resp.StatusCode
		}
		t.logger.LogAttrs(ctx, slog.LevelDebug, "paygate request",
			slog.String("method", req.Method), slog.String("host", req.URL.Host),
			slog.String("path", req.URL.Path), slog.Int("status", status),
			slog.Int("attempt", n), slog.Duration("duration", t.now().Sub(start)))
		var wait time.Duration
		if err != nil {
			if ctx.Err() != nil {
				return nil, errors.Join(ctx.Err(), lastErr)
			}
			lastErr = fmt.Errorf("paygate: %s %s: %w", req.Method, req.URL.Path, err)
		} else {
			limit := int64(maxErrorBody)
			if resp.StatusCode/100 == 2 {
				limit = maxBody
			}
			body, readErr := io.ReadAll(io.LimitReader(resp.Body, limit))
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
			resp.Body.Close()
			switch {
			case readErr != nil:
				lastErr = fmt.Errorf("paygate: %s %s: reading the answer: %w", req.Method, req.URL.Path, readErr)
			case resp.StatusCode/100 == 2:
				return &response{StatusCode: resp.StatusCode, Header: resp.Header, Body: body, Attempts: n}, nil
			default:
				lastErr = &APIError{Method: req.Method, Path: req.URL.Path, StatusCode: resp.StatusCode, Body: body}
				wait = retryAfter(resp.Header, t.now())
			}
		}
		if !rule(resp, err) {
			return nil, &attemptsError{n, lastErr}
		}
		d, ok := t.retry.wait(n, wait)
		if !ok {
			return nil, &attemptsError{n, lastErr}
		}
		if err := sleepCtx(ctx, d); err != nil {
			return nil, errors.Join(err, lastErr)
		}
	}
}

// discardLogger is the default logger: it drops everything, cheaply.
func discardLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
}

// attemptsError says how many attempts a failed exchange took; it unwraps to
// the last attempt's error.
type attemptsError struct {
	attempts int
	err      error
}

// Error names the attempt count when there was more than one.
func (e *attemptsError) Error() string {
	if e.attempts == 1 {
		return e.err.Error()
	}
	return fmt.Sprintf("%v (after %d attempts)", e.err, e.attempts)
}

// Unwrap returns the last attempt's error.
func (e *attemptsError) Unwrap() error { return e.err }

// retryTransient retries transport errors, 429 and 5xx: the rule for requests
// that are safe to repeat (GETs, and webhook batches, whose orderno is unique).
func retryTransient(resp *http.Response, err error) bool {
	return err != nil || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}
