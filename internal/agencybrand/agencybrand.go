// Package agencybrand finds, among a webhook batch's problems, the agency
// codes of the other brand (docs/assumptions.md A-webhook-brand): a batch
// written with the document's codes for the real service, or the reverse,
// is one mistake, told once with the switch that fixes it rather than
// once per transaction. The sender (paygate) and the CLI share it.
package agencybrand

import (
	"slices"
	"strconv"
	"strings"

	"github.com/paygate-go/paygate/zakat"
)

// Mismatch is the agency problems of a batch whose codes belong to a
// known brand the validator does not accept.
type Mismatch struct {
	// Count is how many problems (one per transaction) it covers.
	Count int
	// Found are the codes found, each once, in order of appearance.
	Found []zakat.Agency
	// Want are the codes in force.
	Want []zakat.Agency
	// Rest are the problems it does not cover, in order.
	Rest []zakat.FieldError
}

// Find returns the problems that give a transaction's agency a code of
// the document's (zakat.Agencies) or the real service's
// (zakat.ADBAgencies) set that v does not accept; ok is false when there
// is none.
func Find(v zakat.Validator, problems []zakat.FieldError) (m Mismatch, ok bool) {
	known := append(zakat.Agencies(), zakat.ADBAgencies()...)
	for _, p := range problems {
		code := zakat.Agency(p.Value)
		if strings.HasSuffix(p.Field, "/agency") && slices.Contains(known, code) && !v.Accepts(code) {
			m.Count++
			if !slices.Contains(m.Found, code) {
				m.Found = append(m.Found, code)
			}
			continue
		}
		m.Rest = append(m.Rest, p)
	}
	m.Want = v.Agencies()
	return m, m.Count > 0
}

// Sentence says it in one line, naming fix, the switch that sets the
// codes where it is told ("paygate.WithADBBrand", "-brand ADB").
func (m Mismatch) Sentence(fix string) string {
	whose := "the real service's"
	if slices.Contains(zakat.Agencies(), m.Found[0]) {
		whose = "the document's placeholder"
	}
	return strconv.Itoa(m.Count) + " transactions carry " + whose + " agency codes (" + join(m.Found) + ") but the codes in force are " +
		join(m.Want) + ": the brand is one switch, " + fix
}

// join writes codes as "A, B".
func join(codes []zakat.Agency) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
