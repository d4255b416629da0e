package signing

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// appendEscaped appends s to dst, encoded under e, as appendQuery escapes
// each key and value.
func appendEscaped(dst []byte, s string, e Encoding) []byte {
	n := len(dst)
	dst = slices.Grow(dst, escapedMax(len(s)))
	return dst[:escape(dst[:cap(dst)], n, s, &escapeWords[e])]
}

// referenceEscape is each encoding written the plain way, from
// url.QueryEscape (which keeps A-Z a-z 0-9 - . _ ~ and writes a space as
// +): RFC 3986 writes the space as %20, PHP writes ~ as %7E, WHATWG writes
// ~ as %7E and keeps *.
func referenceEscape(s string, e Encoding) string {
	q := url.QueryEscape(s)
	switch e {
	case RFC3986:
		return strings.ReplaceAll(q, "+", "%20")
	case FormPHP:
		return strings.ReplaceAll(q, "~", "%7E")
	case FormWHATWG:
		return strings.ReplaceAll(strings.ReplaceAll(q, "~", "%7E"), "%2A", "*")
	}
	return q
}

// Every byte, alone and in a run, and after bytes already in dst, is
// written as the reference writes it, under every encoding.
func TestAppendEscapedEveryByte(t *testing.T) {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	for e := range Encoding(len(encodings)) {
		for c := range 256 {
			s := string([]byte{byte(c)})
			require.Equal(t, referenceEscape(s, e), string(appendEscaped(nil, s, e)), "%s byte %#x", e, c)
		}
		got := appendEscaped([]byte("prefix="), all.String(), e)
		require.Equal(t, "prefix="+referenceEscape(all.String(), e), string(got), "%s", e)
	}
}

// Into an empty buffer, whose room Grow makes to a size class, a string of
// every length that needs the most room (every byte escaped) or the least
// is written whole: the last store of each byte stays inside the buffer.
func TestAppendEscapedEveryLengthFromEmpty(t *testing.T) {
	for e := range Encoding(len(encodings)) {
		for n := range 80 {
			for _, c := range []string{"%", "a", "a%"} {
				s := strings.Repeat(c, n)
				require.Equal(t, referenceEscape(s, e), string(appendEscaped(nil, s, e)), "%s %q×%d", e, c, n)
			}
		}
	}
}

// FuzzAppendEscaped: any string is written as the reference writes it.
func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"", "a b", "~*%+&=", "林美玲", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for e := range Encoding(len(encodings)) {
			require.Equal(t, referenceEscape(s, e), string(appendEscaped([]byte("x"), s, e))[1:], "%s", e)
		}
	})
}
