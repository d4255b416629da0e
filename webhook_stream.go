package paygate

import (
	"fmt"
	"io"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// ValidateBatchReader is ValidateBatchJSON for a body read from r, a window
// at a time: it keeps in memory about two windows of the input (256 KiB
// each, plus the value cap), at most about 8 MiB of the ordernos seen (for
// the rule that they are unique) and the problems found, never the
// transactions, so a 1 GB batch of 2,000,000 transactions is checked in a
// few tens of megabytes. Past 8 MiB of ordernos (about 150,000) it writes
// them, sorted, to a temporary file (os.CreateTemp in os.TempDir), which it
// removes before it returns, and checks them once the body is read: every
// repeated orderno is found, exactly, whatever the number of transactions,
// and one found at the end is listed after the problems found while
// reading, in index order. A value longer than the cap
// (DefaultMaxValueBytes; WebhookValidator.WithMaxValueBytes) is a problem
// at its JSON pointer and is read through without being kept, and nesting
// is capped (docs/assumptions.md A-webhook-value-cap), so a 300 MB string
// or 300 MB of nested arrays costs no more than a valid batch. The problems
// listed stop at 1,000 (one more counts the rest), for ValidateBatchJSON
// too, so memory stays bounded whatever the bytes. It reports exactly the
// problems ValidateBatchJSON reports for the same bytes, in the same order
// and the same *ValidationError, and returns the number of transactions
// read. An error reading r, or writing or reading the temporary file, is
// returned as it is (not a *ValidationError): the batch was not wholly
// checked. It checks the document's agency codes;
// WebhookValidator.ValidateBatchReader checks others.
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
