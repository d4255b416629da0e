package paygate

import (
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzVerifyCallback: any body parsed as a form gives nil, ErrSignatureMissing
// or ErrSignatureMismatch, never a panic.
func FuzzVerifyCallback(f *testing.F) {
	key := mustKey(f, testKeyUUID)
	signed, err := SignCallback(key, url.Values{"status": {"success"}, "refNo": {"A~1"}, "amount": {"1.00"}})
	require.NoError(f, err)
	for _, s := range []string{signed.Encode(), "", "signature=", "signature=0123456789abcdef", "a=1&a=2&signature=x", "%zz", "signature=ABCDEF0123456789&refNo=a*b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		form, _ := url.ParseQuery(body)
		err := VerifyCallback(form, key)
		if err != nil && !errors.Is(err, ErrSignatureMissing) && !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("unexpected error %v", err)
		}
		_, _ = CallbackMessages(form)
	})
}

// FuzzSignVerifyRoundTrip: for any two fields, a signed callback verifies, and
// changing any byte of any field name or value, or any digit of the
// signature, is rejected. Outbound signing of the same fields never fails.
func FuzzSignVerifyRoundTrip(f *testing.F) {
	key := mustKey(f, testKeyUUID)
	f.Add("refNo", "INV~1", "amount", "1.00", uint16(0), uint8(3), uint8(1))
	f.Add("a b", "x*y", "", "", uint16(7), uint8(0), uint8(0))
	f.Add("fpx", `{"fpx_debit_auth_code":"00"}`, "status", "success", uint16(9), uint8(15), uint8(2))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, pos uint16, sigPos, what uint8) {
		form := url.Values{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}} {
			if kv[0] != fieldSignature {
				form.Set(kv[0], kv[1])
			}
		}
		now := time.Unix(1_800_000_000, 0)
		_, err := SignForm(key, form, now)
		require.NoError(t, err)
		_, err = SignURL(key, "https://gw.example/p?"+form.Encode(), now)
		require.NoError(t, err)

		signed, err := SignCallback(key, form)
		require.NoError(t, err)
		require.NoError(t, VerifyCallback(signed, key))

		keys := make([]string, 0, len(form))
		for k := range form {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		tampered := url.Values{}
		for k, v := range signed {
			tampered[k] = slices.Clone(v)
		}
		switch {
		case what%3 == 0 || len(keys) == 0: // a digit of the signature
			tampered.Set(fieldSignature, flipHex(signed.Get(fieldSignature), int(sigPos%16)))
		case what%3 == 1: // a byte of a value
			k := keys[int(pos)%len(keys)]
			tampered.Set(k, mutate(form.Get(k), int(pos)))
		default: // a byte of a name
			k := keys[int(pos)%len(keys)]
			nk := mutate(k, int(pos))
			if nk == fieldSignature || form.Has(nk) {
				return
			}
			tampered[nk] = tampered[k]
			delete(tampered, k)
		}
		require.ErrorIs(t, VerifyCallback(tampered, key), ErrSignatureMismatch)
	})
}

// mutate changes the byte of s at pos (mod len) to another value, or appends
// one to an empty string.
func mutate(s string, pos int) string {
	if s == "" {
		return "x"
	}
	b := []byte(s)
	b[pos%len(b)]++
	return string(b)
}
