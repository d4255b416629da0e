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
