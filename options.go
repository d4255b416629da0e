package paygate

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/paygate-go/paygate/internal/skew"
)

// TransportOption configures what a Client and a WebhookSender share: the
// HTTP client, the logger, the retry policy, the time limit of one
// attempt and the Observer. It serves as an Option and as a SenderOption.
type TransportOption func(*transport) error

// errNilOption is NewClient's and NewWebhookSender's error for a nil
// option (a nil Option, SenderOption or TransportOption), which would
// otherwise panic when applied.
var errNilOption = errors.New("paygate: a nil option")

// WithHTTPClient sets the HTTP client. The SDK uses a copy that never
// follows a redirect (every request carries a credential): a 3xx answer is
// an *APIError matching ErrRedirect, except for CreateOrder, which returns
// it in CheckoutResult.
func WithHTTPClient(hc *http.Client) TransportOption {
	return func(t *transport) error {
		if hc == nil {
			return errors.New("paygate: WithHTTPClient: nil client")
		}
		t.client = hc
		return nil
	}
}

// WithLogger sets the logger: one debug line per attempt with method, host,
// path, status, attempt and duration, and nothing else (never a query, a
// body, a header or a credential).
func WithLogger(l *slog.Logger) TransportOption {
	return func(t *transport) error {
		if l == nil {
			return errors.New("paygate: WithLogger: nil logger")
		}
		t.logger = l
		return nil
	}
}

// WithRetry sets the retry policy for the requests that are safe to repeat
// (docs/protocol.md "Retries").
func WithRetry(p RetryPolicy) TransportOption {
	return func(t *transport) error {
		t.retry = p.withDefaults()
		return nil
	}
}

// WithAttemptTimeout bounds each attempt of a call (default 30 s); the
// call's context bounds the whole.
func WithAttemptTimeout(d time.Duration) TransportOption {
	return func(t *transport) error {
		if d <= 0 {
			return fmt.Errorf("paygate: WithAttemptTimeout: %v, want > 0", d)
		}
		t.attemptTimeout = d
		return nil
	}
}

// defaultTransport is the transport a Client or WebhookSender starts with:
// 30 s per attempt, the default retry policy, nothing logged.
func defaultTransport() transport {
	return transport{
		client:         &http.Client{},
		logger:         discardLogger(),
		retry:          RetryPolicy{}.withDefaults(),
		now:            time.Now,
		sleep:          sleepCtx,
		attemptTimeout: 30 * time.Second,
		clock:          &skew.Clock{},
	}
}
