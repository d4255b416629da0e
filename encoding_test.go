package paygate

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendEscapedEveryByte checks each encoding on all 256 byte values
// against Go's url.QueryEscape (the canonical form encoding) and the
// documented differences of the others, with a prefix already in dst and a
// buffer that must grow.
func TestAppendEscapedEveryByte(t *testing.T) {
	for enc := range queryEncoding(4) {
		want := func(s string) string { return referenceEscape(s, enc) }
		t.Run(enc.String(), func(t *testing.T) {
			for c := 0; c < 256; c++ {
				b := string([]byte{byte(c)})
				s := "a" + b + "Z" + b + b + "~* 9"
				got := appendEscaped([]byte("pre&"), s, enc)
				require.Equal(t, "pre&"+want(s), string(got), "byte %#02x", c)
			}
			long := strings.Repeat("\x00é{\"x\":1} ~*", 100)
			require.Equal(t, want(long), string(appendEscaped(make([]byte, 0, 8), long, enc)))
			require.Empty(t, appendEscaped(nil, "", enc))
		})
	}
}

// referenceEscape is s under enc by way of url.QueryEscape (the canonical
// form encoding) and the documented differences of the others.
func referenceEscape(s string, enc queryEncoding) string {
	q := url.QueryEscape(s)
	switch enc {
	case encRFC3986:
		return strings.ReplaceAll(q, "+", "%20") // a literal + is %2B
	case encFormPHP:
		return strings.ReplaceAll(q, "~", "%7E")
	case encFormHTML:
		return strings.NewReplacer("~", "%7E", "%2A", "*").Replace(q)
	}
	return q
}

// TestEscapeVectorEveryByte puts every byte at every place of a 16-byte
// block, one block then two and a tail, and requires appendEscaped (whose
// blocks go through escapeVector where the CPU allows) and
// appendEscapedWords (a byte at a time) to write what url.QueryEscape and
// the documented differences write.
func TestEscapeVectorEveryByte(t *testing.T) {
	for enc := range queryEncoding(4) {
		t.Run(enc.String(), func(t *testing.T) {
			for c := 0; c < 256; c++ {
				for pos := 0; pos < 16; pos++ {
					block := []byte("aZ9-._~* +%é\x00\xff{")
					block[pos] = byte(c)
					for _, s := range []string{string(block), string(block) + string(block[:pos]) + string(block) + "x"} {
						want := "pre&" + referenceEscape(s, enc)
						require.Equal(t, want, string(appendEscaped([]byte("pre&"), s, enc)), "byte %#02x at %d", c, pos)
						require.Equal(t, want, string(appendEscapedWords([]byte("pre&"), s, enc)), "byte %#02x at %d", c, pos)
					}
				}
			}
		})
	}
}

// FuzzAppendEscaped compares appendEscaped and appendEscapedWords with
// url.QueryEscape's reference on random strings under every encoding,
// appended to a buffer of random length (the vector path stores 16 bytes
// at a time past what it keeps).
func FuzzAppendEscaped(f *testing.F) {
	f.Add(`{"fpx_debit_auth_code":"00","fpx_buyer_name":"SITI NUR"}`, 3)
	f.Add(strings.Repeat("x", 40)+" ~*+%", 0)
	f.Add("\xff\x80 é林", 17)
	f.Fuzz(func(t *testing.T, s string, pre int) {
		prefix := strings.Repeat("p", pre&63)
		for enc := range queryEncoding(4) {
			want := prefix + referenceEscape(s, enc)
			require.Equal(t, want, string(appendEscaped([]byte(prefix), s, enc)), enc.String())
			require.Equal(t, want, string(appendEscapedWords([]byte(prefix), s, enc)), enc.String())
		}
	})
}
