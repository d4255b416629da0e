package formbody

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// callbackBody is a callback's body as the gateway's encoder writes it.
func callbackBody() string {
	return url.Values{
		"status": {"success"}, "orderNo": {"GW1"}, "refNo": {"INV-1~cart 7"}, "amount": {"149.90"},
		"fpxTxnTime": {"2026-11-22 10:30:15"}, "extraData": {"cart 7"},
		"fpx":       {`{"fpx_debit_auth_code":"00","fpx_buyer_name":"SITI NUR AISYAH"}`},
		"signature": {"0123456789abcdef"},
	}.Encode()
}

// requireSameAsParseQuery fails unless Parse gives for body what
// url.ParseQuery gives: the same fields and values and the same error.
func requireSameAsParseQuery(t *testing.T, body string) {
	t.Helper()
	want, wantErr := url.ParseQuery(body)
	got, err := Parse(body)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), "body %q", body)
		return
	}
	require.NoError(t, err, "body %q", body)
	require.Equal(t, want, got, "body %q", body)
}

// Parse is url.ParseQuery, field for field and error for error, on
// callback bodies and hostile ones: repeated fields (appending to the first
// value must not touch the next field's), empty pairs, semicolons, bad
// escapes, and more fields than it parses itself.
func TestParseFormMatchesParseQuery(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
	}{
		{name: "empty", body: ""},
		{name: "signed callback", body: callbackBody()},
		{name: "repeated fields between others", body: "a=1&b=2&a=3&c=4&b=5&a=6"},
		{name: "repeated first field, then a new one", body: "a=1&a=2&b=3"},
		{name: "empty pairs and names", body: "&&a=1&&=2&b&c=&"},
		{name: "plus and escapes", body: "k%20ey=v%26alue+x&%7E=~"},
		{name: "semicolon", body: "a=1;b=2&c=3"},
		{name: "semicolon after a bad escape", body: "a=%zz&b=1;c"},
		{name: "bad escape in a name", body: "a%z=1&b=2"},
		{name: "bad escape in a value, then a good field", body: "a=%2&b=2"},
		{name: "as many fields as it parses itself", body: strings.Repeat("f=1&", maxFastFields-1) + "g=2"},
		{name: "one field more: url.ParseQuery's", body: strings.Repeat("f=1&", maxFastFields) + "g=2"},
		{name: "past url.ParseQuery's limit", body: strings.Repeat("&", 10000) + "a=1"},
		{name: "non-UTF-8 bytes raw and escaped", body: "a=\xff\xfe&%ff=%fe&b=%C3%28"},
		{name: "NUL raw and escaped", body: "a=\x00&%00=1&b=x%00y"},
		{name: "= in values and names", body: "a=b=c&=&==&%3D=%3d"},
		{name: "a % at the end", body: "a=1&b=%"},
		{name: "a short escape at the end", body: "a=1&b=%2"},
		{name: "a bad escape in a name, then a semicolon", body: "%zz=1&a;b"},
		{name: "a semicolon, then a bad escape", body: "a;b&%zz=1"},
		{name: "only semicolons", body: ";;;"},
		{name: "plus everywhere", body: "+=+&a+b=c+d&%2B=%2b"},
		{name: "a long value", body: "a=" + strings.Repeat("v%20", 20000)},
		{name: "the same name with and without escapes", body: "a=1&%61=2&a=3"},
		{name: "64 fields, a semicolon in the last", body: strings.Repeat("f=1&", maxFastFields-1) + "g;=2"},
	} {
		t.Run(tc.name, func(t *testing.T) { requireSameAsParseQuery(t, tc.body) })
	}
}

// unescape is url.QueryUnescape, value for value and error for error:
// runs, plus signs, escapes of either case, and escapes cut short or not hex
// anywhere in the string.
func TestQueryUnescapeMatchesURL(t *testing.T) {
	for _, s := range []string{
		"", "plain", "a+b", "+", "%41", "%4a%4A", "%22fpx%22%3A%2200%22", "run%20then+run", "%E6%9E%97",
		"%", "%4", "a%4", "%zz", "%4g", "ab%g4cd", "%%41", "ok%41then%z", "+%",
	} {
		want, wantErr := url.QueryUnescape(s)
		got, err := unescape(s)
		if wantErr != nil {
			require.EqualError(t, err, wantErr.Error(), "%q", s)
			continue
		}
		require.NoError(t, err, "%q", s)
		require.Equal(t, want, got, "%q", s)
	}
}

// FuzzParseForm: for any body, Parse and url.ParseQuery agree.
func FuzzParseForm(f *testing.F) {
	for _, seed := range []string{callbackBody(), "a=1&a=2&b=3", "a=1;b", "%zz=1&a", "&&=&", "a=%4&b=%41+%2", "k+%41=v%"} {
		f.Add(seed)
	}
	f.Fuzz(requireSameAsParseQuery)
}
