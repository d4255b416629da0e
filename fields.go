package paygate

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

// Limits on the field sets whose shape a signState remembers (see collect):
// the gateway's have about ten short keys. maxShapeFields fits signState.plain.
const (
	maxShapeFields = 16
	maxShapeBytes  = 256
)

// collect puts into s.fields, sorted byte-wise by key, the fields of form
// that take part in the message (spec, Authentication steps 1-3): all but
// signature, keys with no value left out, and exp (with the value exp) when
// exp is not empty (outbound). A key with several values is an error naming
// it (the first in sorted order, when there are more).
//
// A merchant's requests and the gateway's callbacks repeat a few field sets,
// so each signState remembers the sorted keys of the last set it collected,
// its shape. When form has that shape, the fields are read in order with one
// lookup a key, which costs less than ranging over the map and sorting. The
// shape is used only when it provably matches: every remembered key holds
// one value, and form has no other key than those, signature, and (outbound)
// exp, which its length shows. Otherwise the general path runs.
func (s *signState) collect(form url.Values, exp string) error {
	if s.collectShaped(form, exp) {
		return nil
	}
	s.fields = s.fields[:0]
	multi, multiN := "", 0 // the first key, in sorted order, with several values
	for k, v := range form {
		if k == fieldSignature || exp != "" && k == fieldExp || len(v) == 0 {
			continue
		}
		if len(v) > 1 {
			if multiN == 0 || k < multi {
				multi, multiN = k, len(v)
			}
			continue
		}
		s.fields = append(s.fields, field{k, v[0]})
	}
	if multiN > 0 {
		return fmt.Errorf("%w: %q has %d values", ErrMultipleValues, multi, multiN)
	}
	if exp != "" {
		s.fields = append(s.fields, field{fieldExp, exp})
	}
	sortFields(s.fields)
	s.rememberShape()
	return nil
}

// collectShaped fills s.fields from form in the order of s.shape, and
// reports whether form has exactly that shape.
func (s *signState) collectShaped(form url.Values, exp string) bool {
	if len(s.shape) == 0 {
		return false
	}
	s.fields = s.fields[:0]
	fromForm, sawExp := 0, false
	for _, k := range s.shape {
		if exp != "" && k == fieldExp {
			s.fields = append(s.fields, field{k, exp})
			sawExp = true
			continue
		}
		v := form[k]
		if len(v) != 1 {
			return false
		}
		s.fields = append(s.fields, field{k, v[0]})
		fromForm++
	}
	if exp != "" && !sawExp {
		return false
	}
	if len(form) == fromForm {
		return true
	}
	// The only other keys allowed are the two that never take part as they
	// are: signature, and (outbound) exp, which the signer replaces.
	if _, ok := form[fieldSignature]; ok {
		fromForm++
	}
	if _, ok := form[fieldExp]; ok && exp != "" {
		fromForm++
	}
	return len(form) == fromForm
}

// rememberShape records the keys of s.fields as s.shape, unless they are
// already its shape or the set is larger than any the gateway uses. The keys
// are copied into one string that the state owns, so that a remembered key
// never holds on to the caller's memory (a key parsed from a request body is
// a substring of the whole body).
func (s *signState) rememberShape() {
	if len(s.fields) == len(s.shape) {
		same := true
		for i, f := range s.fields {
			if f.key != s.shape[i] {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	s.shape, s.plain = s.shape[:0], 0
	size := 0
	for _, f := range s.fields {
		size += len(f.key)
	}
	if len(s.fields) > maxShapeFields || size > maxShapeBytes {
		return
	}
	var b strings.Builder
	b.Grow(size)
	for _, f := range s.fields {
		b.WriteString(f.key)
	}
	all := b.String()
	for i, f := range s.fields {
		s.shape = append(s.shape, all[:len(f.key)])
		all = all[len(f.key):]
		if isPlain(f.key) {
			s.plain |= 1 << i
		}
	}
}

// isPlain reports whether every encoding writes k unchanged: A-Z a-z 0-9
// - . _ only.
func isPlain(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// appendQuery appends `k=v&k=v...` for s.fields under enc. Keys that the
// shape marks plain are copied as they are: after collect, s.fields has the
// keys of s.shape in order, or s.shape is empty and nothing is marked.
func (s *signState) appendQuery(dst []byte, enc queryEncoding) []byte {
	for i, f := range s.fields {
		if i > 0 {
			dst = append(dst, '&')
		}
		if s.plain>>i&1 != 0 {
			dst = append(dst, f.key...)
		} else {
			dst = appendEscaped(dst, f.key, enc)
		}
		dst = append(dst, '=')
		dst = appendEscaped(dst, f.value, enc)
	}
	return dst
}

// sortFields sorts fields byte-wise by key. The gateway's field sets are
// small (about ten), where an insertion sort with a direct comparison beats a
// general sort; a larger set (a hostile callback, say) takes the general one.
func sortFields(fs []field) {
	if len(fs) > 16 {
		slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && keyLess(fs[j].key, fs[j-1].key); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// keyLess is a < b, with the first bytes compared inline: they differ for
// most pairs of the gateway's keys, which spares a call to the runtime's
// string comparison.
func keyLess(a, b string) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < b
}
