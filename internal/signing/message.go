package signing

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// field is one key and its single value, as signed, with the key's first
// eight bytes read big-endian (zero-padded), so that most comparisons of
// the sort are one integer comparison.
type field struct {
	key, value string
	prefix     uint64
}

// newField returns the field of key and value.
func newField(key, value string) field {
	var prefix uint64
	for i := range min(len(key), 8) {
		prefix |= uint64(key[i]) << (56 - 8*i)
	}
	return field{key, value, prefix}
}

// fieldSpace is room for the fields of a usual form, unsorted and sorted,
// that a caller declares on its stack and hands to collect: writing the
// fields there needs no write barrier, where writing them into pooled heap
// memory would while the garbage collector marks.
type fieldSpace [32]field

// collect returns, sorted byte-wise by key (the interface's "alphabetically",
// docs/assumptions.md A-sort-order), the fields of form that take part in
// the message (docs/protocol.md "Signature algorithm", steps 1-3):
// all but signature, keys with no value left out, and, when exp is not
// empty (outbound), exp with that value in place of any exp of form. It
// appends to dst and uses its spare capacity first (see fieldSpace). A key
// with several values is an error naming it (the first such key in sorted
// order): which value was signed cannot be known (docs/assumptions.md
// A-multiple-values).
func collect(dst []field, form url.Values, exp string) ([]field, error) {
	if exp == "" {
		if fields, ok := collectCallback(dst, form); ok {
			return fields, nil
		}
	}
	return collectAll(dst, form, exp)
}

// collectAll is collect for any form: every field read, then sorted.
func collectAll(dst []field, form url.Values, exp string) ([]field, error) {
	start := len(dst)
	multi, several := "", false // the first key, in sorted order, with several values
	for k, v := range form {
		switch {
		case k == FieldSignature || exp != "" && k == FieldExp || len(v) == 0:
		case len(v) > 1:
			if !several || k < multi {
				multi, several = k, true
			}
		default:
			dst = append(dst, newField(k, v[0]))
		}
	}
	if several {
		return nil, fmt.Errorf("%w: %q has %d values", ErrMultipleValues, multi, len(form[multi]))
	}
	if exp != "" {
		dst = append(dst, newField(FieldExp, exp))
	}
	sorted := sortFields(dst, dst[start:])
	return sorted[len(dst):], nil
}

// callbackFields are the fields of a callback but signature, as the
// protocol lists them (docs/protocol.md A2), sorted byte-wise.
var callbackFields = [...]string{
	"addCharge", "agency", "amount", "extraData", "fpx", "fpxTxnId", "fpxTxnTime", "orderNo", "refNo", "status",
}

// collectCallback is collect for a form with no field but the protocol's
// callback fields, each with one value: they are looked up in their sorted
// order, with no sort. It reports false, having appended nothing, for any
// other form, which collect then reads in full.
func collectCallback(dst []field, form url.Values) ([]field, bool) {
	if len(form) > len(callbackFields)+1 {
		return dst, false
	}
	start, seen := len(dst), 0
	if _, ok := form[FieldSignature]; ok {
		seen++
	}
	for _, k := range callbackFields {
		v, ok := form[k]
		if !ok {
			continue
		}
		if len(v) != 1 {
			return dst[:start], false
		}
		dst = append(dst, field{key: k, value: v[0]})
		seen++
	}
	if seen != len(form) {
		return dst[:start], false
	}
	return dst[start:], true
}

// rankLimit is the most fields sortFields places by rank.
const rankLimit = 32

// sortFields appends fields to dst sorted byte-wise by key; no two keys
// are equal (they come from a map). A usual form is placed by rank (see
// placeByRank); a long one (a hostile form may hold thousands of fields),
// or one with keys alike in their first eight bytes, is sorted with
// slices.SortFunc.
func sortFields(dst, fields []field) []field {
	n := len(dst)
	dst = append(dst, fields...)
	if len(fields) > rankLimit || !placeByRank(dst[n:], fields) {
		copy(dst[n:], fields)
		slices.SortFunc(dst[n:], func(a, b field) int { return strings.Compare(a.key, b.key) })
	}
	return dst
}

// placeByRank writes each field to out at its rank, the number of prefixes
// below its own, and reports whether the prefixes were all distinct (if
// not, out is left partly written). The rank is counted without a branch
// on the keys: the map hands the fields over in a new random order each
// time, so a sort's comparisons would be mispredicted half the time.
func placeByRank(out, fields []field) bool {
	for _, f := range fields {
		rank, same := 0, 0
		for j := range fields {
			if fields[j].prefix < f.prefix {
				rank++
			}
			if fields[j].prefix == f.prefix {
				same++
			}
		}
		if same != 1 {
			return false
		}
		out[rank] = f
	}
	return true
}

// appendQuery appends `k=v&k=v...` for fields, encoded under e, to dst.
// It makes room for the whole query once.
func appendQuery(dst []byte, fields []field, e Encoding) []byte {
	size := 0
	for _, f := range fields {
		size += escapedMax(len(f.key)+len(f.value)) + 2
	}
	n := len(dst)
	dst = slices.Grow(dst, size)
	b, t := dst[:cap(dst)], &escapeWords[e]
	for i, f := range fields {
		if i > 0 {
			b[n] = '&'
			n++
		}
		n = escape(b, n, f.key, t)
		b[n] = '='
		n = escape(b, n+1, f.value, t)
	}
	return dst[:n]
}
