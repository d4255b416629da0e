package paygate

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The two field names the signing algorithm itself adds.
const (
	fieldSignature = "signature"
	fieldExp       = "exp"
)

// canonicaliser puts a field set in signing order (docs/protocol.md
// "Signature algorithm", steps 1-4): it collects the fields that take part,
// sorts them and writes them as a query under an encoding. A signState
// holds one; it keeps the field sets it saw last (see collect).
type canonicaliser struct {
	fields []field
	shapes [maxShapes]shape // the field sets seen last (see collect)
	next   int              // the entry of shapes to replace next
	// plain marks the keys of fields (bit i for fields[i]) that every
	// encoding writes unchanged, so appendQuery copies them.
	plain uint32
	// ends[i] is where fields[i] ends in the query appendQuery wrote last.
	ends []int
}

// shape is the sorted keys of a field set, copied into one string the
// canonicaliser owns, so that a remembered key never holds on to the caller's
// memory (a key parsed from a request body is a substring of the whole
// body).
type shape struct {
	keys   []string
	plain  uint32 // plainMask of the keys
	hasExp bool   // one of the keys is exp
}

// Limits on the field sets a canonicaliser remembers (see collect): a merchant
// signs orders, and perhaps QR or report requests, and verifies callbacks,
// all with one Key; each of these field sets has about ten short keys.
// maxShapeFields fits the bit masks.
const (
	maxShapes      = 4
	maxShapeFields = 16
	maxShapeBytes  = 256
)

// collect puts into s.fields, sorted byte-wise by key, the fields of form
// that take part in the message (docs/protocol.md "Signature algorithm", steps 1-3): all but
// signature, keys with no value left out, and exp (with the value exp) when
// exp is not empty (outbound). A key with several values is an error naming
// it (the first in sorted order, when there are more). signed tells that
// form holds a signature field, which the caller has read: the shapes then
// need no lookup of it.
//
// A merchant's requests and the gateway's callbacks repeat a few field sets,
// so each canonicaliser remembers the sorted keys of the last few sets it
// collected, their shapes. When form has one of those shapes, the fields are
// read in order with one lookup a key, which costs less than ranging over
// the map and sorting. A shape is used only when it provably matches: every
// remembered key holds one value, and form has no other key than those,
// signature, and (outbound) exp, which its length shows. Otherwise the
// general path runs and remembers the new shape.
func (s *canonicaliser) collect(form url.Values, exp string, signed bool) error {
	for i := range s.shapes {
		if s.collectShaped(&s.shapes[i], form, exp, signed) {
			s.plain = s.shapes[i].plain
			return nil
		}
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
		s.fields = append(s.fields, field{key: k, value: v[0]})
	}
	if multiN > 0 {
		return fmt.Errorf("%w: %q has %d values", ErrMultipleValues, multi, multiN)
	}
	if exp != "" {
		s.fields = append(s.fields, field{key: fieldExp, value: exp})
	}
	sortFields(s.fields)
	s.plain = plainMask(s.fields)
	s.rememberShape()
	return nil
}

// collectShaped fills s.fields from form in the order of sh, and reports
// whether form has exactly that shape.
func (s *canonicaliser) collectShaped(sh *shape, form url.Values, exp string, signed bool) bool {
	outbound := exp != ""
	fromForm := len(sh.keys) // the keys of sh that form must hold
	others := 1              // and the keys it may hold besides: signature
	if outbound {
		if !sh.hasExp {
			return false
		}
		fromForm-- // exp comes from the signer,
		others++   // and form may hold an old one
	}
	if len(sh.keys) == 0 || len(form) < fromForm || len(form) > fromForm+others {
		return false
	}
	s.fields = s.fields[:0]
	for _, k := range sh.keys {
		if outbound && k == fieldExp {
			s.fields = append(s.fields, field{key: k, value: exp})
			continue
		}
		v := form[k]
		if len(v) != 1 {
			return false
		}
		s.fields = append(s.fields, field{key: k, value: v[0]})
	}
	if len(form) == fromForm {
		return true
	}
	return len(form) == fromForm+othersIn(form, signed, outbound)
}

// othersIn counts the keys form holds besides a shape's: signature (held
// when signed, without a lookup) and, outbound, exp.
func othersIn(form url.Values, signed, outbound bool) int {
	n := 0
	if signed || has(form, fieldSignature) {
		n++
	}
	if outbound && has(form, fieldExp) {
		n++
	}
	return n
}

// has reports whether form holds key.
func has(form url.Values, key string) bool {
	_, ok := form[key]
	return ok
}

// rememberShape records the keys of s.fields as a shape, in place of the one
// remembered longest ago, unless they already are one or the set is empty or
// larger than any the gateway uses.
func (s *canonicaliser) rememberShape() {
	size := 0
	for _, f := range s.fields {
		size += len(f.key)
	}
	if len(s.fields) == 0 || len(s.fields) > maxShapeFields || size > maxShapeBytes {
		return
	}
	for i := range s.shapes {
		if slices.EqualFunc(s.shapes[i].keys, s.fields, func(k string, f field) bool { return k == f.key }) {
			return
		}
	}
	sh := &s.shapes[s.next]
	s.next = (s.next + 1) % maxShapes
	var b strings.Builder
	b.Grow(size)
	for _, f := range s.fields {
		b.WriteString(f.key)
	}
	all := b.String()
	sh.keys, sh.plain, sh.hasExp = sh.keys[:0], s.plain, false
	for _, f := range s.fields {
		sh.keys = append(sh.keys, all[:len(f.key)])
		all = all[len(f.key):]
		sh.hasExp = sh.hasExp || f.key == fieldExp
	}
}

// plainMask marks the fields (bit i for fs[i], the first 32) whose key
// every encoding writes unchanged: A-Z a-z 0-9 - . _ only.
func plainMask(fs []field) uint32 {
	var m uint32
	for i, f := range fs[:min(len(fs), 32)] {
		if isPlain(f.key) {
			m |= 1 << i
		}
	}
	return m
}

// isPlain reports whether every encoding writes k unchanged.
func isPlain(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// appendQuery appends `k=v&k=v...` for s.fields under enc, and notes in
// s.ends where each field ends in dst. Keys that s.plain marks are copied
// as they are.
func (s *canonicaliser) appendQuery(dst []byte, enc queryEncoding) []byte {
	out, ends, ok := appendFieldsVector(dst, s.fields, s.ends, s.plain, enc)
	if s.ends = ends; ok {
		return out
	}
	s.ends = s.ends[:0]
	for i, f := range s.fields {
		if i > 0 {
			dst = append(dst, '&')
		}
		if i < 32 && s.plain>>i&1 != 0 {
			dst = append(dst, f.key...)
		} else {
			dst = appendEscaped(dst, f.key, enc)
		}
		dst = append(dst, '=')
		dst = appendEscaped(dst, f.value, enc)
		s.ends = append(s.ends, len(dst))
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
