package paygate

import (
	"fmt"
	"io"
	"math"
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
	return validateStream(r, windowChunk, WebhookValidator{})
}

// validateStream is ValidateBatchReader with windows of about chunk bytes
// (tests use tiny ones, to put window ends everywhere) and the agency codes
// and value cap of rules.
func validateStream(r io.Reader, chunk int, rules WebhookValidator) (int, error) {
	src := &windowReader{r: r, chunk: chunk, keep: tokenKeep(rules.maxValueBytes())}
	p := &byteScanner{src: src, head: maxErrorValue + 1}
	var v ValidationError
	_, count := decodeBatch(p, &v, false, rules)
	p.end()
	if src.err != nil {
		return count, fmt.Errorf("paygate: reading the batch: %w", src.err)
	}
	if p.err != nil {
		v.Problems = append(v.Problems[:0], newFieldError("", ruleJSON+": "+p.err.Error(), ""))
		return 0, &v
	}
	return count, v.err()
}

// tokenKeep is how much of a token the stream keeps before a window may end
// inside it: more than the value cap, so that only a token too long to
// keep is cut, and at least minTokenKeep. It saturates, so that a cap of
// math.MaxInt (no cap) does not wrap to a keep of minTokenKeep, which cut
// valid values in two.
func tokenKeep(maxValue int) int {
	return max(min(maxValue, math.MaxInt-1)+1, minTokenKeep)
}

// longValueProblem reports, into v, a value or key longer than the cap max
// (a byteScanner's onLong).
func longValueProblem(v *ValidationError, max int) func(pointer string, key bool) {
	return func(pointer string, key bool) {
		if key {
			v.add(pointer, fmt.Sprintf(ruleKeyTooLong, max), "")
			return
		}
		v.add(pointer, fmt.Sprintf(ruleTooLong, max), "")
	}
}
