package paygate

import (
	"net/url"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestCollectShape runs collect on one signState after another with field
// sets that share, or almost share, the remembered shape, and checks each
// result against a fresh state (which can only take the general path).
func TestCollectShape(t *testing.T) {
	base := func() url.Values {
		return url.Values{"agency": {"A1"}, "refNo": {"R~1"}, "amount": {"1.00"}, "exp": {"99"},
			"k~1": {"x"}, "a b": {"*"}, "dot.ted_x-y": {"é"}}
	}
	with := func(f func(url.Values)) url.Values { v := base(); f(v); return v }
	tests := []struct {
		name string
		form url.Values
		exp  string
	}{
		{"same shape, new values", with(func(v url.Values) { v.Set("amount", "2.00") }), ""},
		{"same shape, signature added", with(func(v url.Values) { v.Set("signature", "x") }), ""},
		{"outbound: exp comes from the signer", base(), "1800000060"},
		{"outbound without exp in the form", with(func(v url.Values) { v.Del("exp") }), "1800000060"},
		{"outbound with signature", with(func(v url.Values) { v.Set("signature", "x") }), "1800000060"},
		{"a key more", with(func(v url.Values) { v.Set("email", "a@b.c") }), ""},
		{"a key less", with(func(v url.Values) { v.Del("refNo") }), ""},
		{"a key replaced", with(func(v url.Values) { v.Del("refNo"); v.Set("refNO", "R") }), ""},
		{"an extra key with no value", with(func(v url.Values) { v["empty"] = nil }), ""},
		{"a remembered key with no value", with(func(v url.Values) { v["agency"] = []string{} }), ""},
		{"a remembered key with two values", with(func(v url.Values) { v.Add("agency", "A2") }), ""},
		{"an extra key with two values", with(func(v url.Values) { v["x"] = []string{"1", "2"} }), ""},
		{"empty form", url.Values{}, ""},
	}
	// Every pair: the first call leaves its shape, the second may use it.
	for _, first := range tests {
		for _, tt := range tests {
			t.Run(first.name+" then "+tt.name, func(t *testing.T) {
				var s signState
				_ = s.collect(first.form, first.exp)
				errShaped := s.collect(tt.form, tt.exp)
				var fresh signState
				errFresh := fresh.collect(tt.form, tt.exp)
				require.Equal(t, errFresh, errShaped)
				if errFresh == nil {
					require.Equal(t, append([]field{}, fresh.fields...), append([]field{}, s.fields...))
					for enc := range queryEncoding(4) {
						var want []string
						for _, f := range fresh.fields {
							want = append(want, referenceEscape(f.key, enc)+"="+referenceEscape(f.value, enc))
						}
						require.Equal(t, strings.Join(want, "&"), string(s.appendQuery(nil, enc)), enc.String())
					}
				}
			})
		}
	}
}

// TestRememberShapeOwnsKeys checks that the remembered keys do not point into
// the caller's strings and that oversized sets are not remembered.
func TestRememberShapeOwnsKeys(t *testing.T) {
	body := "agency=A1&refNo=R1"
	form, err := url.ParseQuery(body)
	require.NoError(t, err)
	var s signState
	require.NoError(t, s.collect(form, ""))
	require.Equal(t, []string{"agency", "refNo"}, s.shape)
	start := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	for _, k := range s.shape {
		p := uintptr(unsafe.Pointer(unsafe.StringData(k)))
		require.False(t, start <= p && p < start+uintptr(len(body)), "%q points into the caller's body", k)
	}

	big := url.Values{}
	for i := range maxShapeFields + 1 {
		big.Set(strings.Repeat("k", i+1), "v")
	}
	require.NoError(t, s.collect(big, ""))
	require.Empty(t, s.shape)
	long := url.Values{strings.Repeat("k", maxShapeBytes+1): {"v"}}
	require.NoError(t, s.collect(long, ""))
	require.Empty(t, s.shape)
}

// FuzzCollectShape: whatever field set a state remembers, collecting the
// next one gives the same fields and error as a state with no shape.
func FuzzCollectShape(f *testing.F) {
	f.Add("agency=A1&refNo=R1&amount=1.00", "agency=A2&refNo=R2&amount=2.00", false)
	f.Add("a=1&b=2&exp=3", "a=1&b=2&signature=x", true)
	f.Add("a=1&b=2", "a=1&b=2&b=3", false)
	f.Add("a=1&b=2", "a=1&b", true)
	f.Fuzz(func(t *testing.T, first, second string, outbound bool) {
		exp := ""
		if outbound {
			exp = "1800000060"
		}
		f1, _ := url.ParseQuery(first)
		f2, _ := url.ParseQuery(second)
		var s, fresh signState
		_ = s.collect(f1, exp)
		errShaped := s.collect(f2, exp)
		errFresh := fresh.collect(f2, exp)
		require.Equal(t, errFresh, errShaped)
		if errFresh == nil {
			require.Equal(t, append([]field{}, fresh.fields...), append([]field{}, s.fields...))
			require.Equal(t, string(fresh.appendQuery(nil, encFormPHP)), string(s.appendQuery(nil, encFormPHP)))
		}
	})
}
