package bench

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/url"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
)

// reusedHMAC is the floor of every signing figure: one HMAC-SHA256, reset
// and reused, over the finished message, hex-encoded.
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

// withResult is floor followed by result, which makes what the signing
// function's signature obliges any implementation to return (a fresh
// string, a fresh url.Values): the floor of its API rather than of its
// work.
func withResult(name string, floor side, result func()) side {
	return side{name, func() { floor.fn(); result() }}
}

// BenchmarkSign: SignURL and SignForm of the 10-field order, and
// VerifyCallback of the 11-field callback, each against the reused-HMAC
// floor over the same message. SignURL and SignForm also run against that
// floor plus making their result: the signed URL's string from its bytes
// ("x/floor+string"), and a maps.Clone of the signed url.Values, which
// shares its values and so is less than a copy ("x/floor+clone").
func BenchmarkSign(b *testing.B) {
	key := mustKey(b)
	now := time.Unix(1_800_000_000, 0)
	raw := orderURL()
	form := order()
	cb := callback(b, key, "INV-2026-000123~cart 88")
	b.Run("SignURL", func(b *testing.B) {
		msg, err := paygate.URLMessage(raw, now)
		if err != nil {
			b.Fatal(err)
		}
		signed, err := paygate.SignURL(key, raw, now)
		if err != nil {
			b.Fatal(err)
		}
		signedBytes, out := []byte(signed), ""
		floor := reusedHMAC([]byte(msg.Message))
		interleave(b, 200, side{"paygate", func() {
			if _, err := paygate.SignURL(key, raw, now); err != nil {
				b.Fatal(err)
			}
		}}, floor, withResult("floor+string", floor, func() { out = string(signedBytes) }))
		_ = out
	})
	b.Run("SignForm", func(b *testing.B) {
		msg, err := paygate.FormMessage(form, now)
		if err != nil {
			b.Fatal(err)
		}
		signed, err := paygate.SignForm(key, form, now)
		if err != nil {
			b.Fatal(err)
		}
		var out url.Values
		floor := reusedHMAC([]byte(msg.Message))
		interleave(b, 200, side{"paygate", func() {
			if _, err := paygate.SignForm(key, form, now); err != nil {
				b.Fatal(err)
			}
		}}, floor, withResult("floor+clone", floor, func() { out = maps.Clone(signed) }))
		_ = out
	})
	b.Run("VerifyCallback", func(b *testing.B) {
		msgs, err := paygate.CallbackMessages(cb)
		if err != nil {
			b.Fatal(err)
		}
		interleave(b, 200, side{"paygate", func() {
			if err := paygate.VerifyCallback(cb, key); err != nil {
				b.Fatal(err)
			}
		}}, reusedHMAC([]byte(msgs[0].Message)))
	})
}
