package bench

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
)

// hmacNew is the bare baseline of the signing goals: a fresh HMAC
// (hmac.New) over the finished message, hex, 16 characters.
func hmacNew(msg []byte) side {
	return side{"hmacNew", func() { signHex(msg) }}
}

// signHex is HMAC-SHA256 of msg under rawKey with hmac.New, hex, the first
// 16 characters.
func signHex(msg []byte) string {
	m := hmac.New(sha256.New, rawKey)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// reusedHMAC is one HMAC-SHA256, reset and reused, over the finished
// message: the floor, kept as information (no goal is set against it).
func reusedHMAC(msg []byte) side {
	m := hmac.New(sha256.New, rawKey)
	sum := make([]byte, 0, sha256.Size)
	var dst [64]byte
	return side{"floor", func() {
		m.Reset()
		m.Write(msg)
		sum = m.Sum(sum[:0])
		hex.Encode(dst[:], sum)
	}}
}

// rfc3986 is RFC 3986 encoding the plain way: url.QueryEscape with its +
// for a space made %20.
func rfc3986(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// outboundMessage is the outbound message of form with exp, written here
// apart from the SDK: the fields but signature, exp added, sorted, RFC 3986
// encoded, after prefix.
func outboundMessage(prefix string, form url.Values, exp string) string {
	keys := []string{"exp"}
	for k := range form {
		if k != "exp" && k != "signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := exp
		if k != "exp" {
			v = form.Get(k)
		}
		parts[i] = rfc3986(k) + "=" + rfc3986(v)
	}
	return prefix + strings.Join(parts, "&")
}

// peersSign signs a POST the way stripe-go and go-github sign: copy the
// values, add exp, url.Values.Encode, hmac.New, hex.
func peersSign(form url.Values, now time.Time) url.Values {
	out := make(url.Values, len(form)+2)
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	out.Set("exp", strconv.FormatInt(now.Unix()+60, 10))
	out.Set("signature", signHex([]byte(out.Encode())))
	return out
}

// peersSignURL signs a GET the peers' way: parse, add exp, Encode, hmac.New,
// hex, and the URL again.
func peersSignURL(raw string, now time.Time) string {
	u, _ := url.Parse(raw)
	q := u.Query()
	q.Set("exp", strconv.FormatInt(now.Unix()+60, 10))
	msg := u.Path + "?" + q.Encode()
	return u.Scheme + "://" + u.Host + msg + "&signature=" + signHex([]byte(msg))
}

// peersVerify verifies a callback the peers' way: the fields but signature,
// url.Values.Encode, hmac.New, hex, hmac.Equal.
func peersVerify(form url.Values) bool {
	c := make(url.Values, len(form))
	for k, v := range form {
		if k != "signature" {
			c[k] = v
		}
	}
	sig := signHex([]byte(c.Encode()))
	return hmac.Equal([]byte(sig), []byte(strings.ToLower(form.Get("signature"))))
}

// BenchmarkSign: SignURL and SignForm of the 10-field order (SignForm
// returning its copy), and VerifyCallback of the 11-field callback with a
// 478-byte fpx, each against a bare hmac.New HMAC of the same message
// ("x/hmacNew", the goal's baseline), the peers' way ("x/peers") and the
// reused-HMAC floor ("x/floor", information only), interleaved.
func BenchmarkSign(b *testing.B) {
	key := mustKey(b)
	now := time.Unix(1_800_000_000, 0)
	exp := strconv.FormatInt(now.Unix()+60, 10)
	raw := orderURL()
	form := order()
	cb := callback(b, key, "INV-2026-000123~cart 88")
	b.Run("SignURL", func(b *testing.B) {
		u, _ := url.Parse(raw)
		msg := []byte(outboundMessage(u.Path+"?", u.Query(), exp))
		if signed, err := paygate.SignURL(key, raw, now); err != nil || !strings.HasSuffix(signed, "&signature="+signHex(msg)) {
			b.Fatalf("SignURL does not sign the message the baseline signs (%v)", err)
		}
		interleave(b, 200, side{"paygate", func() {
			if _, err := paygate.SignURL(key, raw, now); err != nil {
				b.Fatal(err)
			}
		}}, hmacNew(msg), side{"peers", func() { peersSignURL(raw, now) }}, reusedHMAC(msg))
	})
	b.Run("SignForm", func(b *testing.B) {
		msg := []byte(outboundMessage("", form, exp))
		if signed, err := paygate.SignForm(key, form, now); err != nil || signed.Get("signature") != signHex(msg) {
			b.Fatalf("SignForm does not sign the message the baseline signs (%v)", err)
		}
		interleave(b, 200, side{"paygate", func() {
			if _, err := paygate.SignForm(key, form, now); err != nil {
				b.Fatal(err)
			}
		}}, hmacNew(msg), side{"peers", func() { peersSign(form, now) }}, reusedHMAC(msg))
	})
	b.Run("VerifyCallback", func(b *testing.B) {
		fields := url.Values{}
		for k, v := range cb {
			if k != "signature" {
				fields[k] = v
			}
		}
		msg := []byte(fields.Encode()) // the canonical callback message
		interleave(b, 200, side{"paygate", func() {
			if err := paygate.VerifyCallback(cb, key); err != nil {
				b.Fatal(err)
			}
		}}, hmacNew(msg), side{"peers", func() {
			if !peersVerify(cb) {
				b.Fatal("peers' verify failed")
			}
		}}, reusedHMAC(msg))
	})
}
