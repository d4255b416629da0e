package signing

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// collectCallback takes only the forms it reads as collectAll does: the
// protocol's callback fields, each once, and nothing else.
func TestCollectCallbackAgreesWithCollectAll(t *testing.T) {
	full := func(edit func(url.Values)) url.Values {
		f := url.Values{"status": {"success"}, "orderNo": {"GW1"}, "refNo": {"INV-1"}, "amount": {"1.00"},
			"addCharge": {"0.00"}, "fpxTxnId": {"1"}, "fpxTxnTime": {"2026-11-22 10:30:15"}, "agency": {"AG"},
			"extraData": {""}, "fpx": {`{"a":1}`}, "signature": {"0123456789abcdef"}}
		if edit != nil {
			edit(f)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		form url.Values
		fast bool // collectCallback reads it
	}{
		{name: "a callback", form: full(nil), fast: true},
		{name: "no signature", form: full(func(f url.Values) { f.Del("signature") }), fast: true},
		{name: "fields missing", form: full(func(f url.Values) { f.Del("fpx"); f.Del("agency") }), fast: true},
		{name: "empty", form: url.Values{}, fast: true},
		{name: "an extra field", form: full(func(f url.Values) { f.Set("buyerName", "Siti") })},
		{name: "an extra field instead of signature", form: full(func(f url.Values) { f.Del("signature"); f.Set("zz", "1") })},
		{name: "a field with no values", form: full(func(f url.Values) { f["amount"] = nil })},
		{name: "a field twice", form: full(func(f url.Values) { f.Add("amount", "2.00") })},
		{name: "a key like a field's", form: full(func(f url.Values) { f.Del("status"); f.Set("Status", "success") })},
		{name: "signature twice", form: full(func(f url.Values) { f.Add("signature", "x") }), fast: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireCollectAgrees(t, tc.form, tc.fast)
		})
	}
}

// FuzzCollectCallback: for any query, collectCallback either declines or
// returns what collectAll returns.
func FuzzCollectCallback(f *testing.F) {
	for _, seed := range []string{
		"status=success&orderNo=1&refNo=a&amount=1.00&signature=x",
		"status=success&status=failed", "fpx=&fpxTxnId=", "zz=1", "signature=&signature=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		fast, ok := collectCallback(nil, form)
		if !ok {
			return
		}
		want, err := collectAll(nil, form, "")
		require.NoError(t, err)
		require.Equal(t, keysValues(want), keysValues(fast), "%q", query)
	})
}

// requireCollectAgrees checks whether collectCallback reads form, and that
// it then collects what collectAll does.
func requireCollectAgrees(t *testing.T, form url.Values, fast bool) {
	t.Helper()
	var space fieldSpace
	got, ok := collectCallback(space[:0], form)
	require.Equal(t, fast, ok, "read by collectCallback")
	if !ok {
		return
	}
	want, err := collectAll(nil, form, "")
	require.NoError(t, err)
	require.Equal(t, keysValues(want), keysValues(got))
}

// keysValues is fields without their sort prefixes.
func keysValues(fields []field) [][2]string {
	out := make([][2]string, len(fields))
	for i, f := range fields {
		out[i] = [2]string{f.key, f.value}
	}
	return out
}
