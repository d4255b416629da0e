package signing

import (
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
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
		err := VerifyCallback(form, []*Key{key})
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
			if kv[0] != FieldSignature {
				form.Set(kv[0], kv[1])
			}
		}
		now := time.Unix(1_800_000_000, 0)
		_, err := SignForm(key, "", form, now)
		require.NoError(t, err)
		_, err = SignURL(key, "https://gw.example/p?"+form.Encode(), now)
		require.NoError(t, err)

		signed, err := SignCallback(key, form)
		require.NoError(t, err)
		require.NoError(t, VerifyCallback(signed, []*Key{key}))

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
			tampered.Set(FieldSignature, flipHex(signed.Get(FieldSignature), int(sigPos%16)))
		case what%3 == 1: // a byte of a value
			k := keys[int(pos)%len(keys)]
			tampered.Set(k, mutate(form.Get(k), int(pos)))
		default: // a byte of a name
			k := keys[int(pos)%len(keys)]
			nk := mutate(k, int(pos))
			if nk == FieldSignature || form.Has(nk) {
				return
			}
			tampered[nk] = tampered[k]
			delete(tampered, k)
		}
		require.ErrorIs(t, VerifyCallback(tampered, []*Key{key}), ErrSignatureMismatch)
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

// refSignMessage is the straightforward reference of the outbound signing
// message, kept to check the fast paths against: the fields of form but
// signature and exp, each single-valued (else an error), exp added, keys
// sorted with sort.Strings, each key and value RFC 3986 encoded with
// url.QueryEscape (its + for a space made %20), joined with & after prefix.
func refSignMessage(prefix string, form url.Values, exp string) (string, error) {
	keys := []string{FieldExp}
	for k, v := range form {
		if k == FieldSignature || k == FieldExp || len(v) == 0 {
			continue
		}
		if len(v) > 1 {
			return "", ErrMultipleValues
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := exp
		if k != FieldExp {
			v = form.Get(k)
		}
		parts[i] = naiveRFC3986(k) + "=" + naiveRFC3986(v)
	}
	return prefix + strings.Join(parts, "&"), nil
}

// refSignURL is SignURL the straightforward way: url.Parse, the checks,
// url.ParseQuery, refSignMessage, a fresh HMAC.
func refSignURL(rawKey []byte, rawURL string, now time.Time) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" || u.Fragment != "" || u.RawFragment != "" || u.User != nil {
		return "", errors.New("not a URL SignURL takes")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", err
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	msg, err := refSignMessage(path+"?", q, strconv.FormatInt(now.Add(TTL).Unix(), 10))
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + u.Host + msg + "&signature=" + rawHMACNew(rawKey, []byte(msg)), nil
}

// FuzzSignReference: SignURL (fast path and general way), SignForm and
// SignFormWithPath sign what the reference implementation signs, and fail
// where it fails, for any URL, any query on a plain URL, and any form.
func FuzzSignReference(f *testing.F) {
	key := mustKey(f, testKeyUUID)
	rawKey, err := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	require.NoError(f, err)
	order := testOrder()
	order.Set("name", "Siti Nur Aisyah 林美玲")
	for _, seed := range [][2]string{
		{"https://gw.example.my/v2/pay?" + order.Encode(), order.Encode()},
		{"https://gw.example.my:8443/a/b~c/?x=1+2&y=%7e%2a%41", "a=%e6%9e%97&b=+&c=%2B&d=*~"},
		{"HTTPS://gw.example.my/p?a=1", "a=1&a=2"},
		{"https://gw.example.my/p q?a", "a&=b&=&&c="},
		{"https://u@gw/p", "exp=1&exp=2&signature=x&signature=y&z=1"},
		{"https://gw/p#f", "a=%zz"},
		{"https://gw/%41?x=%", "a;b=1"},
		{"http://[::1]:80/?k=v", "k=v\x00"},
		{"https://gw.example.my?a=1", "%41=1"},
		{"mailto:x@y", "a=1#x"},
		{"https://gw.example.my/p?a=b=c&b=%41%e6&c=%2a+", "=x&a=1&exp=%zz&z=2"},
		{"https://gw.example.my/p?a=1&exp=%&signature=", "a=!*'()&b=%7E&c=%7e&d=%C3%A9"},
	} {
		f.Add(seed[0], seed[1])
	}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, rawURL, query string) {
		for _, u := range []string{rawURL, "https://gw.example.my/v2/pay?" + query} {
			got, err := SignURL(key, u, now)
			want, refErr := refSignURL(rawKey, u, now)
			require.Equal(t, refErr == nil, err == nil, "%q: SignURL error %v, reference %v", u, err, refErr)
			require.Equal(t, want, got, "%q", u)
		}
		form, parseErr := url.ParseQuery(query)
		if parseErr != nil {
			return
		}
		exp := strconv.FormatInt(now.Add(TTL).Unix(), 10)
		for _, prefix := range []string{"", "/v2/checkout?"} {
			msg, refErr := refSignMessage(prefix, form, exp)
			var got url.Values
			var err error
			if prefix == "" {
				got, err = SignForm(key, "", form, now)
			} else {
				got, err = SignForm(key, "/v2/checkout"+"?", form, now)
			}
			require.Equal(t, refErr == nil, err == nil, "%q: SignForm error %v, reference %v", query, err, refErr)
			if err != nil {
				continue
			}
			require.Equal(t, rawHMACNew(rawKey, []byte(msg)), got.Get(FieldSignature), "%q", query)
			require.Equal(t, exp, got.Get(FieldExp))
			body, err := SignFormBody(key, prefix, form, now)
			require.NoError(t, err)
			require.Equal(t, got.Encode(), body, "the Client's POST body is the signed form's encoding")
		}
	})
}
