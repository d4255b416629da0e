package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testKeyUUID is the API key of the tests.
const testKeyUUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"

// mustKey parses uuid or fails the test.
func mustKey(t testing.TB, uuid string) *Key {
	t.Helper()
	k, err := ParseKey(uuid)
	require.NoError(t, err)
	return k
}

// rawHMACNew is the signature of msg the plain way: a fresh HMAC, hex, the
// first 16 characters.
func rawHMACNew(key, msg []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// naiveRFC3986 is RFC 3986 encoding the plain way: url.QueryEscape with
// its + for a space made %20 (QueryEscape writes a literal + as %2B).
func naiveRFC3986(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func TestParseSignature(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"0123456789abcdef", "0123456789abcdef", true},
		{"0123456789ABCDEF", "0123456789abcdef", true},
		{"0123456789abcde", "", false},
		{"0123456789abcdef0", "", false},
		{"0123456789abcdeg", "", false},
		{"", "", false},
	} {
		got, ok := ParseSignature(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		if ok {
			require.Equal(t, tc.want, string(got[:]))
		}
	}
}

func TestKeySignsLikeHMAC(t *testing.T) {
	k := mustKey(t, testKeyUUID)
	raw, err := hex.DecodeString("3f2504e04f8911d39a0c0305e82c3301")
	require.NoError(t, err)
	for _, msg := range []string{"", "a=1", "refNo=A%7EB&status=success"} {
		got := k.Sign([]byte(msg))
		require.Equal(t, rawHMACNew(raw, []byte(msg)), string(got[:]))
	}
}

// testOrder is a typical order: the fields of docs/protocol.md A1.
func testOrder() url.Values {
	return url.Values{
		"agency":    {"AGENCY01"},
		"refNo":     {"INV-2026-000123~cart 88"},
		"amount":    {"149.90"},
		"email":     {"buyer+shop@example.com"},
		"returnUrl": {"https://shop.example.my/paygate/return?src=web"},
	}
}
