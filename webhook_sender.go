package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/agencybrand"
	"github.com/paygate-go/paygate/internal/callid"
	"github.com/paygate-go/paygate/internal/paths"
	"github.com/paygate-go/paygate/observe"
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
	rules     zakat.Validator
	transport transport
	// sendTimeout bounds one Send (WithSendTimeout).
	sendTimeout time.Duration
	// barePath is the path a bare host's URL gets (WithADBBrand).
	barePath string
}

// SenderOption configures a WebhookSender. The options it shares with a
// Client (WithHTTPClient, WithLogger, WithRetry, WithAttemptTimeout,
// WithObserver) are TransportOptions.
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

// DefaultSendTimeout bounds one Send unless WithSendTimeout says
// otherwise. It lets one request use every attempt of the default retry
// policy (4 attempts of at most 30 s with 3 waits of at most 30 s: 3.5
// minutes) and ends a send to a bank that stalls within minutes, where a
// scheduled job or an operator notices. A feed of many requests that needs
// longer sets WithSendTimeout (or sends in parts).
const DefaultSendTimeout = 5 * time.Minute

// WithSendTimeout bounds one Send, all its requests, attempts and waits
// included (default DefaultSendTimeout; d > 0). When it passes, the
// request under way is zakat.SendUnconfirmed (or zakat.SendNotSent if
// nothing of it reached the service) and the requests not yet made are
// zakat.SendNotSent: safe to send again. The context given to Send can end
// it sooner.
func WithSendTimeout(d time.Duration) SenderOption {
	return senderOption(func(s *WebhookSender) error {
		if d <= 0 {
			return fmt.Errorf("paygate: WithSendTimeout: %v, want > 0", d)
		}
		s.sendTimeout = d
		return nil
	})
}

// WithWebhookValidator makes Send check transactions with v, so that its
// agency codes (zakat.ADBAgencies for the bank webhook page's ADBLZS,
// ADBPPZ, ADB) are the ones accepted (docs/assumptions.md A-webhook-brand).
// Without it the document's codes are.
func WithWebhookValidator(v zakat.Validator) SenderOption {
	return senderOption(func(s *WebhookSender) error {
		s.rules = v
		return nil
	})
}

// WithADBBrand is the one switch for the real service's brand
// (docs/assumptions.md A-webhook-brand): Send checks its agency codes,
// ADBLZS, ADBPPZ and ADB (zakat.ADBAgencies), and a bare host's URL gets
// its path, /api/adb/webhook. Without it the document's codes (BANKLZS,
// BANKPPZ, BANK) and path are the default; a later WithWebhookValidator
// sets other codes.
func WithADBBrand() SenderOption {
	return senderOption(func(s *WebhookSender) error {
		rules, err := zakat.NewValidator(zakat.ADBAgencies()...)
		s.rules, s.barePath = rules, paths.ADBWebhook
		return err
	})
}

// NewWebhookSender makes a sender for the webhook endpoint at webhookURL
// with the API password the operator issued. A URL with a path is the
// endpoint, used as given (the bank webhook page's
// https://pay.tulus.my/api/adb/webhook); only a bare host (no path, or "/")
// gets the document's path, /api/bank/webhook, or WithADBBrand's
// (docs/assumptions.md A-webhook-brand). A query or fragment is refused.
// The URL must be https, or http to a loopback host (a local sandbox): the
// password travels in a header. An empty password, or one with a line
// break, is refused; errors never repeat it.
func NewWebhookSender(webhookURL, password string, opts ...SenderOption) (*WebhookSender, error) {
	if _, err := webhookEndpoint(webhookURL); err != nil {
		return nil, err
	}
	if err := checkWebhookPassword(password); err != nil {
		return nil, err
	}
	s := &WebhookSender{
		password:    newSecret(password),
		batchSize:   DefaultBatchSize,
		transport:   defaultTransport(),
		sendTimeout: DefaultSendTimeout,
		barePath:    paths.Webhook,
	}
	for _, o := range opts {
		if o == nil {
			return nil, errNilOption
		}
		if err := o.applySender(s); err != nil {
			return nil, err
		}
	}
	endpoint, err := webhookEndpointAt(webhookURL, s.barePath)
	if err != nil {
		return nil, err
	}
	s.endpoint = endpoint
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

// Send checks every transaction (zakat.Validator.ValidateTransactions,
// with the validator of WithWebhookValidator) and posts the valid ones in
// batches, each retried on 429, 5xx and network errors; invalid ones are
// listed in SendReport.Invalid and not sent. A refusal (400, 409, 422)
// settles the transactions it names and sends the others of its request
// again at once; one that names none is split in halves to find them
// (docs/bank-sender.md "Refusals"). It stops, the rest zakat.SendNotSent,
// on a 401/403 (ErrUnauthorized), a redirect (ErrRedirect), a failed TLS
// handshake, the end of ctx or the WithSendTimeout deadline. The report is
// never nil and says what became of every transaction; the error is nil
// when all were accepted, else a *SendError carrying the same report.
func (s *WebhookSender) Send(ctx context.Context, txs []zakat.Transaction) (report *zakat.SendReport, err error) {
	return s.send(ctx, txs, false)
}

// Resend is Send for transactions sent before whose outcome is unknown
// (zakat.SendUnconfirmed or SendNotSent in an earlier report, or a process
// that stopped mid-send): a refusal of one's orderno as already stored
// (409, or a 400/422 naming the orderno's uniqueness) proves it stored, so
// it is zakat.SendAccepted with Outcome.AlreadyStored, never rejected;
// Send says the same only after an attempt of its own was lost
// (docs/assumptions.md A-webhook-duplicates).
func (s *WebhookSender) Resend(ctx context.Context, txs []zakat.Transaction) (*zakat.SendReport, error) {
	return s.send(ctx, txs, true)
}

// send is Send and Resend; resending says the transactions may be stored.
func (s *WebhookSender) send(ctx context.Context, txs []zakat.Transaction, resending bool) (report *zakat.SendReport, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.sendTimeout, &deadlineError{d: s.sendTimeout})
	defer cancel()
	report = &zakat.SendReport{}
	if o := s.transport.observer; o != nil {
		ctx = o.SendStart(ctx, observe.Send{Transactions: len(txs)})
		defer func() {
			o.SendEnd(ctx, observe.SendEnd{Requests: len(report.Requests), Accepted: len(report.Accepted), Invalid: len(report.Invalid),
				Rejected: len(report.Rejected), Unconfirmed: len(report.Unconfirmed), NotSent: len(report.NotSent), Failed: err != nil})
		}()
	}
	run := &sendRun{s: s, report: report}
	valid, idx := validTransactions(txs, nil)
	var ve *zakat.ValidationError
	if err := s.rules.ValidateTransactions(txs); errors.As(err, &ve) {
		report.Invalid = invalidTransactions(txs, ve.Problems)
		run.causes = append(run.causes, s.invalidCause(len(report.Invalid), len(txs), ve))
		valid, idx = validTransactions(txs, report.Invalid)
	}
	for start := 0; start < len(valid); start += s.batchSize {
		end := min(start+s.batchSize, len(valid))
		run.request(ctx, batchPart{txs: valid[start:end], idx: idx[start:end], sentBefore: resending})
	}
	return report, sendError(report, run.causes)
}

// brandFix names the switch of the agency codes, for a batch of the other
// brand's (agencybrand).
const brandFix = "set it with paygate.WithADBBrand() for the real service (ADBLZS, ADBPPZ, ADB), or without it for the document's (BANKLZS, BANKPPZ, BANK)"

// invalidCause is Send's cause for its invalid transactions: the
// validation error, or, when they carry the other brand's agency codes,
// one sentence naming the switch instead of one problem per transaction
// (docs/assumptions.md A-webhook-brand); it unwraps to ve.
func (s *WebhookSender) invalidCause(invalid, total int, ve *zakat.ValidationError) error {
	m, ok := agencybrand.Find(s.rules, ve.Problems)
	if !ok {
		return fmt.Errorf("%d of %d transactions invalid, not sent: %w", invalid, total, ve)
	}
	msg := fmt.Sprintf("%d of %d transactions invalid, not sent: %s", invalid, total, m.Sentence(brandFix))
	if len(m.Rest) > 0 {
		msg += fmt.Sprintf("; %d other problems, the first: %s", len(m.Rest), m.Rest[0].Error())
	}
	return &causeError{msg: msg, err: ve}
}

// causeError is a cause with a message of its own that unwraps to err.
type causeError struct {
	msg string
	err error
}

// Error is the message.
func (e *causeError) Error() string { return e.msg }

// Unwrap returns err.
func (e *causeError) Unwrap() error { return e.err }

// batchPart is the transactions of one request and their positions in the
// slice given to Send.
type batchPart struct {
	txs []zakat.Transaction
	idx []int
	// sentBefore: they may be stored already (Resend, or an earlier
	// attempt of this send whose outcome is unknown carried them).
	sentBefore bool
	// half: a half of a request split to isolate what a refusal did not name.
	half bool
}

// sendRun is one Send's state: its report, the causes of its error, what
// stopped it, and the halves it split refused requests into.
type sendRun struct {
	s       *WebhookSender
	report  *zakat.SendReport
	causes  []error
	stopped error
	// halves counts the halves sent after a refusal that named no
	// transaction, and refusedHalves those refused so too (splitAllowed).
	halves, refusedHalves int
}

// request sends p, files its report and, when a refusal named some of its
// transactions or none, sends the others or its halves at once.
func (r *sendRun) request(ctx context.Context, p batchPart) {
	if r.stopped != nil {
		fileRequest(r.report, notSentAfter(p, r.stopped))
		return
	}
	rr, err := r.s.sendChunk(ctx, p)
	if p.half {
		r.halves++
	}
	if err == nil {
		fileRequest(r.report, rr)
		return
	}
	if stopsTheSend(ctx, err) {
		r.stopped = stopCause(ctx, err)
	}
	next := r.judge(ctx, &rr, p, err)
	fileRequest(r.report, rr)
	if why := firstFailure(rr); why != nil {
		r.causes = append(r.causes, fmt.Errorf("request %d (%d transactions from orderno %q): %w", len(r.report.Requests)-1, len(p.txs), rr.OrderNos[0], why))
	}
	for _, q := range next {
		r.request(ctx, q)
	}
}

// firstFailure is the reason of the first transaction rr settles other
// than accepted (its own outcomes first), or nil.
func firstFailure(rr zakat.RequestReport) error {
	settled := make(map[int]bool, len(rr.Own)+len(rr.Resent))
	for _, i := range rr.Resent {
		settled[i] = true
	}
	for _, o := range rr.Own {
		if o.Status != zakat.SendAccepted {
			return o.Err
		}
		settled[o.Index] = true
	}
	for _, i := range rr.Indexes {
		if !settled[i] && rr.Status != zakat.SendAccepted {
			return rr.Err
		}
	}
	return nil
}

// splitAllowed reports whether a request refused without naming its
// transactions may be split again: not once at least 8 halves were sent
// and more than 3 in 4 of them were refused so too, as from a service that
// refuses every batch (isolating k bad transactions in n refuses about one
// half in two, in about 2k·log2(n) requests). The halves already made are
// still sent, each once: a service refusing everything costs a send about
// 2·log2(batch size) requests more than its batches.
func (r *sendRun) splitAllowed() bool {
	return r.halves < 8 || r.refusedHalves*4 <= r.halves*3
}

// judge reads a failed request's answer: it sets rr's Status, Err and the
// outcomes of the transactions the answer settles (Own), and returns the
// parts to send again at once (their positions in rr.Resent).
func (r *sendRun) judge(ctx context.Context, rr *zakat.RequestReport, p batchPart, err error) []batchPart {
	status, why := classify(ctx, err)
	sentBefore := p.sentBefore || earlierUnknown(err)
	if status == zakat.SendNotSent && p.sentBefore {
		status, why = zakat.SendUnconfirmed, "sent before with an unknown outcome (an earlier send, or an earlier request of this one), which may have stored them, and this one was not sent ("+why+")"
	}
	var apiErr *APIError
	refused := ctx.Err() == nil && errors.As(err, &apiErr) && (apiErr.StatusCode == http.StatusBadRequest ||
		apiErr.StatusCode == http.StatusConflict || apiErr.StatusCode == http.StatusUnprocessableEntity)
	if p.half && refused {
		r.refusedHalves++ // r.halves counts it in request
	}
	if !refused {
		if status == zakat.SendRejected && p.sentBefore {
			status, why = zakat.SendUnconfirmed, "sent before with an unknown outcome; this refusal proves only that this request stored nothing"
		}
		r.setStatus(rr, status, why, err)
		return nil
	}
	return r.refusal(rr, p, apiErr, err, status, why, sentBefore)
}

// refusal settles a 400, 409 or 422 by what its body names
// (docs/assumptions.md A-webhook-duplicates, A-webhook-refusals); status
// and why are what the answer alone would make of the whole request.
func (r *sendRun) refusal(rr *zakat.RequestReport, p batchPart, apiErr *APIError, err error, status zakat.SendStatus, why string, sentBefore bool) []batchPart {
	ref := readRefusal(apiErr.Body, rr.OrderNos)
	switch {
	case apiErr.StatusCode == http.StatusConflict || ref.duplicate:
		return r.duplicates(rr, p, ref, sentBefore, err)
	case len(ref.bad) > 0:
		return r.pointed(rr, p, ref, apiErr.StatusCode, sentBefore, err)
	case len(p.txs) > 1 && r.stopped == nil && r.splitAllowed():
		r.setStatus(rr, status, why, err)
		return r.split(rr, p, sentBefore)
	case sentBefore:
		r.setStatus(rr, zakat.SendUnconfirmed, fmt.Sprintf("sent before with an unknown outcome, and the HTTP %d names no rule of theirs, so it cannot prove they were not stored", apiErr.StatusCode), err)
	case len(p.txs) > 1 && r.stopped == nil:
		r.setStatus(rr, zakat.SendRejected, "", fmt.Errorf("not split further: %d of %d halves were refused without naming a transaction, as if the service refused every batch: %w", r.refusedHalves, r.halves, err))
	default:
		r.setStatus(rr, status, why, err)
	}
	return nil
}

// pointed rejects the transactions a refusal points at, each with a
// *zakat.Refusal, and returns the others to send again at once.
func (r *sendRun) pointed(rr *zakat.RequestReport, p batchPart, ref refusal, code int, sentBefore bool, err error) []batchPart {
	for j := range p.txs {
		if problems := ref.bad[j]; problems != nil {
			rr.Own = append(rr.Own, zakat.Outcome{Index: p.idx[j], OrderNo: rr.OrderNos[j], Status: zakat.SendRejected,
				Err: &zakat.Refusal{Index: p.idx[j], OrderNo: rr.OrderNos[j], StatusCode: code, Problems: problems, Cause: err}})
		}
	}
	r.setStatus(rr, zakat.SendRejected, "", err)
	return r.without(rr, p, sentBefore, func(j int) bool { return ref.bad[j] != nil })
}

// setStatus sets rr's status and error, with why when given.
func (r *sendRun) setStatus(rr *zakat.RequestReport, status zakat.SendStatus, why string, err error) {
	rr.Status, rr.Err = status, err
	if why != "" {
		rr.Err = fmt.Errorf("%s: %s: %w", status, why, err)
	}
}

// duplicates settles a refusal of ordernos as already stored (409, or a
// 400 or 422 naming the orderno's uniqueness; docs/assumptions.md
// A-webhook-duplicates): the ordernos it names are stored when sent before,
// else unconfirmed; the others are sent again without them. Naming none,
// the request is split, and a lone transaction settled as a named one.
func (r *sendRun) duplicates(rr *zakat.RequestReport, p batchPart, ref refusal, sentBefore bool, err error) []batchPart {
	firstSend := fmt.Errorf("%s: %w: another transaction may hold it, or an earlier send the caller did not report; never send it again under a new orderno without checking, which could store the payment twice: %w", zakat.SendUnconfirmed, zakat.ErrHeldAtFirstSend, err)
	named := ref.stored
	if len(named) == 0 && len(p.txs) == 1 {
		named = []int{0}
	}
	if len(named) == 0 {
		r.setStatus(rr, zakat.SendUnconfirmed, "a refusal of ordernos as already stored that names none of them", err)
		if r.stopped == nil && r.splitAllowed() {
			return r.split(rr, p, sentBefore)
		}
		return nil
	}
	stored := map[int]bool{}
	for _, j := range named {
		stored[j] = true
	}
	for j := range p.txs {
		if !stored[j] {
			continue
		}
		o := zakat.Outcome{Index: p.idx[j], OrderNo: rr.OrderNos[j], Status: zakat.SendAccepted, AlreadyStored: true}
		if !sentBefore {
			o.Status, o.AlreadyStored, o.Err = zakat.SendUnconfirmed, false, firstSend
		}
		rr.Own = append(rr.Own, o)
	}
	rr.Status, rr.Err = zakat.SendAccepted, nil // what became of the named: found stored
	if !sentBefore {
		rr.Status, rr.Err = zakat.SendUnconfirmed, firstSend
	}
	return r.without(rr, p, sentBefore, func(j int) bool { return stored[j] })
}

// without is the part of p whose positions drop does not hold, to send
// again at once, noted in rr.Resent: the answer refused the whole request,
// so it stored none of them (A-webhook-refusals).
func (r *sendRun) without(rr *zakat.RequestReport, p batchPart, sentBefore bool, drop func(j int) bool) []batchPart {
	q := batchPart{sentBefore: sentBefore}
	for j := range p.txs {
		if !drop(j) {
			q.txs, q.idx = append(q.txs, p.txs[j]), append(q.idx, p.idx[j])
		}
	}
	if len(q.txs) == 0 {
		return nil
	}
	rr.Resent = q.idx
	return []batchPart{q}
}

// split halves p to isolate what a refusal did not name, noting both
// halves in rr.Resent.
func (r *sendRun) split(rr *zakat.RequestReport, p batchPart, sentBefore bool) []batchPart {
	mid := len(p.txs) / 2
	rr.Resent = p.idx
	return []batchPart{
		{txs: p.txs[:mid], idx: p.idx[:mid], sentBefore: sentBefore, half: true},
		{txs: p.txs[mid:], idx: p.idx[mid:], sentBefore: sentBefore, half: true},
	}
}

// stopsTheSend reports whether a request's failure would be every later
// request's too, or time is up.
func stopsTheSend(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrRedirect) || tlsFailure(err)
}

// stopCause is why the send stopped: the context's cause (the
// WithSendTimeout deadline, or the caller's) when it ended, else err.
func stopCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// orderNos lists the ordernos of a request's transactions.
func orderNos(chunk []zakat.Transaction) []string {
	nos := make([]string, len(chunk))
	for i := range chunk {
		nos[i] = chunk[i].OrderNo
	}
	return nos
}

// notSentAfter is the report of a request not made because an earlier
// one stopped the send: its transactions are zakat.SendNotSent, or
// zakat.SendUnconfirmed when they may be stored already (sent before).
func notSentAfter(chunk batchPart, stopped error) zakat.RequestReport {
	rr := zakat.RequestReport{OrderNos: orderNos(chunk.txs), Indexes: chunk.idx, Status: zakat.SendNotSent,
		Err: fmt.Errorf("paygate: not sent: the send stopped before this request: %w", stopped)}
	if chunk.sentBefore {
		rr.Status = zakat.SendUnconfirmed
		rr.Err = fmt.Errorf("%s: sent before with an unknown outcome, and the send stopped before they were sent again: %w", rr.Status, stopped)
	}
	return rr
}

// sendChunk posts one request's transactions and returns its report; err
// is the request's error as the transport gave it.
func (s *WebhookSender) sendChunk(ctx context.Context, chunk batchPart) (rr zakat.RequestReport, err error) {
	rr.OrderNos, rr.Indexes = orderNos(chunk.txs), chunk.idx
	resp, err := s.post(ctx, chunk.txs)
	if err == nil {
		rr.StatusCode, rr.Attempts, rr.Status = resp.StatusCode, resp.Attempts, zakat.SendAccepted
		rr.CallID, rr.RequestID = resp.callID, callid.FromHeader(resp.Header)
		return rr, nil
	}
	rr.CallID = CallID(err)
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		rr.StatusCode, rr.RequestID = apiErr.StatusCode, apiErr.RequestID
	}
	var ae *attemptsError
	if errors.As(err, &ae) {
		rr.Attempts, rr.RetryAfter = ae.attempts, ae.retryAfter
	}
	rr.Err = err
	status, why := classify(ctx, err)
	rr.Status = status
	if why != "" {
		rr.Err = fmt.Errorf("%s: %s: %w", status, why, err)
	}
	return rr, err
}

// classify says what a failed request's error proves about its
// transactions and, unless the service's answer proves they were not
// stored (zakat.SendRejected), why.
func classify(ctx context.Context, err error) (zakat.SendStatus, string) {
	var apiErr *APIError
	switch {
	case !reachedService(err):
		return zakat.SendNotSent, notSentBecause(ctx, err)
	case ctx.Err() != nil:
		return zakat.SendUnconfirmed, endedBy(ctx) + " before an answer proved the outcome"
	case !errors.As(err, &apiErr):
		return zakat.SendUnconfirmed, "no answer (the request may have reached the service)"
	case apiErr.StatusCode/100 == 3:
		return zakat.SendUnconfirmed, "the service redirected the request, which was not followed"
	case apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500:
		return zakat.SendUnconfirmed, retriesEndedBecause(err)
	case earlierUnknown(err):
		return zakat.SendUnconfirmed, fmt.Sprintf("an earlier attempt's outcome is unknown, so the later HTTP %d cannot prove the batch was not stored", apiErr.StatusCode)
	case apiErr.StatusCode == http.StatusConflict:
		return zakat.SendUnconfirmed, "HTTP 409: the service may hold these ordernos already"
	}
	return zakat.SendRejected, ""
}

// reachedService reports whether any attempt of a failed request may have
// reached the service (false also for an error before any attempt).
func reachedService(err error) bool {
	var ae *attemptsError
	return errors.As(err, &ae) && ae.reached
}

// earlierUnknown reports whether an attempt before the last one of a
// failed request may have been acted on.
func earlierUnknown(err error) bool {
	var ae *attemptsError
	return errors.As(err, &ae) && ae.earlierUnknown
}

// retriesEndedBecause says why a request answered 429 or 5xx was not
// retried again: a Retry-After past the policy's longest wait, with its
// value, or the attempts used up.
func retriesEndedBecause(err error) string {
	var ae *attemptsError
	if errors.As(err, &ae) && ae.retryAfter > 0 {
		return fmt.Sprintf("the service asked to retry after %v (Retry-After), longer than the sender waits (RetryPolicy.MaxDelay %v)", ae.retryAfter, ae.maxDelay)
	}
	return "retries exhausted on a temporary refusal or a server error"
}

// notSentBecause says why nothing of a request reached the service.
func notSentBecause(ctx context.Context, err error) string {
	switch {
	case tlsFailure(err):
		return "the TLS handshake failed (a certificate not trusted or not for this host, a handshake refused, or a server that does not speak TLS), so nothing was sent; not retried"
	case ctx.Err() != nil:
		return endedBy(ctx) + " before the request reached the service"
	}
	return "the connection could not be made (a failed dial or name lookup, or a TLS handshake that timed out), so nothing was sent"
}

// endedBy names what ended a Send's context: its WithSendTimeout deadline
// or the caller's context.
func endedBy(ctx context.Context) string {
	var de *deadlineError
	if errors.As(context.Cause(ctx), &de) {
		return fmt.Sprintf("the send's deadline (%v, WithSendTimeout) passed", de.d)
	}
	return "the context ended"
}

// invalidTransactions groups the problems of ValidateTransactions, which
// come in index order, by the transaction their JSON pointer names
// (/transactions/<i>/...), each with its own problems.
func invalidTransactions(txs []zakat.Transaction, problems []zakat.FieldError) []zakat.InvalidTransaction {
	var out []zakat.InvalidTransaction
	for _, p := range problems {
		i := pointerIndex(p.Field)
		if n := len(out); n == 0 || out[n-1].Index != i {
			it := zakat.InvalidTransaction{Index: i}
			if 0 <= i && i < len(txs) {
				it.OrderNo = txs[i].OrderNo
			}
			out = append(out, it)
		}
		last := &out[len(out)-1]
		last.Problems = append(last.Problems, p)
	}
	return out
}

// pointerIndex is the transaction a problem's JSON pointer names
// (/transactions/<i>/...), or -1.
func pointerIndex(pointer string) int {
	rest, ok := strings.CutPrefix(pointer, "/transactions/")
	digits, _, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(digits)
	if !ok || err != nil {
		return -1
	}
	return i
}

// validTransactions is txs without the invalid ones (in index order),
// with the index in txs of each.
func validTransactions(txs []zakat.Transaction, invalid []zakat.InvalidTransaction) ([]zakat.Transaction, []int) {
	if len(invalid) == 0 {
		idx := make([]int, len(txs))
		for i := range idx {
			idx[i] = i
		}
		return txs, idx
	}
	valid := make([]zakat.Transaction, 0, len(txs)-len(invalid))
	idx := make([]int, 0, len(txs)-len(invalid))
	next := 0
	for i := range txs {
		if next < len(invalid) && invalid[next].Index == i {
			next++
			continue
		}
		valid, idx = append(valid, txs[i]), append(idx, i)
	}
	return valid, idx
}

// post sends one batch with retries. A 2xx is the answer whatever its body
// (docs/assumptions.md A-webhook-answers), which is cut, never an error.
func (s *WebhookSender) post(ctx context.Context, chunk []zakat.Transaction) (*response, error) {
	body, err := json.Marshal(zakat.Batch{Transactions: chunk})
	if err != nil {
		return nil, fmt.Errorf("paygate: encoding the batch: %w", err)
	}
	return s.transport.do(ctx, exchange{method: http.MethodPost, target: s.endpoint, retryable: retryTransient, maxBody: maxErrorBody, cutBody: true, attempt: func(ctx context.Context) (*http.Request, error) {
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
