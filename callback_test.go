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
		split    bool
	}{
		{name: "Go form encoding, joined", encoding: "form"},
		{name: "PHP urlencode (~ as %7E), joined", encoding: "form-php"},
		{name: "WHATWG form, joined, upper-case hex", encoding: "form-whatwg", upper: true},
		{name: "PHP urlencode, split", encoding: "form-php", split: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			h := &CallbackHandler{Keys: []Key{key}, Logger: discardLogger(), Fulfil: func(_ context.Context, cb *Callback) error {
				got = append(got, cb.RefNo+" | "+cb.ExtraData)
				return nil
			}}
			f := callbackFields(sampleRef, "GW1", StatusSuccess, "00")
			f.Del("extraData")
			if tc.split {
				f.Set("refNo", "test123")
				f.Set("extraData", strings.TrimPrefix(sampleRef, "test123~"))
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
