package paygate

import (
	"fmt"
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
		{name: "same shape, new values", form: with(func(v url.Values) { v.Set("amount", "2.00") })},
		{name: "same shape, signature added", form: with(func(v url.Values) { v.Set("signature", "x") })},
		{name: "outbound: exp comes from the signer", form: base(), exp: "1800000060"},
		{name: "outbound without exp in the form", form: with(func(v url.Values) { v.Del("exp") }), exp: "1800000060"},
		{name: "outbound with signature", form: with(func(v url.Values) { v.Set("signature", "x") }), exp: "1800000060"},
		{name: "a key more", form: with(func(v url.Values) { v.Set("email", "a@b.c") })},
		{name: "a key less", form: with(func(v url.Values) { v.Del("refNo") })},
		{name: "a key replaced", form: with(func(v url.Values) { v.Del("refNo"); v.Set("refNO", "R") })},
		{name: "an extra key with no value", form: with(func(v url.Values) { v["empty"] = nil })},
		{name: "a remembered key with no value", form: with(func(v url.Values) { v["agency"] = []string{} })},
		{name: "a remembered key with two values", form: with(func(v url.Values) { v.Add("agency", "A2") })},
		{name: "an extra key with two values", form: with(func(v url.Values) { v["x"] = []string{"1", "2"} })},
		{name: "empty form", form: url.Values{}},
	}
	// Every pair: the first call leaves its shape, an order signed in
	// between leaves another, and the last call may use either.
	order := url.Values{"agency": {"A1"}, "refNo": {"R1"}, "amount": {"1.00"}, "email": {"a@b.c"}, "returnUrl": {"https://x/"}}
	for _, first := range tests {
		for _, tt := range tests {
			t.Run(first.name+" then "+tt.name, func(t *testing.T) {
				var s signState
				_ = s.collect(first.form, first.exp, false)
				require.NoError(t, s.collect(order, "1800000060", false))
				requireCollectsAsFresh(t, &s, tt.form, tt.exp)
			})
		}
	}
}

// requireCollectsAsFresh checks that s, whatever shapes it remembers,
// collects form (told whether it holds a signature, as the verifiers tell
// it) as a state that remembers none does, and builds the query
// that url.QueryEscape gives under every encoding.
func requireCollectsAsFresh(t *testing.T, s *signState, form url.Values, exp string) {
	t.Helper()
	// signed as VerifyCallback passes it: the form holds a signature.
	_, signed := form[fieldSignature]
	errShaped := s.collect(form, exp, signed)
	var fresh signState
	errFresh := fresh.collect(form, exp, false)
	require.Equal(t, errFresh, errShaped)
	if errFresh != nil {
		return
	}
	require.Equal(t, append([]field{}, fresh.fields...), append([]field{}, s.fields...))
	for enc := range queryEncoding(4) {
		var want []string
		for _, f := range fresh.fields {
			want = append(want, referenceEscape(f.key, enc)+"="+referenceEscape(f.value, enc))
		}
		require.Equal(t, strings.Join(want, "&"), string(s.appendQuery(nil, enc)), enc.String())
	}
}

// TestShapesTakeTurns checks that a state keeps maxShapes field sets, so
// that signing orders and verifying callbacks in turn with one Key never
// goes back to the general path, and that a new set replaces the one
// remembered longest ago.
func TestShapesTakeTurns(t *testing.T) {
	callback := url.Values{"status": {"success"}, "refNo": {"R1"}, "amount": {"1.00"}, "signature": {"0123456789abcdef"}}
	order := url.Values{"agency": {"A1"}, "refNo": {"R1"}, "amount": {"1.00"}}
	var s signState
	require.NoError(t, s.collect(callback, "", false))
	require.NoError(t, s.collect(order, "1800000060", false))
	require.Equal(t, 2, s.next)
	for i := range 10 {
		order.Set("amount", fmt.Sprintf("%d.00", i+1))
		callback.Set("amount", fmt.Sprintf("%d.00", i+1))
		requireCollectsAsFresh(t, &s, order, "1800000060")
		requireCollectsAsFresh(t, &s, callback, "")
	}
	require.Equal(t, 2, s.next, "no shape remembered after the first two")

	for i := range maxShapes - 1 {
		require.NoError(t, s.collect(url.Values{fmt.Sprint("k", i): {"v"}}, "", false))
	}
	require.Equal(t, []string{"k2"}, s.shapes[0].keys, "the oldest shape, the callback's, is replaced")
	require.Equal(t, []string{"agency", "amount", "exp", "refNo"}, s.shapes[1].keys)
	require.True(t, s.shapes[1].hasExp)
	requireCollectsAsFresh(t, &s, callback, "")
}

// TestRememberShapeOwnsKeys checks that the remembered keys do not point into
// the caller's strings and that oversized sets are not remembered.
func TestRememberShapeOwnsKeys(t *testing.T) {
	body := "agency=A1&refNo=R1"
	form, err := url.ParseQuery(body)
	require.NoError(t, err)
	var s signState
	require.NoError(t, s.collect(form, "", false))
	require.Equal(t, []string{"agency", "refNo"}, s.shapes[0].keys)
	start := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	for _, k := range s.shapes[0].keys {
		p := uintptr(unsafe.Pointer(unsafe.StringData(k)))
		require.False(t, start <= p && p < start+uintptr(len(body)), "%q points into the caller's body", k)
	}

	big := url.Values{}
	for i := range maxShapeFields + 1 {
		big.Set(strings.Repeat("k", i+1), "v")
	}
	long := url.Values{strings.Repeat("k", maxShapeBytes+1): {"v"}}
	for _, form := range []url.Values{big, long, {}} {
		require.NoError(t, s.collect(form, "", false))
		require.Equal(t, 1, s.next)
		require.Empty(t, s.shapes[1].keys)
	}
}

// FuzzCollectShape: whatever field sets a state remembers, collecting the
// next one gives the same fields, error and query as a state with none.
func FuzzCollectShape(f *testing.F) {
	f.Add("agency=A1&refNo=R1&amount=1.00", "a=1", "agency=A2&refNo=R2&amount=2.00", uint8(0))
	f.Add("a=1&b=2&exp=3", "a=1&b=2", "a=1&b=2&signature=x", uint8(7))
	f.Add("a=1&b=2", "c=1", "a=1&b=2&b=3", uint8(2))
	f.Add("a=1&b=2", "a=1&b", "a=1&b", uint8(5))
	f.Fuzz(func(t *testing.T, first, second, third string, outbound uint8) {
		var s signState
		for i, body := range []string{first, second, third} {
			exp := ""
			if outbound>>i&1 != 0 {
				exp = "1800000060"
			}
			form, _ := url.ParseQuery(body)
			requireCollectsAsFresh(t, &s, form, exp)
		}
	})
}
