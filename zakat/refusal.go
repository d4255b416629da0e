package zakat

import (
	"fmt"
	"strings"
)

// Refusal is the reason of a transaction the service refused by pointing
// at it (docs/assumptions.md A-webhook-refusals): its Error is one sentence
// naming the transaction by its index in the slice given to Send and its
// orderno, and the field and rule of the first problem; the service's
// answer (*paygate.APIError, raw body included) is its Cause.
type Refusal struct {
	// Index is the transaction's position in the slice given to Send.
	Index int
	// OrderNo is the transaction's orderno.
	OrderNo string
	// StatusCode is the refusal's HTTP status.
	StatusCode int
	// Problems are what the answer said of it: Field is the pointer made
	// relative to the transaction ("amount", "data/zakat_rate"), Rule the
	// service's words and Value its value, if it gave one.
	Problems []FieldError
	// Cause is the request's error, the service's answer.
	Cause error
}

// Error is one line: the transaction, the field and the rule; never the
// value nor the body.
func (r *Refusal) Error() string {
	return fmt.Sprintf("transaction %d (orderno %q) %s", r.Index, r.OrderNo, r.Reason())
}

// Reason is Error without the transaction: the status, the field and the
// rule, for a record already kept by orderno (the outbox's dead rows).
func (r *Refusal) Reason() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refused by the service (HTTP %d)", r.StatusCode)
	if len(r.Problems) > 0 {
		p := r.Problems[0]
		fmt.Fprintf(&b, ": field %s breaks the rule %q", p.Field, p.Rule)
		if n := len(r.Problems) - 1; n > 0 {
			fmt.Fprintf(&b, " (and %d more)", n)
		}
	}
	return b.String()
}

// Unwrap returns the service's answer.
func (r *Refusal) Unwrap() error { return r.Cause }
