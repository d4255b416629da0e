package paygate

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast path takes the URLs merchants sign, and leaves to url.Parse and
// url.ParseQuery every one it does not read exactly as they do (whatever
// way a URL goes, FuzzSignReference checks the result against the
// reference implementation).
func TestSignURLFastPath(t *testing.T) {
	order := benchOrder()
	order.Set("name", "Siti Nur Aisyah 林美玲")
	order.Set("description", "Zakat fitrah 2026, paid online")
	for _, tt := range []struct {
		raw  string
		fast bool
	}{
		{"https://gw.example.my/v2/pay?" + order.Encode(), true},
		{"https://gw.example.my:8443/a/b~c?b=2&a=1&exp=9&signature=x", true},
		{"https://gw.example.my", true},
		{"https://gw.example.my?x=%e6%9e+", true},
		{"HTTPS://gw.example.my/", false},      // url.Parse lower-cases the scheme
		{"https://user@gw.example.my/", false}, // refused by the general way
		{"https://gw.example.my/a%20b", false}, // an escaped path
		{"https://gw.example.my/p#f", false},
		{"https://[::1]/p", false},
		{"https://gw.example.my/p?a=1&a=2", false}, // several values: an error
		{"https://gw.example.my/p?a=%zz", false},
		{"https://gw.example.my/p?a;b=1", false},
		{"https://gw.example.my/p?%61=1", false},
		{"https://gw.example.my/p?a=b=c", false},
	} {
		var s signState
		origin, _, query, ok := simpleURL(tt.raw)
		require.Equal(t, tt.fast, ok && s.scanQuery(query), tt.raw)
		if tt.fast {
			u, err := url.Parse(tt.raw)
			require.NoError(t, err)
			require.Equal(t, u.Scheme+"://"+u.Host, origin)
		}
	}
}
