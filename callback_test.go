package paygate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The public sample's reference: several ~, spaces and a #.
const sampleRef = "test123~881225-08-1234~12 Jalan Foo~#Sample RefNo"

// A refNo with several ~ splits at the first: the base reference before it,
// everything after it the extra reference (docs/assumptions.md
// A-refno-tildes).
func TestParseCallbackSeveralTildes(t *testing.T) {
	const rest = "881225-08-1234~12 Jalan Foo~#Sample RefNo"
	for _, tc := range []struct {
		name       string
		refNo      string
		extraData  string
		extra      string
		consistent bool
	}{
		{name: "joined, no extraData", refNo: sampleRef, extra: rest, consistent: true},
		{name: "joined, extraData the same rest", refNo: sampleRef, extraData: rest, extra: rest, consistent: true},
		{name: "split, extraData holding ~", refNo: "test123", extraData: rest, extra: rest, consistent: true},
		{name: "joined, extraData only the next part: the joined rest wins, reported", refNo: sampleRef, extraData: "881225-08-1234", extra: rest},
		{name: "a trailing ~", refNo: "test123~", extra: "", consistent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := callbackFields(tc.refNo, "GW1", StatusSuccess, "00")
			f.Set("extraData", tc.extraData)
			cb, err := ParseCallback(f)
			require.NoError(t, err)
			require.Equal(t, "test123", cb.RefNo)
			require.Equal(t, tc.extra, cb.ExtraData)
			require.Equal(t, tc.consistent, cb.Consistent(), "%v", cb.Problems)
		})
	}
}

func TestParseCallback(t *testing.T) {
	base := func(edit func(f url.Values)) url.Values {
		f := callbackFields("INV-1", "GW1", StatusSuccess, "00")
		edit(f)
		return f
	}
	fpx := func(v string) url.Values { return base(func(f url.Values) { f.Set("fpx", v) }) }
	tests := []struct {
		name       string
		form       url.Values
		refNo      string
		extra      string
		amount     Amount
		code       FPXCode
		hasCode    bool
		consistent bool
		problems   []string // fields named in Problems
	}{
		{name: "clean success", form: base(func(url.Values) {}), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "00", hasCode: true, consistent: true},
		{name: "joined refNo, no extraData", form: base(func(f url.Values) { f.Set("refNo", "INV-1~cart 7"); f.Del("extraData") }), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "00", hasCode: true, consistent: true},
		{name: "joined refNo, matching extraData", form: base(func(f url.Values) { f.Set("refNo", "INV-1~cart 7") }), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "00", hasCode: true, consistent: true},
		{name: "joined refNo, other extraData", form: base(func(f url.Values) { f.Set("refNo", "INV-1~cart 7"); f.Set("extraData", "cart 8") }), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "00", hasCode: true, problems: []string{"extraData"}},
		{name: "split, empty extraData", form: base(func(f url.Values) { f.Set("extraData", "") }), refNo: "INV-1", amount: 14990, code: "00", hasCode: true, consistent: true},
		{name: "success with code 51", form: fpx(`{"fpx_debit_auth_code":"51"}`), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "51", hasCode: true},
		{name: "success with an empty code", form: fpx(`{"fpx_debit_auth_code":""}`), refNo: "INV-1", extra: "cart 7", amount: 14990, hasCode: true},
		{name: "success with a null code", form: fpx(`{"fpx_debit_auth_code":null}`), refNo: "INV-1", extra: "cart 7", amount: 14990, hasCode: true},
		{name: "success with a numeric code", form: fpx(`{"fpx_debit_auth_code":0}`), refNo: "INV-1", extra: "cart 7", amount: 14990, hasCode: true, problems: []string{"fpx"}},
		{name: "duplicate code key: unknown", form: fpx(`{"fpx_debit_auth_code":"00","x":1,"fpx_debit_auth_code":"51"}`), refNo: "INV-1", extra: "cart 7", amount: 14990, hasCode: true, problems: []string{"fpx"}},
		{name: "escaped code", form: fpx(`{"fpx_debit_auth_code":"\u0030\u0030"}`), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "00", hasCode: true, consistent: true},
		{name: "card: fpx without the code", form: fpx(`{"card_brand":"VISA","nested":{"fpx_debit_auth_code":"51"}}`), refNo: "INV-1", extra: "cart 7", amount: 14990, consistent: true},
		{name: "card: no fpx", form: base(func(f url.Values) { f.Del("fpx") }), refNo: "INV-1", extra: "cart 7", amount: 14990, consistent: true},
		{name: "fpx null", form: fpx(`null`), refNo: "INV-1", extra: "cart 7", amount: 14990, problems: []string{"fpx"}},
		{name: "fpx array", form: fpx(`[{"fpx_debit_auth_code":"00"}]`), refNo: "INV-1", extra: "cart 7", amount: 14990, problems: []string{"fpx"}},
		{name: "fpx not JSON", form: fpx(`approved`), refNo: "INV-1", extra: "cart 7", amount: 14990, problems: []string{"fpx"}},
		{name: "fpx truncated", form: fpx(`{"fpx_debit_auth_code":"00"`), refNo: "INV-1", extra: "cart 7", amount: 14990, problems: []string{"fpx"}},
		{name: "fpx with trailing text", form: fpx(`{"fpx_debit_auth_code":"00"} x`), refNo: "INV-1", extra: "cart 7", amount: 14990, problems: []string{"fpx"}},
		{name: "amount with three places", form: base(func(f url.Values) { f.Set("amount", "10.000") }), refNo: "INV-1", extra: "cart 7", code: "00", hasCode: true, problems: []string{"amount"}},
		{name: "amount with a thousands comma", form: base(func(f url.Values) { f.Set("amount", "1,000.00"); f.Set("addCharge", "x") }), refNo: "INV-1", extra: "cart 7", code: "00", hasCode: true, problems: []string{"amount", "addCharge"}},
		{name: "several orderNo values", form: base(func(f url.Values) { f["orderNo"] = []string{"GW1", "GW2"} }), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "00", hasCode: true, problems: []string{"orderNo"}},
		{name: "empty amount and addCharge: zero", form: base(func(f url.Values) { f.Set("amount", ""); f.Set("addCharge", "") }), refNo: "INV-1", extra: "cart 7", code: "00", hasCode: true, consistent: true},
		{name: "pending with code 09", form: base(func(f url.Values) { f.Set("status", "pending"); f.Set("fpx", `{"fpx_debit_auth_code":"09"}`) }), refNo: "INV-1", extra: "cart 7", amount: 14990, code: "09", hasCode: true, consistent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := ParseCallback(tt.form)
			require.NoError(t, err)
			require.Equal(t, tt.refNo, cb.RefNo)
			require.Equal(t, tt.extra, cb.ExtraData)
			require.Equal(t, tt.amount, cb.Amount)
			if tt.form.Get("addCharge") == "" {
				require.Zero(t, cb.AddCharge, "an empty addCharge is no charge")
			}
			require.Equal(t, tt.code, cb.FPX.DebitAuthCode)
			require.Equal(t, tt.hasCode, cb.FPX.HasDebitAuthCode)
			require.Equal(t, tt.consistent, cb.Consistent(), "%v", cb.Problems)
			var fields []string
			for _, p := range cb.Problems {
				fields = append(fields, p.Field)
			}
			require.Equal(t, tt.problems, fields)
			require.False(t, cb.Verified)
			require.Equal(t, tt.form.Get("fpx"), cb.FPX.Raw)
		})
	}
}

// Only what routing needs is required: status and one refNo with a base.
func TestParseCallbackRouting(t *testing.T) {
	for _, tt := range []struct {
		name   string
		form   url.Values
		fields []string
	}{
		{name: "nothing", form: url.Values{}, fields: []string{"status", "refNo"}},
		{name: "empty refNo", form: url.Values{"status": {"success"}, "refNo": {""}}, fields: []string{"refNo"}},
		{name: "no base", form: url.Values{"status": {"success"}, "refNo": {"~x"}}, fields: []string{"refNo"}},
		{name: "two statuses", form: url.Values{"status": {"success", "failed"}, "refNo": {"A"}}, fields: []string{"status"}},
		{name: "two refNos", form: url.Values{"status": {"success"}, "refNo": {"A", "B"}}, fields: []string{"refNo"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCallback(tt.form)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			var fields []string
			for _, p := range ve.Problems {
				fields = append(fields, p.Field)
			}
			require.Equal(t, tt.fields, fields)
		})
	}
}

// signWith signs the callback message of the given encoding ("form",
// "form-php", "form-whatwg") with the test key, as a gateway using that
// encoder would, in upper-case hex when upper is set. The message is built
// here, independently of the verifier: in Go's form encoding a literal ~
// comes only from ~ and %2A only from *.
func signWith(t *testing.T, form url.Values, encoding string, upper bool) url.Values {
	t.Helper()
	msg := form.Encode()
	switch encoding {
	case "form-php":
		msg = strings.ReplaceAll(msg, "~", "%7E")
	case "form-whatwg":
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, "~", "%7E"), "%2A", "*")
	}
	raw, err := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	require.NoError(t, err)
	mac := hmac.New(sha256.New, raw)
	mac.Write([]byte(msg))
	sig := hex.EncodeToString(mac.Sum(nil))[:16]
	if upper {
		sig = strings.ToUpper(sig)
	}
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	out.Set("signature", sig)
	return out
}

// A verified success whose refNo holds several ~ (and spaces and a #) is
// fulfilled once under its base reference, whichever encoder the gateway
// signed with and in either case of hex; never refused for the rest.
func TestCallbackHandlerFulfilsSeveralTildes(t *testing.T) {
	key, err := ParseKey(testKeyUUID)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		encoding string
		upper    bool
		// edit, when set, changes the fields before they are signed.
		edit func(f url.Values)
	}{
		{name: "Go form encoding, joined", encoding: "form"},
		{name: "PHP urlencode (~ as %7E), joined", encoding: "form-php"},
		{name: "WHATWG form, joined, upper-case hex", encoding: "form-whatwg", upper: true},
		{name: "PHP urlencode, split", encoding: "form-php", edit: func(f url.Values) {
			f.Set("refNo", "test123")
			f.Set("extraData", strings.TrimPrefix(sampleRef, "test123~"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			h := &CallbackHandler{Keys: []Key{key}, Logger: discardLogger(), Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error {
				got = append(got, cb.RefNo+" | "+cb.ExtraData)
				return nil
			})}
			f := callbackFields(sampleRef, "GW1", StatusSuccess, "00")
			f.Del("extraData")
			if tc.edit != nil {
				tc.edit(f)
			}
			signed := signWith(t, f, tc.encoding, tc.upper)
			for range 2 { // the gateway's retry
				req := httptest.NewRequest(http.MethodPost, "/return", strings.NewReader(signed.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			}
			require.Equal(t, []string{"test123 | 881225-08-1234~12 Jalan Foo~#Sample RefNo"}, got)
		})
	}
}

// CreatedRefNo joins the base reference and the extra data back into the
// reference the order was created with, whichever way the callback
// carried it.
func TestCallbackCreatedRefNo(t *testing.T) {
	for _, tc := range []struct {
		fields url.Values
		want   string
	}{
		{url.Values{"refNo": {"INV-5~c5"}}, "INV-5~c5"},
		{url.Values{"refNo": {"INV-5"}, "extraData": {"c5"}}, "INV-5~c5"},
		{url.Values{"refNo": {"INV-5"}}, "INV-5"},
		{url.Values{"refNo": {"INV-5~a~b"}}, "INV-5~a~b"},
	} {
		tc.fields.Set("status", "success")
		cb, err := ParseCallback(tc.fields)
		require.NoError(t, err)
		require.Equal(t, tc.want, cb.CreatedRefNo(), "%v", tc.fields)
	}
}
