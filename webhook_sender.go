package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DefaultBatchSize is how many transactions one webhook request carries
// unless WithBatchSize says otherwise. The spec gives no maximum (Limits:
// "not shown"); 100 records keep a request near 50 KiB.
const DefaultBatchSize = 100

// WebhookSender posts zakat transactions to the bank webhook (spec, endpoint
// 7) with X-API-Password. Safe for concurrent use.
type WebhookSender struct {
	endpoint  string
	password  secret
	batchSize int
	transport transport
}

// SenderOption configures a WebhookSender. The options it shares with a
// Client (WithHTTPClient, WithLogger, WithRetry, WithAttemptTimeout) are
// TransportOptions.
type SenderOption interface {
	applySender(*WebhookSender) error
}

// senderOption is a SenderOption for a WebhookSender only.
type senderOption func(*WebhookSender) error

func (o senderOption) applySender(s *WebhookSender) error { return o(s) }

// WithBatchSize sets how many transactions go in one request (at least 1).
func WithBatchSize(n int) SenderOption {
	return senderOption(func(s *WebhookSender) error {
		if n < 1 {
			return fmt.Errorf("paygate: WithBatchSize: %d, want at least 1", n)
		}
		s.batchSize = n
		return nil
	})
}

// NewWebhookSender makes a sender for the service at webhookURL (the
// {webhook_url} host, or the full .../api/bank/webhook address) with the API
// password the operator issued. The URL must be https, or http to a loopback
// host (a local sandbox): the password travels in a header. An empty
// password, or one with a line break, is refused; errors never repeat it.
func NewWebhookSender(webhookURL, password string, opts ...SenderOption) (*WebhookSender, error) {
	u, err := url.Parse(webhookURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("paygate: webhook URL %q: want an absolute http(s) URL", redactURL(webhookURL))
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("paygate: webhook URL %q: plain http is allowed only to a loopback host; the password would travel in clear", redactURL(webhookURL))
	}
	if u.User != nil {
		return nil, fmt.Errorf("paygate: webhook URL %q: no user information (the password goes in X-API-Password)", redactURL(webhookURL))
	}
	if password == "" || strings.ContainsAny(password, "\r\n") {
		return nil, errors.New("paygate: webhook password: empty or holds a line break")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path, WebhookPath) {
		u.Path += WebhookPath
	}
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	s := &WebhookSender{
		endpoint:  u.String(),
		password:  newSecret(password),
		batchSize: DefaultBatchSize,
		transport: defaultTransport(),
	}
	for _, o := range opts {
		if err := o.applySender(s); err != nil {
			return nil, err
		}
	}
	s.transport.client = noRedirects(s.transport.client)
	return s, nil
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SendReport says what became of every transaction of a Send, by orderno,
// so that nothing is silently lost.
type SendReport struct {
	// Requests lists the requests in order, with the ordernos each carried.
	Requests []RequestReport
	// Accepted: in a request the service answered with 2xx.
	Accepted []string
	// Rejected: in a request the service refused (4xx other than 429);
	// sending them again unchanged will not help.
	Rejected []string
	// Unconfirmed: not acknowledged (retries exhausted, context ended, or not
	// sent after the service refused the password). Safe to send again:
	// orderno is unique, so the service does not double-count.
	Unconfirmed []string
}

// RequestReport is the outcome of one webhook request.
type RequestReport struct {
	OrderNos   []string
	StatusCode int   // the last status seen; 0 if none
	Attempts   int   // 0 when the request was never sent
	Err        error // nil when accepted
}

// Send validates every transaction (ValidateTransactions) before sending
// anything, then posts them in requests of the batch size, each retried on
// 429, 5xx and network errors with backoff and Retry-After (safe: orderno is
// unique per spec B2). A 400 or 422 rejects that request and Send goes on
// with the next; 401/403 (errors.Is ErrUnauthorized) stops it, since every
// later request would fail too; so does the end of ctx. The report is
// returned whenever validation passed; the error joins every request's error.
func (s *WebhookSender) Send(ctx context.Context, txs []Transaction) (*SendReport, error) {
	if err := ValidateTransactions(txs); err != nil {
		return nil, err
	}
	report := &SendReport{}
	var errs []error
	stopped := false
	for start := 0; start < len(txs); start += s.batchSize {
		chunk := txs[start:min(start+s.batchSize, len(txs))]
		rr := RequestReport{OrderNos: make([]string, len(chunk))}
		for i := range chunk {
			rr.OrderNos[i] = chunk[i].OrderNo
		}
		if stopped {
			rr.Err = errors.New("paygate: not sent: an earlier request stopped the send")
			report.Unconfirmed = append(report.Unconfirmed, rr.OrderNos...)
			report.Requests = append(report.Requests, rr)
			continue
		}
		resp, err := s.post(ctx, chunk)
		rr.Err = err
		var apiErr *APIError
		switch {
		case err == nil:
			rr.StatusCode, rr.Attempts = resp.StatusCode, resp.Attempts
			report.Accepted = append(report.Accepted, rr.OrderNos...)
		case errors.As(err, &apiErr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
			rr.StatusCode = apiErr.StatusCode
			rr.Attempts = attemptsOf(err)
			if apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500 {
				report.Unconfirmed = append(report.Unconfirmed, rr.OrderNos...)
			} else {
				report.Rejected = append(report.Rejected, rr.OrderNos...)
			}
			stopped = errors.Is(err, ErrUnauthorized)
		default:
			rr.Attempts = attemptsOf(err)
			report.Unconfirmed = append(report.Unconfirmed, rr.OrderNos...)
			stopped = ctx.Err() != nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("request %d (%d transactions from orderno %q): %w", len(report.Requests), len(chunk), rr.OrderNos[0], err))
		}
		report.Requests = append(report.Requests, rr)
	}
	return report, errors.Join(errs...)
}

// attemptsOf reads the attempt count from a transport error (1 if unknown).
func attemptsOf(err error) int {
	var ae *attemptsError
	if errors.As(err, &ae) {
		return ae.attempts
	}
	return 1
}

// post sends one batch with retries.
func (s *WebhookSender) post(ctx context.Context, chunk []Transaction) (*response, error) {
	body, err := json.Marshal(Batch{Transactions: chunk})
	if err != nil {
		return nil, fmt.Errorf("paygate: encoding the batch: %w", err)
	}
	return s.transport.do(ctx, exchange{retryable: retryTransient, maxBody: maxErrorBody, attempt: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("X-API-Password", s.password.reveal())
		return req, nil
	}})
}
