package signing

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// field is one key and its single value, as signed.
type field struct {
	key, value string
}

// collect puts into s.fields, sorted byte-wise by key, the fields of form
// that take part in the message (docs/protocol.md "Signature algorithm",
// steps 1-3): all but signature, keys with no value left out, and, when exp
// is not empty (outbound), exp with that value in place of any exp of form.
// A key with several values is an error naming it (the first such key in
// sorted order): which value was signed cannot be known
// (docs/assumptions.md A-multiple-values).
func (s *state) collect(form url.Values, exp string) error {
	s.fields = s.fields[:0]
	multi, several := "", false // the first key, in sorted order, with several values
	for k, v := range form {
		switch {
		case k == FieldSignature || exp != "" && k == FieldExp || len(v) == 0:
		case len(v) > 1:
			if !several || k < multi {
				multi, several = k, true
			}
		default:
			s.fields = append(s.fields, field{k, v[0]})
		}
	}
	if several {
		return fmt.Errorf("%w: %q has %d values", ErrMultipleValues, multi, len(form[multi]))
	}
	if exp != "" {
		s.fields = append(s.fields, field{FieldExp, exp})
	}
	sortFields(s.fields)
	return nil
}

// sortFields sorts fields byte-wise by key.
func sortFields(fields []field) {
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
}

// appendQuery appends `k=v&k=v...` for fields, encoded under e, to dst.
func appendQuery(dst []byte, fields []field, e Encoding) []byte {
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = AppendEscaped(dst, f.key, e)
		dst = append(dst, '=')
		dst = AppendEscaped(dst, f.value, e)
	}
	return dst
}
