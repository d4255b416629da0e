//go:build !purego

package paygate

import (
	"slices"
	"strings"
)

// escapeVectors is what escapeFields (escape_amd64.s) needs to escape 16
// bytes at a time under one encoding with SSSE3, built from escapeWords so
// that both ways write the same bytes. Its layout is read by offset in the
// assembly.
type escapeVectors struct {
	// lutLo[c&15] & lutHi[c>>4] is non-zero when c is kept as it is: a
	// bitmap of the kept ASCII bytes, bit c>>4 of entry c&15.
	lutLo, lutHi [16]byte
	hex          [16]byte // "0123456789ABCDEF"
	nibble       [16]byte // 0x0f in every byte
	percent      [16]byte // '%' in every byte
	space        [16]byte // the byte substituted first in every byte: ' ' ('+' in rawVectors)
	spaceToPlus  [16]byte // ' '^'+' in every byte where it is substituted (form encodings, rawVectors), else 0
	formMask     uint64   // 0xffff under a form encoding (the '+' made of a space is kept), else 0
	_            uint64
	// shuffles[m] picks, from four bytes laid out as b % H L each, b for
	// a byte whose bit in m is clear and % H L for one whose bit is set,
	// at most 12 bytes; its last byte is how many (the byte it picks
	// lands past them).
	shuffles [16][16]byte
	words    *[256]uint32 // escapeWords of the encoding, for the end of a page
	// For rawVectors alone (raw is 1): the bytes that send a raw query
	// value to the exact way, and the tables that check its escapes.
	raw            uint64
	lowCtl, del    [16]byte  // 0x1f, 0x7f in every byte
	semi, hash     [16]byte  // ';', '#' in every byte
	hexUpper, kept [256]byte // an upper-case hex digit's value (else 0xff); 1 for a byte RFC 3986 keeps
}

// escapeVectorTables holds one escapeVectors per queryEncoding. The tables
// are read-only after package initialisation.
var escapeVectorTables = func() (t [4]escapeVectors) {
	for e := range t {
		v := &t[e]
		v.words = &escapeWords[e]
		for c := 0; c < 0x80; c++ {
			if escapeWords[e][c] == uint32(c)|1<<24 {
				v.lutLo[c&15] |= 1 << (c >> 4)
			}
		}
		for i := range 16 {
			if i < 8 {
				v.lutHi[i] = 1 << i
			}
			v.hex[i] = "0123456789ABCDEF"[i]
			v.nibble[i], v.percent[i], v.space[i] = 0x0f, '%', ' '
		}
		if escapeWords[e][' '] == '+'|1<<24 {
			v.formMask = 0xffff
			for i := range v.spaceToPlus {
				v.spaceToPlus[i] = ' ' ^ '+'
			}
		}
		for m := range v.shuffles {
			s := &v.shuffles[m]
			for i := range s {
				s[i] = 0x80 // zero: past the bytes kept
			}
			n := 0
			for b := range 4 {
				if m&(1<<b) == 0 {
					s[n] = byte(4 * b)
					n++
					continue
				}
				s[n], s[n+1], s[n+2] = byte(4*b+1), byte(4*b+2), byte(4*b+3)
				n += 3
			}
			s[15] = byte(n)
		}
	}
	return t
}()

// rawVectors escapes a raw query value as its RFC 3986 message writes it
// (rawQueryWords): as encRFC3986, but '%' is kept and '+' is made a space
// first, so written %20; escapeFields returns -1 for a value that needs the
// exact way. Read-only after package initialisation.
var rawVectors = func() (v escapeVectors) {
	v = escapeVectorTables[encRFC3986]
	v.lutLo['%'&15] |= 1 << ('%' >> 4)
	for i := range 16 {
		v.space[i], v.spaceToPlus[i] = '+', '+'^' '
		v.lowCtl[i], v.del[i], v.semi[i], v.hash[i] = 0x1f, 0x7f, ';', '#'
	}
	v.formMask, v.raw = 0, 1 // at the end of a page, the exact way
	for c := range 256 {
		v.hexUpper[c] = 0xff
		if d := strings.IndexByte("0123456789ABCDEF", byte(c)); d >= 0 {
			v.hexUpper[c] = byte(d)
		}
		if escapeWords[encRFC3986][c]>>24 == 1 {
			v.kept[c] = 1
		}
	}
	return v
}()

// rawQueryVectors is rawVectors with '&' and '=' kept too: a whole raw
// query whose values hold no '=' (see appendRawQueryVector). Read-only
// after package initialisation.
var rawQueryVectors = func() (v escapeVectors) {
	v = rawVectors
	v.lutLo['&'&15] |= 1 << ('&' >> 4)
	v.lutLo['='&15] |= 1 << ('=' >> 4)
	return v
}()

// haveSSSE3 reports whether the CPU runs escapeFields (CPUID leaf 1, ECX
// bit 9). Read-only after package initialisation.
var haveSSSE3 = cpuidECX1()&(1<<9) != 0

// cpuidECX1 returns ECX of CPUID leaf 1, the feature bits.
func cpuidECX1() uint32

// escapeFields writes fields as a query, or one value, escaped with the
// tables of one encoding (escape_amd64.s).
//
//go:noescape
func escapeFields(dst []byte, base int, fields []field, ends []int, t *escapeVectors, pairs bool, plain uint64) int

// appendFieldsVector appends `k=v&k=v...` for fields under e, as
// canonicaliser.appendQuery does, and sets ends[i] to where fields[i] ends
// in dst, when the CPU has SSSE3; ok is false, and nothing written, when it
// has not. The keys plain marks (bit i for fields[i], see plainMask) are
// copied.
func appendFieldsVector(dst []byte, fields []field, ends []int, plain uint32, e queryEncoding) (_ []byte, _ []int, ok bool) {
	if !haveSSSE3 {
		return dst, ends, false
	}
	if len(fields) == 0 {
		return dst, ends[:0], true
	}
	need := vectorSlack
	for _, f := range fields {
		need += 3*(len(f.key)+len(f.value)) + 2
	}
	dst = slices.Grow(dst, need)
	ends = slices.Grow(ends[:0], len(fields))[:len(fields)]
	n := escapeFields(dst[len(dst):cap(dst)], len(dst), fields, ends, &escapeVectorTables[e], true, uint64(plain))
	return dst[:len(dst)+n], ends, true
}

// appendEscapedVector appends s under e, as appendEscapedWords does, when
// the CPU has SSSE3; ok is false, and nothing written, when it has not.
func appendEscapedVector(dst []byte, s string, e queryEncoding) (_ []byte, ok bool) {
	return appendStringVector(dst, s, &escapeVectorTables[e])
}

// appendRawVector appends s, a raw query value, as appendRawEscaped does,
// when the CPU has SSSE3 and s has no byte or escape that needs its flags
// (a stop byte; an escape cut short, not in upper-case hex, or of a byte
// RFC 3986 keeps); ok is false, and nothing written, otherwise.
func appendRawVector(dst []byte, s string) (_ []byte, ok bool) {
	return appendStringVector(dst, s, &rawVectors)
}

// appendRawQueryVector appends query, a raw query of pairs whose keys
// are RFC 3986's unreserved bytes and whose values hold no '=', as
// appendRawEscaped would write each key and value, with '&' and '=' as
// they are; ok is false, and nothing written, as for appendRawVector.
func appendRawQueryVector(dst []byte, query string) (_ []byte, ok bool) {
	return appendStringVector(dst, query, &rawQueryVectors)
}

// appendStringVector appends s escaped with the tables t by escapeFields,
// when the CPU has SSSE3; ok is false, and nothing written, when it has
// not or escapeFields leaves s to the exact way.
func appendStringVector(dst []byte, s string, t *escapeVectors) (_ []byte, ok bool) {
	if !haveSSSE3 {
		return dst, false
	}
	dst = slices.Grow(dst, 3*len(s)+vectorSlack)
	f := [1]field{{value: s}}
	n := escapeFields(dst[len(dst):cap(dst)], 0, f[:], nil, t, false, 0)
	if n < 0 {
		return dst, false
	}
	return dst[:len(dst)+n], true
}

// queryMarks writes, for each whole 16-byte block of query, the bits of
// its '&' bytes, of its '=' bytes and of its bytes t does not keep, in
// marks at 0, stride and 2*stride (escape_amd64.s).
//
//go:noescape
func queryMarks(query string, marks []uint16, stride int, t *escapeVectors)

// queryMarksVector returns the marks of query (see splitMarks) into
// marks' memory, when the CPU has SSSE3; ok is false otherwise.
func queryMarksVector(marks []uint16, query string) (_ []uint16, ok bool) {
	if !haveSSSE3 {
		return marks, false
	}
	stride := (len(query) + 15) / 16
	marks = slices.Grow(marks[:0], 3*stride)[:3*stride]
	queryMarks(query, marks, stride, &escapeVectorTables[encRFC3986])
	return marks, true
}

// vectorSlack is the room escapeFields needs past the bytes it keeps: a
// block's four 16-byte stores reach up to 52 bytes past its start.
const vectorSlack = 64
