package bench

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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

// BenchmarkSign: SignURL and SignForm of the 10-field order, and
// VerifyCallback of the 11-field callback, each against the reused-HMAC
// floor over the same message.
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
		interleave(b, 200, side{"paygate", func() {
			if _, err := paygate.SignURL(key, raw, now); err != nil {
				b.Fatal(err)
			}
		}}, reusedHMAC([]byte(msg.Message)))
	})
	b.Run("SignForm", func(b *testing.B) {
		msg, err := paygate.FormMessage(form, now)
		if err != nil {
			b.Fatal(err)
		}
		interleave(b, 200, side{"paygate", func() {
			if _, err := paygate.SignForm(key, form, now); err != nil {
				b.Fatal(err)
			}
		}}, reusedHMAC([]byte(msg.Message)))
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
