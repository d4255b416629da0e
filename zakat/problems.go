package zakat

import (
	"github.com/paygate-go/paygate/internal/email"
	"github.com/paygate-go/paygate/internal/fielderr"
)

// FieldError is one problem with one field of a webhook body: its JSON
// pointer (/transactions/3/amount), the rule it breaks, and the offending
// value (truncated). Its shape and text are those of paygate.FieldError.
type FieldError struct {
	// Field is a JSON pointer; "" for the whole body.
	Field string
	// Rule is the rule the field breaks, in words.
	Rule string
	// Value is the offending value, cut at 64 bytes; "" when absent.
	Value string
}

// Error formats the problem as `field: rule (value "v")`.
func (e FieldError) Error() string { return fielderr.Text(e.Field, e.Rule, e.Value) }

// maxErrorValue caps how much of an offending value an error repeats.
const maxErrorValue = fielderr.MaxValue

// newFieldError builds a FieldError, truncating the value to maxErrorValue bytes.
func newFieldError(field, rule, value string) FieldError {
	return FieldError{Field: field, Rule: rule, Value: fielderr.Clip(value)}
}

// ValidationError lists every problem found in one webhook body or slice
// of transactions, so that a caller can fix them all at once
// (docs/protocol.md "Errors"). Retrieve it with errors.As.
type ValidationError struct {
	// Problems lists every problem found, in input order.
	Problems []FieldError
	// limit, when > 0, is the most problems add records; it counts the
	// others in dropped (ValidateBatchJSON, ValidateBatchReader).
	limit, dropped int
}

// Error joins the problems, one per line after a count.
func (e *ValidationError) Error() string { return fielderr.List(e.Problems) }

// add records one problem.
func (e *ValidationError) add(field, rule, value string) {
	if e.limit > 0 && len(e.Problems) >= e.limit {
		e.dropped++
		return
	}
	e.Problems = append(e.Problems, newFieldError(field, rule, value))
}

// err returns e as an error, or nil when no problem was recorded.
func (e *ValidationError) err() error {
	if len(e.Problems) == 0 {
		return nil
	}
	return e
}

// The rules any field of a webhook body can break: presence, JSON type,
// JSON syntax (docs/protocol.md "Errors") and text encoding (ruleUTF8:
// docs/assumptions.md A-webhook-encoding). FieldError.Rule holds one of these
// texts; the formats take Validator.WithMaxValueBytes's cap or counts.
const (
	ruleRequired     = "required"
	ruleNotEmpty     = "must not be empty"
	ruleString       = "must be a string"
	ruleNumber       = "must be a number"
	ruleObject       = "must be an object"
	ruleArray        = "must be an array"
	ruleJSON         = "must be valid JSON"
	ruleDuplicateKey = "must not repeat a key"
	ruleTooLong      = "must be at most %d bytes of JSON text (Validator.WithMaxValueBytes)"
	ruleMoreProblems = "%d more problems, not listed: only the first %d are"
	ruleKeyTooLong   = "must have no key longer than %d bytes of JSON text (Validator.WithMaxValueBytes)"
	ruleUTF8         = `must be valid UTF-8: no invalid byte and no \u escape of an unpaired surrogate (either would read as U+FFFD)`
	ruleEmail        = email.Rule
)

// validEmail is the SDK's one e-mail rule (internal/email,
// docs/assumptions.md A-email), for the B2 and B3 `email` fields.
func validEmail(s string) bool { return email.Valid(s) }
