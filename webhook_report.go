package paygate

// The report of a WebhookSender.Send and its error. The report is filed
// request by request (each RequestReport holds the positions of its
// transactions in the slice given to Send); Outcomes derives the list by
// transaction from the requests and Invalid, so that nothing is held twice.

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TxStatus is what became of one transaction of a Send.
type TxStatus uint8

// The statuses of a transaction. Only TxAccepted means stored; only
// TxRejected and TxInvalid mean that sending it again unchanged will not
// help. TxUnconfirmed and TxNotSent are safe to send again (SafeToResend):
// orderno is unique, so the service does not store a transaction twice.
const (
	// TxAccepted: in a request the service answered with 2xx.
	TxAccepted TxStatus = iota
	// TxRejected: in a request the service refused with a 4xx (other than
	// 409 and 429) to which no earlier attempt's outcome was unknown: it was
	// not stored. TxOutcome.Err holds the service's answer (*APIError).
	TxRejected
	// TxUnconfirmed: stored or not, nothing proves which (a lost answer, a
	// timeout, a 5xx, a 409, a redirect, a 4xx after an attempt whose
	// outcome was unknown). TxOutcome.Err says why.
	TxUnconfirmed
	// TxNotSent: no byte of it reached the service: the connection or its
	// TLS handshake failed, or the send stopped before its request (the
	// deadline of WithSendTimeout, the end of the context, an earlier 401,
	// 403, redirect or TLS failure). TxOutcome.Err says why.
	TxNotSent
	// TxInvalid: it breaks a rule of the webhook body and was not sent;
	// TxOutcome.Err is a *ValidationError with its problems.
	TxInvalid
)

// txStatusNames are the words TxStatus.String prints, by status.
var txStatusNames = [...]string{TxAccepted: "accepted", TxRejected: "rejected", TxUnconfirmed: "unconfirmed", TxNotSent: "not sent", TxInvalid: "invalid"}

// String names the status in words ("not sent").
func (s TxStatus) String() string {
	if int(s) < len(txStatusNames) {
		return txStatusNames[s]
	}
	return fmt.Sprintf("TxStatus(%d)", uint8(s))
}

// SafeToResend reports whether a transaction with this status may be sent
// again as it is: unconfirmed or not sent.
func (s TxStatus) SafeToResend() bool { return s == TxUnconfirmed || s == TxNotSent }

// TxOutcome is what became of one transaction of a Send.
type TxOutcome struct {
	// Index is the transaction's position in the slice given to Send.
	Index int
	// OrderNo is the transaction's orderno.
	OrderNo string
	// Status is what became of it.
	Status TxStatus
	// Request is the position in SendReport.Requests of the request that
	// carried it; -1 for TxInvalid.
	Request int
	// Err is nil for TxAccepted; otherwise the reason: the request's error
	// (RequestReport.Err), or a *ValidationError for TxInvalid.
	Err error
}

// SendReport says what became of every transaction of a Send, so that
// nothing is silently lost. Send always returns one, error or not.
// Outcomes lists every transaction by its index with its status and
// reason; the lists below hold the same ordernos by status, and every
// transaction given to Send is in exactly one of them.
//
// The statuses follow what the service's answers prove, not what they
// suggest (docs/assumptions.md A-webhook-answers): once an attempt's
// outcome is unknown (a lost answer, a timeout, a 5xx), a later 4xx cannot
// prove that the batch was not stored, so its transactions are Unconfirmed,
// never Rejected.
type SendReport struct {
	// Requests lists the requests in order, with the transactions each
	// carried.
	Requests []RequestReport
	// Accepted: TxAccepted, by orderno.
	Accepted []string
	// Rejected: TxRejected, by orderno. Sending them again unchanged will
	// not help.
	Rejected []string
	// Unconfirmed: TxUnconfirmed, by orderno. Safe to send again.
	Unconfirmed []string
	// NotSent: TxNotSent, by orderno. Safe to send again.
	NotSent []string
	// Invalid lists the transactions that failed local validation
	// (TxInvalid); they were not sent. The others were, or are NotSent.
	Invalid []InvalidTransaction
	// total counts the transactions given to Send.
	total int
}

// Outcomes lists what became of every transaction given to Send, by its
// index in that slice: out[i] is the outcome of txs[i]. Each call builds a
// new slice.
func (r *SendReport) Outcomes() []TxOutcome {
	out := make([]TxOutcome, r.total)
	for k, rr := range r.Requests {
		for j, i := range rr.Indexes {
			out[i] = TxOutcome{Index: i, OrderNo: rr.OrderNos[j], Status: rr.Status, Request: k, Err: rr.Err}
		}
	}
	for _, it := range r.Invalid {
		out[it.Index] = TxOutcome{Index: it.Index, OrderNo: it.OrderNo, Status: TxInvalid, Request: -1, Err: &ValidationError{Problems: it.Problems}}
	}
	return out
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

// file records a request and puts its ordernos in the list of its status.
func (r *SendReport) file(rr RequestReport) {
	lists := [...]*[]string{TxAccepted: &r.Accepted, TxRejected: &r.Rejected, TxUnconfirmed: &r.Unconfirmed, TxNotSent: &r.NotSent}
	*lists[rr.Status] = append(*lists[rr.Status], rr.OrderNos...)
	r.Requests = append(r.Requests, rr)
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

// RequestReport is the outcome of one webhook request: every transaction
// it carried shares it.
type RequestReport struct {
	// OrderNos are the transactions the request carried.
	OrderNos []string
	// Indexes are their positions in the slice given to Send.
	Indexes []int
	// Status is what became of them.
	Status TxStatus
	// StatusCode is the last status seen; 0 if none.
	StatusCode int
	// Attempts counts the attempts made; 0 when the request was never sent.
	Attempts int
	// RetryAfter is the wait the service asked for (Retry-After) that the
	// sender would not make because it exceeds RetryPolicy.MaxDelay; 0
	// otherwise.
	RetryAfter time.Duration
	// CallID names the request, as its attempts, log lines and errors do
	// ("" if never sent); RequestID is the service's ID of its last answer
	// (docs/assumptions.md A-request-id).
	CallID, RequestID string
	// Err is nil when accepted; otherwise what happened and, for
	// Unconfirmed and NotSent transactions, why.
	Err error
}

// SendError is Send's error when any transaction is not TxAccepted: the
// send is incomplete. Its message names the counts and the first problem;
// Report says what became of each transaction. It unwraps to the
// validation error and every request's error, so errors.Is(err,
// ErrUnauthorized) and errors.As(err, &*ValidationError) work.
type SendError struct {
	// Report is the report Send returned with this error.
	Report *SendReport
	// causes are the validation error and each failed request's error.
	causes []error
}

// Error says that the send is incomplete, with the count of each status
// and the first problem.
func (e *SendError) Error() string {
	r := e.Report
	var b strings.Builder
	fmt.Fprintf(&b, "paygate: send incomplete: %d of %d transactions accepted, %d rejected, %d unconfirmed, %d not sent, %d invalid (SendReport.Outcomes says which)",
		len(r.Accepted), r.total, len(r.Rejected), len(r.Unconfirmed), len(r.NotSent), len(r.Invalid))
	if len(e.causes) > 0 {
		b.WriteString("; first problem: ")
		b.WriteString(e.causes[0].Error())
	}
	return b.String()
}

// Unwrap returns the validation error and each failed request's error.
func (e *SendError) Unwrap() []error { return e.causes }

// sendError is the error of a Send that filed report: nil when every
// transaction was accepted.
func sendError(report *SendReport, causes []error) error {
	if len(report.Accepted) == report.total {
		return nil
	}
	return &SendError{Report: report, causes: causes}
}

// deadlineError is the cause of a Send's context when WithSendTimeout's
// deadline passes.
type deadlineError struct{ d time.Duration }

// Error names the deadline and the option that sets it.
func (e *deadlineError) Error() string {
	return fmt.Sprintf("paygate: the send's deadline passed (%v, WithSendTimeout)", e.d)
}

// Is makes the deadline match context.DeadlineExceeded.
func (e *deadlineError) Is(target error) bool { return target == context.DeadlineExceeded }
