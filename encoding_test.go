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
	tests := []struct {
		enc  queryEncoding
		want func(string) string
	}{
		{encFormGo, url.QueryEscape},
		{encRFC3986, func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }},
		{encFormPHP, func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "~", "%7E") }},
		{encFormHTML, func(s string) string {
			return strings.NewReplacer("~", "%7E", "%2A", "*").Replace(url.QueryEscape(s))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.enc.String(), func(t *testing.T) {
			for c := 0; c < 256; c++ {
				b := string([]byte{byte(c)})
				s := "a" + b + "Z" + b + b + "~* 9"
				got := appendEscaped([]byte("pre&"), s, tt.enc)
				require.Equal(t, "pre&"+tt.want(s), string(got), "byte %#02x", c)
			}
			long := strings.Repeat("\x00é{\"x\":1} ~*", 100)
			require.Equal(t, tt.want(long), string(appendEscaped(make([]byte, 0, 8), long, tt.enc)))
			require.Empty(t, appendEscaped(nil, "", tt.enc))
		})
	}
}
