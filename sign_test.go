package paygate

import (
	"encoding/json"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/signing"
	"github.com/stretchr/testify/require"
)

// signingVector is the part of an entry of testdata/signing/vectors.json
// (written by gen_vectors.py with Python's urllib and hmac) that the public
// functions reach; internal/signing's tests read the rest.
type signingVector struct {
	Key    string      `json:"key"`
	Now    int64       `json:"now"`
	Params [][2]string `json:"params"`
	Get    struct {
		URL    string `json:"url"`
		Signed string `json:"signed"`
	} `json:"get"`
	Post struct {
		Signature string `json:"signature"`
	} `json:"post"`
	Callback []struct {
		Encoding  string `json:"encoding"`
		Signature string `json:"signature"`
	} `json:"callback"`
}

// TestPublicSigningMatchesVectors: SignURL, SignForm, the gateway's
// callback signature (signCallback) and VerifyCallback give the
// independent generator's results, the callback
// encoder variants included: each variant's signature verifies, RFC 3986
// (space as %20) among them.
func TestPublicSigningMatchesVectors(t *testing.T) {
	variants := map[string]int{}
	raw, err := os.ReadFile("testdata/signing/vectors.json")
	require.NoError(t, err)
	var vs []signingVector
	require.NoError(t, json.Unmarshal(raw, &vs))
	require.GreaterOrEqual(t, len(vs), 200)
	for i, v := range vs {
		key := mustKey(t, v.Key)
		now := time.Unix(v.Now, 0)
		form := url.Values{}
		for _, p := range v.Params {
			form.Set(p[0], p[1])
		}
		got, err := SignURL(key, v.Get.URL, now)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, v.Get.Signed, got, "vector %d", i)

		signed, err := SignForm(key, form, now)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, v.Post.Signature, signed.Get("signature"), "vector %d", i)

		cb, err := signCallback(key, form)
		require.NoError(t, err, "vector %d", i)
		require.Equal(t, v.Callback[0].Signature, cb.Get("signature"), "vector %d", i)
		for _, c := range v.Callback {
			variants[c.Encoding]++
			cb.Set("signature", strings.ToUpper(c.Signature))
			require.NoError(t, VerifyCallback(cb, key), "vector %d %s", i, c.Encoding)
		}
	}
	for _, e := range []string{"form-php", "form-whatwg", "rfc3986"} {
		require.Greater(t, variants[e], 50, "vectors must exercise the %s variant", e)
	}
}

// The zero Key, and no key at all, are refused by every public function,
// before anything is signed.
func TestSigningRefusesTheZeroKey(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Unix(1_800_000_000, 0)
	form := url.Values{"agency": {"AG"}}
	signed, err := signCallback(key, form)
	require.NoError(t, err)

	_, err = SignURL(Key{}, "https://gw.example/", now)
	require.ErrorIs(t, err, ErrInvalidKey)
	_, err = SignForm(Key{}, form, now)
	require.ErrorIs(t, err, ErrInvalidKey)
	require.ErrorIs(t, VerifyCallback(signed), ErrInvalidKey)
	require.ErrorIs(t, VerifyCallback(signed, key, Key{}), ErrInvalidKey)
	require.NoError(t, VerifyCallback(signed, key))
}

// VerifyCallback tries every key, in order: five keys (more than it keeps
// on the stack) with the right one last.
func TestVerifyCallbackRotation(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	signed, err := signCallback(key, url.Values{"refNo": {"INV-1~x"}, "status": {"success"}})
	require.NoError(t, err)
	var keys []Key
	for _, u := range []string{"1", "2", "3", "4"} {
		keys = append(keys, mustKey(t, "00000000-0000-0000-0000-00000000000"+u))
	}
	require.ErrorIs(t, VerifyCallback(signed, keys...), ErrSignatureMismatch)
	require.NoError(t, VerifyCallback(signed, append(keys, key)...))
}

// signCallback signs form as the gateway does: gatewaytest.SignCallback,
// which this package's tests cannot import.
func signCallback(key Key, form url.Values) (url.Values, error) {
	if !key.valid() {
		return nil, errZeroKey
	}
	return signing.SignCallback(key.k, form)
}

// raceDetector reports whether the test binary was built with -race, under
// which sync.Pool drops a share of what it is given, so that counts of
// allocations mean nothing.
func raceDetector() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// VerifyCallback allocates nothing once its Key's state is warm: a
// genuine callback, one whose ~ and * make it try the other encoders, one
// signed in RFC 3986 that matches only the fourth candidate, a mismatch,
// and a rotation of two keys (without -race only: the race
// detector's sync.Pool drops states on purpose).
func TestVerifyCallbackAllocatesNothing(t *testing.T) {
	if raceDetector() {
		t.Skip("sync.Pool drops states under -race")
	}
	key := mustKey(t, testKeyUUID)
	old := mustKey(t, "00000000-0000-0000-0000-000000000001")
	signed := func(refNo string, k Key) url.Values {
		f, err := signCallback(k, callbackFields(refNo, "GW1", StatusSuccess, "00"))
		require.NoError(t, err)
		return f
	}
	for _, tc := range []struct {
		name string
		form url.Values
		keys []Key
		want error
	}{
		{name: "genuine", form: signed("INV-1", key), keys: []Key{key}},
		{name: "~ and *: the other encoders tried", form: signed("INV-1~cart*7", key), keys: []Key{key}},
		{name: "a space signed as %20: four candidates", form: rfc3986Signed(t, "INV-1~cart*7 blue", key), keys: []Key{key}},
		{name: "mismatch", form: signed("INV-1~cart*7", old), keys: []Key{key}, want: ErrSignatureMismatch},
		{name: "rotation: the second key", form: signed("INV-1", old), keys: []Key{key, old}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, VerifyCallback(tc.form, tc.keys...), tc.want)
			allocs := testing.AllocsPerRun(200, func() { _ = VerifyCallback(tc.form, tc.keys...) })
			require.Zero(t, allocs)
		})
	}
}

// rfc3986Signed is the callback of refNo signed as the public PHP client
// signs (http_build_query with PHP_QUERY_RFC3986): Go's form encoding with
// each + (only ever a space there) written as %20.
func rfc3986Signed(t *testing.T, refNo string, k Key) url.Values {
	t.Helper()
	f := callbackFields(refNo, "GW1", StatusSuccess, "00")
	sig := k.k.Sign([]byte(strings.ReplaceAll(f.Encode(), "+", "%20")))
	f.Set("signature", string(sig[:]))
	return f
}
