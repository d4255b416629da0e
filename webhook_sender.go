package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/zakat"
)

// DefaultBatchSize is how many transactions one webhook request carries
// unless WithBatchSize says otherwise. The protocol gives no maximum (docs/assumptions.md A-limits:
// "not shown"); 100 records keep a request near 50 KiB.
const DefaultBatchSize = 100

// WebhookSender posts zakat transactions to the bank webhook
// (docs/protocol.md endpoint 7) with X-API-Password. Safe for concurrent use.
type WebhookSender struct {
	endpoint  string
	password  secret
	batchSize int
	rules     WebhookValidator
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

// applySender makes a TransportOption a SenderOption: it sets the sender's
// transport.
func (o TransportOption) applySender(s *WebhookSender) error {
	if o == nil {
		return errNilOption
	}
	return o(&s.transport)
}

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

// WithWebhookValidator makes Send check transactions with v, so that its
// agency codes (zakat.ADBAgencies for the bank webhook page's ADBLZS,
// ADBPPZ, ADB) are the ones accepted (docs/assumptions.md A-webhook-brand).
// Without it the document's codes are.
func WithWebhookValidator(v WebhookValidator) SenderOption {
	return senderOption(func(s *WebhookSender) error {
		s.rules = v
		return nil
	})
}

// NewWebhookSender makes a sender for the webhook endpoint at webhookURL
// with the API password the operator issued. A URL with a path is the
// endpoint, used as given (the bank webhook page's
// https://pay.tulus.my/api/adb/webhook); only a bare host (no path, or "/")
// gets the document's path, /api/bank/webhook (docs/assumptions.md
// A-webhook-brand). A query or fragment is refused. The URL must be https,
// or http to a loopback host (a local sandbox): the password travels in a
// header. An empty password, or one with a line break, is refused; errors
// never repeat it.
func NewWebhookSender(webhookURL, password string, opts ...SenderOption) (*WebhookSender, error) {
	endpoint, err := webhookEndpoint(webhookURL)
	if err != nil {
		return nil, err
	}
	if err := checkWebhookPassword(password); err != nil {
		return nil, err
	}
	s := &WebhookSender{
		endpoint:  endpoint,
		password:  newSecret(password),
		batchSize: DefaultBatchSize,
		transport: defaultTransport(),
	}
	for _, o := range opts {
		if o == nil {
			return nil, errNilOption
		}
		if err := o.applySender(s); err != nil {
			return nil, err
		}
	}
	s.transport.client = noRedirects(s.transport.client)
	return s, nil
}

// checkWebhookPassword is NewWebhookSender's rule for the password; its
// error never repeats it.
func checkWebhookPassword(password string) error {
	if password == "" || strings.ContainsAny(password, "\r\n") {
		return errors.New("paygate: webhook password: empty or holds a line break")
	}
	return nil
}

// The environment variables NewWebhookSenderFromEnv reads.
const (
	EnvWebhookURL      = "PAYGATE_WEBHOOK_URL"
	EnvWebhookPassword = "PAYGATE_WEBHOOK_PASSWORD"
	EnvWebhookAgencies = "PAYGATE_WEBHOOK_AGENCIES"
)

// NewWebhookSenderFromEnv is NewWebhookSender with the URL from
// PAYGATE_WEBHOOK_URL and the password from PAYGATE_WEBHOOK_PASSWORD (both
// required), the agency codes from PAYGATE_WEBHOOK_AGENCIES when it is set
// (comma-separated, zakat.ParseAgencies), then opts. Every error about a
// variable names it (and wraps ErrNoCredential when it is unset). Like
// NewClientFromEnv it refuses with ErrDeprecatedAuth when a variable of
// the deprecated method is set.
func NewWebhookSenderFromEnv(opts ...SenderOption) (*WebhookSender, error) {
	if err := refuseDeprecatedEnv(); err != nil {
		return nil, err
	}
	u, pw := os.Getenv(EnvWebhookURL), os.Getenv(EnvWebhookPassword)
	switch {
	case u == "":
		return nil, fmt.Errorf("%w: %s is not set", ErrNoCredential, EnvWebhookURL)
	case pw == "":
		return nil, fmt.Errorf("%w: %s is not set", ErrNoCredential, EnvWebhookPassword)
	}
	if _, err := webhookEndpoint(u); err != nil {
		return nil, newEnvError(EnvWebhookURL, "webhook URL", err)
	}
	if err := checkWebhookPassword(pw); err != nil {
		return nil, newEnvError(EnvWebhookPassword, "webhook password", err)
	}
	if list := os.Getenv(EnvWebhookAgencies); list != "" {
		v, err := NewWebhookValidator(zakat.ParseAgencies(list)...)
		if err != nil {
			return nil, newEnvError(EnvWebhookAgencies, "webhook agency", err)
		}
		opts = append([]SenderOption{WithWebhookValidator(v)}, opts...)
	}
	return NewWebhookSender(u, pw, opts...)
}

// SendReport says what became of every transaction of a Send, by orderno,
// so that nothing is silently lost. Every transaction given to Send is in
// exactly one of Accepted, Rejected, Unconfirmed and Invalid.
//
// The lists follow what the service's answers prove, not what they suggest
// (docs/assumptions.md A-webhook-answers): once an attempt's outcome is
// unknown (a lost answer, a timeout, a 5xx), a later 4xx cannot prove that
// the batch was not stored, so its transactions are Unconfirmed, never
// Rejected.
type SendReport struct {
	// Requests lists the requests in order, with the ordernos each carried.
	Requests []RequestReport
	// Accepted: in a request the service answered with 2xx.
	Accepted []string
	// Rejected: in a request the service refused with a 4xx (other than 409
	// and 429) to which no earlier attempt's outcome was unknown: none of
	// them was stored. Sending them again unchanged will not help.
	Rejected []string
	// Unconfirmed: stored or not, nothing proves which: retries exhausted,
	// the context ended, a redirect, a 409 (the orderno may be stored
	// already), a 4xx after an attempt whose outcome was unknown, or not
	// sent after an earlier request stopped the send. RequestReport.Err says
	// why. Safe to send again: orderno is unique, so the service does not
	// store a transaction twice.
	Unconfirmed []string
	// Invalid lists the transactions that failed local validation; they
	// were not sent. The others were.
	Invalid []InvalidTransaction
}

// Attempts counts the HTTP requests Send made: every attempt of every
// request, retries included.
func (r *SendReport) Attempts() int {
	n := 0
	for _, rr := range r.Requests {
		n += rr.Attempts
	}
	return n
}

// InvalidTransaction is a transaction Send did not send because it breaks a
// rule of the webhook body (docs/protocol.md "Webhook transaction").
type InvalidTransaction struct {
	// Index is the transaction's position in the slice given to Send.
	Index int
	// OrderNo is the transaction's orderno (possibly empty).
	OrderNo string
	// Problems are the transaction's problems, by JSON pointer
	// (/transactions/<Index>/...).
	Problems []FieldError
}

// RequestReport is the outcome of one webhook request.
type RequestReport struct {
	// OrderNos are the transactions the request carried.
	OrderNos []string
	// StatusCode is the last status seen; 0 if none.
	StatusCode int
	// Attempts counts the attempts made; 0 when the request was never sent.
	Attempts int
	// Err is nil when accepted; otherwise what happened and, for
	// Unconfirmed transactions, why nothing proves their fate.
	Err error
}

// Send checks every transaction (the rules of ValidateTransactions, with the
// agency codes of WithWebhookValidator), then
// posts the valid ones in requests of the batch size, each retried on 429,
// 5xx and network errors with backoff and Retry-After (safe: orderno is
// unique). Invalid transactions are listed in SendReport.Invalid with their
// problems and not sent; they do not hold back the rest. A 401/403
// (errors.Is ErrUnauthorized) or a redirect (ErrRedirect, never followed:
// the password would go with it) stops the send, since every later request
// would meet the same; so does the end of ctx. The report is always
// returned; the error joins the validation error and every request's error.
func (s *WebhookSender) Send(ctx context.Context, txs []Transaction) (*SendReport, error) {
	report := &SendReport{}
	var errs []error
	valid := txs
	if byTx, err := checkTyped(txs, s.rules); err != nil {
		report.Invalid = invalidTransactions(txs, byTx)
		errs = append(errs, fmt.Errorf("%d of %d transactions not sent: %w", len(report.Invalid), len(txs), err))
		valid = validTransactions(txs, report.Invalid)
	}
	var stopped error
	for start := 0; start < len(valid); start += s.batchSize {
		chunk := valid[start:min(start+s.batchSize, len(valid))]
		if stopped != nil {
			report.notSent(chunk, stopped)
			continue
		}
		rr, err := s.sendChunk(ctx, chunk, report)
		if err == nil {
			continue
		}
		if ctx.Err() != nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrRedirect) {
			stopped = err
		}
		errs = append(errs, fmt.Errorf("request %d (%d transactions from orderno %q): %w", len(report.Requests)-1, len(chunk), rr.OrderNos[0], rr.Err))
	}
	return report, errors.Join(errs...)
}

// orderNos lists the ordernos of a request's transactions.
func orderNos(chunk []Transaction) []string {
	nos := make([]string, len(chunk))
	for i := range chunk {
		nos[i] = chunk[i].OrderNo
	}
	return nos
}

// notSent files a request not sent because an earlier one stopped the send:
// its transactions are Unconfirmed.
func (r *SendReport) notSent(chunk []Transaction, stopped error) {
	rr := RequestReport{OrderNos: orderNos(chunk), Err: fmt.Errorf("paygate: not sent: an earlier request stopped the send: %w", stopped)}
	r.Unconfirmed = append(r.Unconfirmed, rr.OrderNos...)
	r.Requests = append(r.Requests, rr)
}

// sendChunk posts one request's transactions and files them and the
// request in report; err is the request's error as the transport gave it.
func (s *WebhookSender) sendChunk(ctx context.Context, chunk []Transaction, report *SendReport) (rr RequestReport, err error) {
	rr.OrderNos = orderNos(chunk)
	defer func() { report.Requests = append(report.Requests, rr) }()
	resp, err := s.post(ctx, chunk)
	if err == nil {
		rr.StatusCode, rr.Attempts = resp.StatusCode, resp.Attempts
		report.Accepted = append(report.Accepted, rr.OrderNos...)
		return rr, nil
	}
	rr.Attempts = attemptsOf(err)
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		rr.StatusCode = apiErr.StatusCode
	}
	rr.Err = err
	if why := unconfirmedBecause(ctx, err); why != "" {
		rr.Err = fmt.Errorf("unconfirmed: %s: %w", why, err)
		report.Unconfirmed = append(report.Unconfirmed, rr.OrderNos...)
	} else {
		report.Rejected = append(report.Rejected, rr.OrderNos...)
	}
	return rr, err
}

// unconfirmedBecause says why a failed request's transactions may have been
// stored after all, or "" when the service's answer proves they were not.
func unconfirmedBecause(ctx context.Context, err error) string {
	var apiErr *APIError
	var ae *attemptsError
	switch {
	case ctx.Err() != nil:
		return "the context ended before an answer proved the outcome"
	case !errors.As(err, &apiErr):
		return "no answer (the request may have reached the service)"
	case apiErr.StatusCode/100 == 3:
		return "the service redirected the request, which was not followed"
	case apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500:
		return "retries exhausted on a temporary refusal or a server error"
	case errors.As(err, &ae) && ae.earlierUnknown:
		return fmt.Sprintf("an earlier attempt's outcome is unknown, so the later HTTP %d cannot prove the batch was not stored", apiErr.StatusCode)
	case apiErr.StatusCode == http.StatusConflict:
		return "HTTP 409: the service may hold these ordernos already"
	}
	return ""
}

// invalidTransactions lists the transactions with problems (checkTyped's),
// in index order; each has its own copy of its problems.
func invalidTransactions(txs []Transaction, byTx []txProblems) []InvalidTransaction {
	out := make([]InvalidTransaction, len(byTx))
	for k, p := range byTx {
		out[k] = InvalidTransaction{Index: p.index, OrderNo: txs[p.index].OrderNo, Problems: slices.Clone(p.problems)}
	}
	return out
}

// validTransactions is txs without the invalid ones (in index order).
func validTransactions(txs []Transaction, invalid []InvalidTransaction) []Transaction {
	valid := make([]Transaction, 0, len(txs)-len(invalid))
	next := 0
	for i := range txs {
		if next < len(invalid) && invalid[next].Index == i {
			next++
			continue
		}
		valid = append(valid, txs[i])
	}
	return valid
}

// attemptsOf reads the attempt count from a transport error (1 if unknown).
func attemptsOf(err error) int {
	var ae *attemptsError
	if errors.As(err, &ae) {
		return ae.attempts
	}
	return 1
}

// post sends one batch with retries. A 2xx is the answer whatever its body
// (docs/assumptions.md A-webhook-answers), which is cut, never an error.
func (s *WebhookSender) post(ctx context.Context, chunk []Transaction) (*response, error) {
	body, err := json.Marshal(Batch{Transactions: chunk})
	if err != nil {
		return nil, fmt.Errorf("paygate: encoding the batch: %w", err)
	}
	return s.transport.do(ctx, exchange{retryable: retryTransient, maxBody: maxErrorBody, cutBody: true, attempt: func(ctx context.Context) (*http.Request, error) {
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
