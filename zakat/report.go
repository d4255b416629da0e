package zakat

// The report of a webhook send (paygate's WebhookSender.Send). It is filed
// request by request (each RequestReport holds the positions of its
// transactions in the slice given to Send); Outcomes derives the list by
// transaction from the requests and Invalid, so that nothing is held twice.

import (
	"errors"
	"fmt"
	"time"
)

// SendStatus is what became of one transaction of a Send.
type SendStatus uint8

// The statuses of a transaction. Only SendAccepted means stored; only
// SendRejected and SendInvalid mean that sending it again unchanged will not
// help. SendUnconfirmed and SendNotSent are safe to send again (SafeToResend),
// unchanged, with paygate's Resend: orderno is unique, so the service does
// not store a transaction twice, and Resend reads its refusal of a repeat as
// stored (docs/assumptions.md A-webhook-duplicates).
const (
	// SendAccepted: stored: in a request the service answered with 2xx, or,
	// when sent before (paygate's Resend, or an earlier attempt whose answer
	// was lost), refused as already stored (Outcome.AlreadyStored).
	SendAccepted SendStatus = iota
	// SendRejected: the service refused it and its answer proves it was
	// not stored: a 4xx (other than 401, 403, 409 and 429) pointing at
	// it for a rule of its own fields, or refusing it alone (or its whole
	// request, when the service seems to refuse everything), with no
	// earlier attempt or send whose outcome is unknown (docs/assumptions.md
	// A-webhook-refusals). Outcome.Err says why: a *Refusal when the
	// answer pointed at it, else the service's answer (*paygate.APIError).
	SendRejected
	// SendUnconfirmed: stored or not, nothing proves which (a lost answer, a
	// timeout, a 5xx, a redirect, a duplicate refusal of an orderno on its
	// first send, a refusal after an attempt whose outcome was unknown that
	// does not prove it was not stored). Outcome.Err says why.
	SendUnconfirmed
	// SendNotSent: no byte of it reached the service: the connection or its
	// TLS handshake failed, or the send stopped before its request (the
	// deadline of paygate.WithSendTimeout, the end of the context, an earlier 401,
	// 403, redirect or TLS failure). Outcome.Err says why.
	SendNotSent
	// SendInvalid: it breaks a rule of the webhook body and was not sent;
	// Outcome.Err is a *ValidationError with its problems.
	SendInvalid
)

// ErrHeldAtFirstSend is in the error of a SendUnconfirmed outcome whose
// orderno the service refused as already stored on its first send (not a
// Resend, no earlier attempt lost): another transaction may hold the
// orderno, or a send the caller did not report stored this one
// (docs/assumptions.md A-webhook-duplicates). Check with the service
// before sending it again; never send it under a new orderno.
var ErrHeldAtFirstSend = errors.New("the service refused the orderno as already stored on its first send")

// txStatusNames are the words SendStatus.String prints, by status.
var txStatusNames = [...]string{SendAccepted: "accepted", SendRejected: "rejected", SendUnconfirmed: "unconfirmed", SendNotSent: "not sent", SendInvalid: "invalid"}

// String names the status in words ("not sent").
func (s SendStatus) String() string {
	if int(s) < len(txStatusNames) {
		return txStatusNames[s]
	}
	return fmt.Sprintf("SendStatus(%d)", uint8(s))
}

// SafeToResend reports whether a transaction with this status may be sent
// again as it is (with paygate's Resend): unconfirmed or not sent.
func (s SendStatus) SafeToResend() bool { return s == SendUnconfirmed || s == SendNotSent }

// Outcome is what became of one transaction of a Send.
type Outcome struct {
	// Index is the transaction's position in the slice given to Send.
	Index int
	// OrderNo is the transaction's orderno.
	OrderNo string
	// Status is what became of it.
	Status SendStatus
	// Request is the position in SendReport.Requests of the request that
	// settled it (the last that carried it); -1 for SendInvalid.
	Request int
	// Err is nil for SendAccepted; otherwise the reason: the request's error
	// (RequestReport.Err), a *Refusal naming it, or a *ValidationError for
	// SendInvalid.
	Err error
	// AlreadyStored: SendAccepted because the service refused its orderno
	// as already stored after an earlier send of it whose outcome was unknown.
	AlreadyStored bool
}

// SendReport says what became of every transaction of a Send, so that
// nothing is silently lost. Send always returns one, error or not.
// Outcomes lists every transaction by its index with its status and
// reason; the lists below hold the same ordernos by status, and every
// transaction given to Send is in exactly one of them.
//
// The statuses follow what the service's answers prove, not what they
// suggest (docs/assumptions.md A-webhook-answers): once an attempt's
// outcome is unknown (a lost answer, a timeout, a 5xx), a later 4xx proves
// nothing stored only when it points at a transaction for a rule of its own
// fields, and a refusal of an orderno as already stored proves it stored
// (A-webhook-duplicates, A-webhook-refusals).
type SendReport struct {
	// Requests lists the requests in order, with the transactions each
	// carried.
	Requests []RequestReport
	// Accepted: SendAccepted, by orderno.
	Accepted []string
	// Rejected: SendRejected, by orderno. Sending them again unchanged will
	// not help.
	Rejected []string
	// Unconfirmed: SendUnconfirmed, by orderno. Safe to send again.
	Unconfirmed []string
	// NotSent: SendNotSent, by orderno. Safe to send again.
	NotSent []string
	// Invalid lists the transactions that failed local validation
	// (SendInvalid); they were not sent. The others were, or are NotSent.
	Invalid []InvalidTransaction
}

// Outcomes lists what became of every transaction given to Send, by its
// index in that slice: out[i] is the outcome of txs[i], decided by the
// last request that carried it. Each call builds a new slice.
func (r *SendReport) Outcomes() []Outcome {
	out := make([]Outcome, r.Total())
	for k, rr := range r.Requests {
		for j, i := range rr.Indexes {
			out[i] = Outcome{Index: i, OrderNo: rr.OrderNos[j], Status: rr.Status, Request: k, Err: rr.Err}
		}
		for _, o := range rr.Own {
			o.Request = k
			out[o.Index] = o
		}
	}
	for _, it := range r.Invalid {
		out[it.Index] = Outcome{Index: it.Index, OrderNo: it.OrderNo, Status: SendInvalid, Request: -1, Err: &ValidationError{Problems: it.Problems}}
	}
	return out
}

// Total counts the transactions given to Send, each once: those of every
// request that were not sent again (RequestReport.Resent), and the invalid
// ones.
func (r *SendReport) Total() int {
	n := len(r.Invalid)
	for _, rr := range r.Requests {
		n += len(rr.Indexes) - len(rr.Resent)
	}
	return n
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

// RequestReport is the outcome of one webhook request (a part of a
// refused request sent again is a request of its own): its transactions
// share Status and Err, except those with an outcome of their own (Own) and
// those sent again in a later request (Resent), whose outcome is that
// request's.
type RequestReport struct {
	// OrderNos are the transactions the request carried.
	OrderNos []string
	// Indexes are their positions in the slice given to Send.
	Indexes []int
	// Status is what became of them.
	Status SendStatus
	// Own are the outcomes of its transactions that differ from Status and
	// Err: one a refusal pointed at, an orderno found already stored.
	Own []Outcome
	// Resent are the positions in the slice given to Send (of Indexes) of
	// its transactions sent again in a later request, which decides them.
	Resent []int
	// StatusCode is the last status seen; 0 if none.
	StatusCode int
	// Attempts counts the attempts made; 0 when the request was never sent.
	Attempts int
	// RetryAfter is the wait the service asked for (Retry-After) that the
	// sender would not make because it exceeds paygate.RetryPolicy.MaxDelay; 0
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
