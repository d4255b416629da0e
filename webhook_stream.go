package paygate

import (
	"fmt"
	"io"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// ValidateBatchReader is ValidateBatchJSON for a body read from r a window
// at a time: it reports exactly the same problems, in the same order, and
// returns the number of transactions read. Its memory is bounded whatever
// the bytes: about two 256 KiB windows, at most 8 MiB of ordernos (the
// rest spilled, sorted, to a temporary file removed before it returns),
// and the first 1,000 problems (docs/assumptions.md A-webhook-value-cap).
// An error reading r or the temporary file is returned as it is, not a
// *ValidationError: the batch was not wholly checked. It checks the
// document's agency codes; WebhookValidator.ValidateBatchReader others.
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
