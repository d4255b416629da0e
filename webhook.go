package paygate

// The bank's side of the SDK: a WebhookSender posts zakat transactions
// (package zakat: the records, their validator and the send's report) to
// the bank webhook, docs/protocol.md endpoint 7.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/paygate-go/paygate/zakat"
)

// SendError is Send's error when any transaction is not
// zakat.SendAccepted: the send is incomplete. Its message names the counts
// and the first problem; Report says what became of each transaction. It
// unwraps to the validation error and every request's error, so
// errors.Is(err, ErrUnauthorized) and errors.As(err, &*zakat.ValidationError)
// work.
type SendError struct {
	// Report is the report Send returned with this error.
	Report *zakat.SendReport
	// causes are the validation error and each failed request's error.
	causes []error
}

// Error says on one line that the send is incomplete, with the count of
// each status and the first problem (its line breaks as spaces).
func (e *SendError) Error() string {
	r := e.Report
	var b strings.Builder
	fmt.Fprintf(&b, "paygate: send incomplete: %d of %d transactions accepted, %d rejected, %d unconfirmed, %d not sent, %d invalid (SendReport.Outcomes says which)",
		len(r.Accepted), r.Total(), len(r.Rejected), len(r.Unconfirmed), len(r.NotSent), len(r.Invalid))
	if len(e.causes) > 0 {
		b.WriteString("; first problem: ")
		b.WriteString(e.causes[0].Error())
	}
	return oneLineText(b.String())
}

// oneLineText is s with every line break (CR, LF, VT, FF, NEL, U+2028,
// U+2029) as a space, so that an error is one log line whatever its causes
// hold.
func oneLineText(s string) string {
	return strings.Map(func(c rune) rune {
		switch c {
		case '\r', '\n', '\v', '\f', '\u0085', '\u2028', '\u2029':
			return ' '
		}
		return c
	}, s)
}

// Unwrap returns the validation error and each failed request's error.
func (e *SendError) Unwrap() []error { return e.causes }

// sendError is the error of a Send that filed report: nil when every
// transaction was accepted.
func sendError(report *zakat.SendReport, causes []error) error {
	if len(report.Accepted) == report.Total() {
		return nil
	}
	return &SendError{Report: report, causes: causes}
}

// fileRequest records a request in report and puts the ordernos it
// settles in the list of their status: its own outcomes' by theirs, the
// others' but those sent again by the request's.
func fileRequest(report *zakat.SendReport, rr zakat.RequestReport) {
	lists := [...]*[]string{zakat.SendAccepted: &report.Accepted, zakat.SendRejected: &report.Rejected,
		zakat.SendUnconfirmed: &report.Unconfirmed, zakat.SendNotSent: &report.NotSent}
	settled := make(map[int]bool, len(rr.Own)+len(rr.Resent))
	for _, i := range rr.Resent {
		settled[i] = true
	}
	for _, o := range rr.Own {
		settled[o.Index] = true
		*lists[o.Status] = append(*lists[o.Status], o.OrderNo)
	}
	for j, i := range rr.Indexes {
		if !settled[i] {
			*lists[rr.Status] = append(*lists[rr.Status], rr.OrderNos[j])
		}
	}
	report.Requests = append(report.Requests, rr)
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
