package callid

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewIsSixteenHexAndFresh(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := New()
		require.Regexp(t, `^[0-9a-f]{16}$`, id)
		require.False(t, seen[id], "repeated ID %s", id)
		seen[id] = true
	}
}

func TestFromHeader(t *testing.T) {
	long := strings.Repeat("a", MaxServer+10)
	for _, tc := range []struct {
		name   string
		header http.Header
		want   string
	}{
		{"none", http.Header{}, ""},
		{"x-request-id", http.Header{"X-Request-Id": {"req-1"}}, "req-1"},
		{"request-id", http.Header{"Request-Id": {"req-2"}}, "req-2"},
		{"x- preferred", http.Header{"X-Request-Id": {"a"}, "Request-Id": {"b"}}, "a"},
		{"empty falls through", http.Header{"X-Request-Id": {""}, "Request-Id": {"b"}}, "b"},
		{"cut", http.Header{"X-Request-Id": {long}}, long[:MaxServer]},
		{"control byte refused", http.Header{"X-Request-Id": {"a\x1bb"}}, ""},
		{"space refused", http.Header{"X-Request-Id": {"a b"}}, ""},
		{"non-ASCII refused", http.Header{"X-Request-Id": {"é"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, FromHeader(tc.header))
		})
	}
}

// FuzzFromHeader: whatever the service sends, what is kept is short
// printable ASCII, safe in a log line or an error.
func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"req-1", "", "a\nb", "é", strings.Repeat("x", 300)} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, x, plain string) {
		got := FromHeader(http.Header{"X-Request-Id": {x}, "Request-Id": {plain}})
		require.LessOrEqual(t, len(got), MaxServer)
		for i := 0; i < len(got); i++ {
			require.True(t, got[i] > 0x20 && got[i] < 0x7f, "byte %#x kept", got[i])
		}
	})
}
