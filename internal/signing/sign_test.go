package signing

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// vector is one entry of testdata/signing/vectors.json, written by
// gen_vectors.py with Python's urllib and hmac.
type vector struct {
	Key    string      `json:"key"`
	Now    int64       `json:"now"`
	Params [][2]string `json:"params"`
	Get    struct {
		URL     string `json:"url"`
		Message string `json:"message"`
		Signed  string `json:"signed"`
	} `json:"get"`
	Post struct {
		Message   string `json:"message"`
		Signature string `json:"signature"`
	} `json:"post"`
	PostWithPath struct {
		Path      string `json:"path"`
		Message   string `json:"message"`
		Signature string `json:"signature"`
	} `json:"post_with_path"`
	Callback []struct {
		Encoding  string `json:"encoding"`
		Message   string `json:"message"`
		Signature string `json:"signature"`
	} `json:"callback"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/signing/vectors.json")
	require.NoError(t, err)
	var vs []vector
	require.NoError(t, json.Unmarshal(raw, &vs))
	require.GreaterOrEqual(t, len(vs), 200)
	return vs
}

func (v vector) form() url.Values {
	f := url.Values{}
	for _, p := range v.Params {
		f.Set(p[0], p[1])
	}
	return f
}

func TestVectorsGET(t *testing.T) {
	for i, v := range loadVectors(t) {
		key := mustKey(t, v.Key)
		now := time.Unix(v.Now, 0)
		got, err := SignURL(key, v.Get.URL, now)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, v.Get.Signed, got, "vector %d", i)
		msg, err := URLMessage(v.Get.URL, now)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, Message{RFC3986, v.Get.Message}, msg, "vector %d", i)
		u, err := url.Parse(v.Get.Signed)
		require.NoError(t, err)
		require.NoError(t, VerifyURL(u, now, []*Key{key}), "vector %d", i)
	}
}

func TestVectorsPOST(t *testing.T) {
	for i, v := range loadVectors(t) {
		key := mustKey(t, v.Key)
		now := time.Unix(v.Now, 0)
		in := v.form()
		before := in.Encode()
		out, err := SignForm(key, "", in, now)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, before, in.Encode(), "input modified, vector %d", i)
		require.Equal(t, v.Post.Signature, out.Get("signature"), "vector %d", i)
		require.Equal(t, fmt.Sprint(v.Now+60), out.Get("exp"), "vector %d", i)
		require.Len(t, out, len(v.Params)+2, "vector %d", i)
		for _, p := range v.Params {
			require.Equal(t, []string{p[1]}, out[p[0]], "vector %d", i)
		}
		msg, err := FormMessage("", in, now)
		require.NoError(t, err)
		require.Equal(t, v.Post.Message, msg.Text, "vector %d", i)
		in.Set("exp", fmt.Sprint(v.Now+60))
		in.Set("signature", v.Post.Signature)
		require.NoError(t, VerifyForm("", in, now, []*Key{key}), "vector %d", i)
	}
}

// The compatibility rule: a POST signed over <path>?<query>.
func TestVectorsPOSTWithPath(t *testing.T) {
	for i, v := range loadVectors(t) {
		key := mustKey(t, v.Key)
		now := time.Unix(v.Now, 0)
		p := v.PostWithPath
		require.NotEmpty(t, p.Path)
		out, err := SignForm(key, p.Path+"?", v.form(), now)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, p.Signature, out.Get("signature"), "vector %d", i)
		require.NotEqual(t, v.Post.Signature, p.Signature, "the two rules differ, vector %d", i)
		msg, err := FormMessage(p.Path+"?", v.form(), now)
		require.NoError(t, err)
		require.Equal(t, p.Message, msg.Text, "vector %d", i)
		require.NoError(t, VerifyForm(p.Path+"?", out, now, []*Key{key}), "vector %d", i)
		require.ErrorIs(t, VerifyForm("", out, now, []*Key{key}), ErrSignatureMismatch, "vector %d", i)
	}
}

func TestVectorsCallback(t *testing.T) {
	variants := map[string]int{}
	for i, v := range loadVectors(t) {
		key := mustKey(t, v.Key)
		form := v.form()

		msgs, err := CallbackMessages(form)
		require.NoError(t, err)
		require.Len(t, msgs, len(v.Callback), "vector %d", i)
		for j, c := range v.Callback {
			require.Equal(t, c.Encoding, msgs[j].Encoding.String(), "vector %d", i)
			require.Equal(t, c.Message, msgs[j].Text, "vector %d", i)
		}

		signed, err := SignCallback(key, form)
		require.NoError(t, err)
		require.Equal(t, v.Callback[0].Signature, signed.Get("signature"), "vector %d", i)

		for _, c := range v.Callback {
			variants[c.Encoding]++
			for _, sig := range []string{c.Signature, strings.ToUpper(c.Signature)} {
				f := v.form()
				f.Set("signature", sig)
				require.NoError(t, VerifyCallback(f, []*Key{key}), "vector %d %s", i, c.Encoding)
			}
			f := v.form()
			f.Set("signature", flipHex(c.Signature, i%16))
			require.ErrorIs(t, VerifyCallback(f, []*Key{key}), ErrSignatureMismatch, "vector %d %s", i, c.Encoding)
		}
	}
	for _, e := range []Encoding{FormPHP, FormWHATWG, RFC3986} {
		require.Greater(t, variants[e.String()], 50, "vectors must exercise the %s variant", e)
	}
}

// flipHex changes the hex digit at i to a different value.
func flipHex(sig string, i int) string {
	b := []byte(sig)
	if b[i] == '0' {
		b[i] = '1'
	} else {
		b[i] = '0'
	}
	return string(b)
}

// A variant is tried only when the message holds a character on which the
// encoders differ: a space for RFC 3986, ~ for PHP and WHATWG, * for WHATWG.
// Each candidate's signature verifies. A variant left out would write the
// canonical message again, so leaving it out costs nothing but an HMAC.
func TestVerifyCallbackVariantsOnlyWhenNeeded(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name string
		form url.Values
		want []Message
	}{
		{name: "nothing encoders differ on", form: url.Values{"refNo": {"A-1"}, "status": {"success"}},
			want: []Message{{Form, "refNo=A-1&status=success"}}},
		{name: "a space: RFC 3986", form: url.Values{"refNo": {"A B"}, "status": {"success"}},
			want: []Message{{Form, "refNo=A+B&status=success"}, {RFC3986, "refNo=A%20B&status=success"}}},
		{name: "a plus is not a space", form: url.Values{"refNo": {"A+B"}},
			want: []Message{{Form, "refNo=A%2BB"}}},
		{name: "a star: WHATWG", form: url.Values{"refNo": {"A*B"}},
			want: []Message{{Form, "refNo=A%2AB"}, {FormWHATWG, "refNo=A*B"}}},
		{name: "a tilde: PHP and WHATWG", form: url.Values{"refNo": {"A~B"}},
			want: []Message{{Form, "refNo=A~B"}, {FormPHP, "refNo=A%7EB"}, {FormWHATWG, "refNo=A%7EB"}}},
		{name: "a space first in the message", form: url.Values{" a": {"1"}},
			want: []Message{{Form, "+a=1"}, {RFC3986, "%20a=1"}}},
		{name: "a tilde first in the message", form: url.Values{"~a": {"1"}},
			want: []Message{{Form, "~a=1"}, {FormPHP, "%7Ea=1"}, {FormWHATWG, "%7Ea=1"}}},
		{name: "all three: four candidates", form: url.Values{"refNo": {"A~B*C D"}},
			want: []Message{{Form, "refNo=A~B%2AC+D"}, {FormPHP, "refNo=A%7EB%2AC+D"},
				{FormWHATWG, "refNo=A%7EB*C+D"}, {RFC3986, "refNo=A~B%2AC%20D"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := CallbackMessages(tc.form)
			require.NoError(t, err)
			require.Equal(t, tc.want, msgs)
			for _, m := range msgs {
				sig := key.Sign([]byte(m.Text))
				tc.form.Set(FieldSignature, string(sig[:]))
				require.NoError(t, VerifyCallback(tc.form, []*Key{key}), "%s", m.Encoding)
			}
		})
	}
}

func TestVerifyCallbackErrors(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	other := mustKey(t, "00000000-0000-0000-0000-000000000001")
	base := url.Values{
		"status": {"success"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}, "orderNo": {"G1"},
	}
	signed, err := SignCallback(key, base)
	require.NoError(t, err)
	sig := signed.Get("signature")

	with := func(edit func(url.Values)) url.Values {
		f := url.Values{}
		for k, v := range signed {
			f[k] = append([]string(nil), v...)
		}
		edit(f)
		return f
	}
	tests := []struct {
		name string
		form url.Values
		keys []*Key
		want error
	}{
		{name: "valid", form: signed, keys: []*Key{key}},
		{name: "upper-case hex", form: with(func(f url.Values) { f.Set("signature", strings.ToUpper(sig)) }), keys: []*Key{key}},
		{name: "rotation: second key", form: signed, keys: []*Key{other, key}},
		{name: "missing", form: with(func(f url.Values) { f.Del("signature") }), keys: []*Key{key}, want: ErrSignatureMissing},
		{name: "empty", form: with(func(f url.Values) { f.Set("signature", "") }), keys: []*Key{key}, want: ErrSignatureMissing},
		{name: "wrong key", form: signed, keys: []*Key{other}, want: ErrSignatureMismatch},
		{name: "short", form: with(func(f url.Values) { f.Set("signature", sig[:15]) }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "long", form: with(func(f url.Values) { f.Set("signature", sig+"0") }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "full digest prefix", form: with(func(f url.Values) { f.Set("signature", sig+sig) }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "non-hex", form: with(func(f url.Values) { f.Set("signature", "g"+sig[1:]) }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "two signatures", form: with(func(f url.Values) { f.Add("signature", sig) }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "other amount", form: with(func(f url.Values) { f.Set("amount", "1000.00") }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "extra field", form: with(func(f url.Values) { f.Set("extraData", "") }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "field dropped", form: with(func(f url.Values) { f.Del("orderNo") }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "duplicated field", form: with(func(f url.Values) { f.Add("status", "success") }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "duplicated field, said so", form: with(func(f url.Values) { f.Add("status", "success") }), keys: []*Key{key}, want: ErrMultipleValues},
		{name: "exp is a field like any other", form: with(func(f url.Values) { f.Set("exp", "1") }), keys: []*Key{key}, want: ErrSignatureMismatch},
		{name: "no keys", form: signed, keys: nil, want: ErrInvalidKey},
		{name: "zero key", form: signed, keys: []*Key{nil}, want: ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyCallback(tt.form, tt.keys)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// A form with several fields given more than once names the first of them
// in byte-wise order, whatever the map's order: the error is the same for
// the same form every time.
func TestMultipleValuesNamesTheFirstKey(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	form := url.Values{"status": {"a", "b"}, "amount": {"1", "2"}, "refNo": {"x", "y"}, "orderNo": {"G1"}, "signature": {"0123456789abcdef"}}
	for range 20 { // the map's order differs from one range to the next
		err := VerifyCallback(form, []*Key{key})
		require.ErrorIs(t, err, ErrMultipleValues)
		require.ErrorContains(t, err, `"amount" has 2 values`)
		_, err = SignForm(key, "", form, time.Unix(1_800_000_000, 0))
		require.ErrorContains(t, err, `"amount" has 2 values`)
	}
}

// The service's side refuses what it cannot read: a form with a field
// given twice, and a URL whose query is not a query.
func TestVerifySignedInputErrors(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Unix(1_800_000_000, 0)
	signed, err := SignForm(key, "", url.Values{"amount": {"1.00"}}, now)
	require.NoError(t, err)
	signed.Add("amount", "2.00")
	err = VerifyForm("", signed, now, []*Key{key})
	require.ErrorIs(t, err, ErrSignatureMismatch)
	require.ErrorIs(t, err, ErrMultipleValues)

	u, err := url.Parse("https://gw.example.my/v2/pay?a=%zz&exp=1800000060&signature=0123456789abcdef")
	require.NoError(t, err)
	err = VerifyURL(u, now, []*Key{key})
	require.ErrorIs(t, err, ErrSignatureMismatch)
	require.ErrorContains(t, err, "query")
}

func TestSignReplacesExpAndSignature(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Unix(1_800_000_000, 0)
	in := url.Values{"agency": {"AG"}, "exp": {"1"}, "signature": {"stale"}}
	out, err := SignForm(key, "", in, now)
	require.NoError(t, err)
	require.Equal(t, []string{"1800000060"}, out["exp"])
	require.Len(t, out["signature"], 1)
	require.NotEqual(t, "stale", out.Get("signature"))
	clean, err := SignForm(key, "", url.Values{"agency": {"AG"}}, now)
	require.NoError(t, err)
	require.Equal(t, clean, out)

	got, err := SignURL(key, "https://gw.example/p?exp=1&signature=x&a=b", now)
	require.NoError(t, err)
	want, err := SignURL(key, "https://gw.example/p?a=b", now)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, 1, strings.Count(got, "exp="))
	require.Equal(t, 1, strings.Count(got, "signature="))
}

func TestSignInputErrors(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Unix(1_800_000_000, 0)

	_, err := SignForm(key, "", url.Values{"refNo": {"a", "b"}}, now)
	require.ErrorIs(t, err, ErrMultipleValues)
	require.ErrorContains(t, err, `"refNo"`)
	_, err = SignCallback(key, url.Values{"refNo": {"a", "b"}})
	require.ErrorIs(t, err, ErrMultipleValues)

	for _, raw := range []string{
		"https://gw.example/p?a=1&a=2", // several values
		"/relative?a=1",                // not absolute
		"https://gw.example/p#frag",    // fragment
		"https://u:p@gw.example/p",     // user information
		"https://gw.example/p?a=%zz",   // bad escape
		"://nope",
	} {
		_, err := SignURL(key, raw, now)
		require.Error(t, err, raw)
		_, err = URLMessage(raw, now)
		require.Error(t, err, raw)
	}
	_, err = FormMessage("", url.Values{"a": {"1", "2"}}, now)
	require.ErrorIs(t, err, ErrMultipleValues)
	_, err = CallbackMessages(url.Values{"a": {"1", "2"}})
	require.ErrorIs(t, err, ErrMultipleValues)
}

// The service-side checks accept what SignForm and SignURL produce, within
// the 60 s of exp, and nothing else.
func TestVerifySigned(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	other := mustKey(t, "00000000-0000-0000-0000-000000000001")
	now := time.Unix(1_800_000_000, 0)
	form, err := SignForm(key, "", url.Values{"agency": {"AG"}, "refNo": {"R 1~x"}}, now)
	require.NoError(t, err)
	raw, err := SignURL(key, "https://gw.example/api/report/v1/payment?page=0&output=json", now)
	require.NoError(t, err)
	u, err := url.Parse(raw)
	require.NoError(t, err)

	require.NoError(t, VerifyForm("", form, now.Add(59*time.Second), []*Key{key}))
	require.NoError(t, VerifyForm("", form, now, []*Key{other, key}))
	require.NoError(t, VerifyURL(u, now.Add(60*time.Second), []*Key{key}))
	require.ErrorIs(t, VerifyForm("", form, now.Add(61*time.Second), []*Key{key}), ErrSignatureExpired)
	require.ErrorIs(t, VerifyURL(u, now.Add(2*time.Minute), []*Key{key}), ErrSignatureExpired)
	require.ErrorIs(t, VerifyForm("", form, now, []*Key{other}), ErrSignatureMismatch)

	tampered := url.Values{}
	for k, v := range form {
		tampered[k] = v
	}
	tampered.Set("refNo", "R 2~x")
	require.ErrorIs(t, VerifyForm("", tampered, now, []*Key{key}), ErrSignatureMismatch)
	tampered = url.Values{}
	for k, v := range form {
		tampered[k] = v
	}
	tampered.Set("exp", "1900000000") // a later exp is not a free extension
	require.ErrorIs(t, VerifyForm("", tampered, now, []*Key{key}), ErrSignatureMismatch)
	tampered["exp"] = []string{form.Get("exp"), "1700000000"} // a repeated exp is not one Unix time
	require.ErrorIs(t, VerifyForm("", tampered, now, []*Key{key}), ErrSignatureExpired)
	require.ErrorContains(t, VerifyForm("", tampered, now, []*Key{key}), "exp missing or not Unix seconds")
	tampered.Del("exp")
	require.ErrorIs(t, VerifyForm("", tampered, now, []*Key{key}), ErrSignatureExpired)
	tampered.Del("signature")
	require.ErrorIs(t, VerifyForm("", tampered, now, []*Key{key}), ErrSignatureMissing)

	moved := *u
	moved.Path = "/api/report/v1/fpxrequest"
	require.ErrorIs(t, VerifyURL(&moved, now, []*Key{key}), ErrSignatureMismatch, "the path is signed")
}

// Hostile forms, signed in turn with one Key (so that each meets the field
// sets remembered from the ones before): SignForm signs what the
// reference signs, or fails where it fails, and the Client's POST body is
// the signed form's encoding byte for byte. Forms a query cannot make are
// among them: a key with no values, an empty key, exp or signature with
// several or no values.
func TestSignFormHostileMatchesReference(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rawKey, err := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	exp := strconv.FormatInt(now.Add(TTL).Unix(), 10)
	base := func(edit func(url.Values)) url.Values {
		f := url.Values{"agency": {"AG01"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}, "email": {"a@b.c"}, "returnUrl": {"https://shop.example/cb?x=1&y=2"}}
		if edit != nil {
			edit(f)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{name: "an order", form: base(nil)},
		{name: "the same keys again", form: base(func(f url.Values) { f.Set("amount", "11.00") })},
		{name: "a key with no values", form: base(func(f url.Values) { f["amount"] = []string{} })},
		{name: "an extra key with no values", form: base(func(f url.Values) { f["zz"] = nil })},
		{name: "a key with two values", form: base(func(f url.Values) { f.Add("amount", "12.00") })},
		{name: "an empty key", form: base(func(f url.Values) { f.Set("", "v") })},
		{name: "an empty value", form: base(func(f url.Values) { f.Set("email", "") })},
		{name: "exp given", form: base(func(f url.Values) { f.Set("exp", "1") })},
		{name: "exp twice", form: base(func(f url.Values) { f["exp"] = []string{"1", "2"} })},
		{name: "exp with no values", form: base(func(f url.Values) { f["exp"] = nil })},
		{name: "signature twice", form: base(func(f url.Values) { f["signature"] = []string{"a", "b"} })},
		{name: "signature and exp, a key gone", form: base(func(f url.Values) {
			f.Del("email")
			f.Set("signature", "x")
			f.Set("exp", "y")
		})},
		{name: "the order again", form: base(nil)},
		{name: "spaces, plus and unicode", form: base(func(f url.Values) {
			f.Set("name", "Siti Nur Aisyah 林美玲")
			f.Set("a b", "c+d e")
			f.Set("~*", "~*'()!")
		})},
		{name: "keys around signature", form: base(func(f url.Values) {
			f.Set("sig", "1")
			f.Set("signaturf", "2")
			f.Set("signature ", "3")
			f.Set("signaturE", "4")
		})},
		{name: "control and high bytes", form: base(func(f url.Values) { f.Set("k\x00", "\xff\xfe\x7f\t\n") })},
		{name: "nothing but signature", form: url.Values{"signature": {"x"}}},
		{name: "empty", form: url.Values{}},
		{name: "twenty keys, past the shapes", form: func() url.Values {
			f := url.Values{}
			for i := range 20 {
				f.Set(fmt.Sprint("k", 19-i), fmt.Sprint(" v", i))
			}
			return f
		}()},
		{name: "keys alike in their first eight bytes", form: base(func(f url.Values) {
			for _, k := range []string{"fpx_buyer_bank_id", "fpx_buyer_name", "fpx_buye", "fpx_buyer", "fpx_buyer_bank"} {
				f.Set(k, k)
			}
		})},
		{name: "keys that differ in NUL bytes", form: base(func(f url.Values) {
			for _, k := range []string{"a", "a\x00", "a\x00b", "a\x00\x00", "\x00", "\x00\x00\x00\x00\x00\x00\x00\x00\x01"} {
				f.Set(k, "v")
			}
		})},
		{name: "forty keys, past placement by rank", form: func() url.Values {
			f := url.Values{}
			for i := range 40 {
				f.Set(fmt.Sprint("key", 39-i), fmt.Sprint(i))
			}
			return f
		}()},
		{name: "a long value", form: base(func(f url.Values) { f.Set("long", strings.Repeat("v ", 40_000)) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, prefix := range []string{"", "/v2/checkout?"} {
				msg, refErr := refSignMessage(prefix, tc.form, exp)
				var got url.Values
				var err error
				if prefix == "" {
					got, err = SignForm(key, "", tc.form, now)
				} else {
					got, err = SignForm(key, "/v2/checkout"+"?", tc.form, now)
				}
				require.Equal(t, refErr == nil, err == nil, "SignForm error %v, reference %v", err, refErr)
				body, bodyErr := SignFormBody(key, prefix, tc.form, now)
				require.Equal(t, err == nil, bodyErr == nil, "signFormBody error %v", bodyErr)
				if err != nil {
					continue
				}
				require.Equal(t, rawHMACNew(rawKey, []byte(msg)), got.Get(FieldSignature))
				require.Equal(t, exp, got.Get(FieldExp))
				require.Equal(t, got.Encode(), body, "the POST body is the signed form's encoding")
			}
		})
	}
}
