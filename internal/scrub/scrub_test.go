package scrub

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Replace replaces every occurrence in any ASCII case, merges
// overlapping ones, and leaves a body without secrets as it was.
func TestReplace(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		secrets          []string
	}{
		{"none", "plain body", "plain body", []string{"abc"}},
		{"no secrets", "plain abc", "plain abc", nil},
		{"each occurrence", "abc-x-abc", Marker + "-x-" + Marker, []string{"abc"}},
		{"ascii case", "sig=ABCDEF0123456789", "sig=" + Marker, Forms("abcdef0123456789")},
		{"overlap", "xabcdy", "x" + Marker + "y", []string{"abc", "bcd"}},
		{"overlapping occurrences of one secret", "xaaay", "x" + Marker + "y", []string{"aa"}},
		{"url-encoded", "pw=a%26b+c", "pw=" + Marker, Forms("a&b c")},
		{"json-escaped", `{"pw":"a\u0026b\"c"}`, `{"pw":"` + Marker + `"}`, Forms(`a&b"c`)},
		{"html-escaped", "<p>a&amp;b&lt;c</p>", "<p>" + Marker + "</p>", Forms("a&b<c")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Replace(tc.body, tc.secrets))
		})
	}
}

// Longest is how far an occurrence can reach past a cut: the longest
// secret's length, and 0 when there is none, so that a body without
// secrets is read no further than its cap.
func TestLongest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		want    int
	}{
		{"none", nil, 0},
		{"empty list", []string{}, 0},
		{"one", []string{"abc"}, 3},
		{"the longest of several", []string{"ab", "abcde", "abc"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Longest(tc.secrets))
		})
	}
}
