package paygate

import (
	"fmt"
	"io"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// ValidateBatchReader is ValidateBatchJSON for a body read from r, a window
// at a time: it keeps in memory about two windows of the input (256 KiB
// each, plus the value cap), the ordernos seen (for the rule that they are
// unique) and the problems found, never the transactions, so a 500 MB file
// is checked in a few tens of megabytes. A value longer than the cap
// (DefaultMaxValueBytes; WebhookValidator.WithMaxValueBytes) is a problem
// at its JSON pointer and is read through without being kept, and nesting
// is capped (docs/assumptions.md A-webhook-value-cap), so a 300 MB string
// or 300 MB of nested arrays costs no more than a valid batch. The problems
// listed stop at 1,000 (one more counts the rest) and the ordernos checked
// for uniqueness at 1,048,576 (past them an orderno is a problem), for
// ValidateBatchJSON too, so memory stays bounded whatever the bytes. It reports
// exactly the problems ValidateBatchJSON reports for the same bytes, in the
// same *ValidationError, and returns the number of transactions read. An
// error reading r is returned as it is (not a *ValidationError). It checks
// the document's agency codes; WebhookValidator.ValidateBatchReader checks
// others.
func ValidateBatchReader(r io.Reader) (int, error) {
	return validateStream(r, jsonscan.Chunk, WebhookValidator{})
}

// validateStream is ValidateBatchReader with windows of about chunk bytes
// (tests use tiny ones, to put window ends everywhere) and the agency codes
// and value cap of rules.
func validateStream(r io.Reader, chunk int, rules WebhookValidator) (int, error) {
	p := jsonscan.NewStream(r, chunk)
	var v ValidationError
	_, count, err := decodeBatch(p, &v, nil, rules)
	p.End()
	if err := p.ReadErr(); err != nil {
		return count, fmt.Errorf("paygate: reading the batch: %w", err)
	}
	if err != nil {
		return count, err
	}
	if err := p.Err(); err != nil {
		v.Problems = append(v.Problems[:0], newFieldError("", ruleJSON+": "+err.Error(), ""))
		return 0, &v
	}
	return count, v.err()
}

// longValueProblem reports, into v, a value or key longer than the cap max
// (a jsonscan.Limits.OnLong).
func longValueProblem(v *ValidationError, max int) func(pointer string, key bool) {
	return func(pointer string, key bool) {
		if key {
			v.add(pointer, fmt.Sprintf(ruleKeyTooLong, max), "")
			return
		}
		v.add(pointer, fmt.Sprintf(ruleTooLong, max), "")
	}
}
