package paygate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchOrder is a typical order: the fields of docs/protocol.md A1, whose table has seven
// rows: agency, refNo, amount, email, returnUrl, and the exp and signature
// that signing adds.
func benchOrder() url.Values {
	return url.Values{
		"agency":    {"AGENCY01"},
		"refNo":     {"INV-2026-000123~cart 88"},
		"amount":    {"149.90"},
		"email":     {"buyer+shop@example.com"},
		"returnUrl": {"https://shop.example.my/paygate/return?src=web"},
	}
}

// benchCallback is a typical direct callback: the 11 fields of docs/protocol.md A2, the
// fpx field a ~400-byte JSON string.
func benchCallback(b *testing.B, key Key) url.Values {
	fpx := `{"fpx_debit_auth_code":"00","fpx_credit_auth_code":"00","fpx_buyer_bank_id":"MB2U0227",` +
		`"fpx_buyer_bank_branch":"MAYBANK2U","fpx_buyer_name":"SITI NUR AISYAH BINTI AHMAD",` +
		`"fpx_seller_ex_order_no":"20261122103015123456","fpx_seller_order_no":"INV-2026-000123",` +
		`"fpx_seller_txn_time":"20261122103015","fpx_txn_amount":"149.90","fpx_txn_currency":"MYR",` +
		`"fpx_fpx_txn_id":"2611221030150987","fpx_msg_type":"AC","fpx_checksum":"7F3A19C2E0B4"}`
	form := url.Values{
		"status": {"success"}, "orderNo": {"GW20261122000123"}, "refNo": {"INV-2026-000123~cart 88"},
		"amount": {"149.90"}, "addCharge": {"0.00"}, "fpxTxnId": {"2611221030150987"},
		"fpxTxnTime": {"2026-11-22 10:30:15"}, "agency": {"AGENCY01"}, "extraData": {"cart 88"}, "fpx": {fpx},
	}
	signed, err := SignCallback(key, form)
	if err != nil {
		b.Fatal(err)
	}
	return signed
}

// rawHMACNew is the simple baseline: a fresh HMAC per message, hex, 16 chars.
func rawHMACNew(key []byte, msg []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// naiveSign is how a first attempt signs a POST: copy the values, add exp,
// sort keys, fmt the pairs, a fresh HMAC per call.
func naiveSign(rawKey []byte, form url.Values, now time.Time) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	out.Set("exp", strconv.FormatInt(now.Unix()+60, 10))
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%s", naiveRFC3986(k), naiveRFC3986(out.Get(k))))
	}
	out.Set("signature", rawHMACNew(rawKey, []byte(strings.Join(parts, "&"))))
	return out
}

func naiveRFC3986(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// naiveVerify is the naive signer's method applied to a callback, as the
// issue defines the baseline (url.Values, sort, fmt, hmac.New per call): copy
// the fields but signature, sort the keys, fmt the form-encoded pairs, a
// fresh HMAC, and compare.
func naiveVerify(rawKey []byte, form url.Values) bool {
	c := url.Values{}
	for k, v := range form {
		if k != "signature" {
			c[k] = append([]string(nil), v...)
		}
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%s", url.QueryEscape(k), url.QueryEscape(c.Get(k))))
	}
	sig := rawHMACNew(rawKey, []byte(strings.Join(parts, "&")))
	return hmac.Equal([]byte(sig), []byte(strings.ToLower(form.Get("signature"))))
}

func BenchmarkSignForm(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	rawKey, _ := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	form := benchOrder()
	now := time.Unix(1_800_000_000, 0)
	msg, _ := FormMessage(form, now)
	b.Run("paygate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := SignForm(key, form, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	benchBaselines(b, rawKey, []byte(msg.Message))
	b.Run("naive", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			naiveSign(rawKey, form, now)
		}
	})
}

func BenchmarkVerifyCallback(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	rawKey, _ := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	form := benchCallback(b, key)
	msgs, _ := CallbackMessages(form)
	b.Run("paygate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := VerifyCallback(form, key); err != nil {
				b.Fatal(err)
			}
		}
	})
	benchBaselines(b, rawKey, []byte(msgs[0].Message))
	b.Run("naive", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !naiveVerify(rawKey, form) {
				b.Fatal("naive verify failed")
			}
		}
	})
}

// benchBaselines times HMAC-SHA256 plus hex of the already-built message: the
// simple way (hmac.New per call) and the floor (one HMAC, reset and reused).
func benchBaselines(b *testing.B, rawKey, msg []byte) {
	b.Run("rawHMAC", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rawHMACNew(rawKey, msg)
		}
	})
	b.Run("reusedHMAC", func(b *testing.B) {
		b.ReportAllocs()
		m := hmac.New(sha256.New, rawKey)
		sum := make([]byte, 0, sha256.Size)
		var dst [64]byte
		for i := 0; i < b.N; i++ {
			m.Reset()
			m.Write(msg)
			sum = m.Sum(sum[:0])
			hex.Encode(dst[:], sum)
		}
	})
}

// ratioBaseline is one implementation timed against the subject.
type ratioBaseline struct {
	name string
	fn   func()
}

// benchRatios times the subject and each baseline in alternating batches of
// batch calls, so that the drift of a shared machine falls on all of them
// alike, and reports subject time / baseline time for each ("x/<name>").
func benchRatios(b *testing.B, batch int, subject func(), baselines ...ratioBaseline) {
	var sub time.Duration
	base := make([]time.Duration, len(baselines))
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for j := 0; j < batch; j++ {
			subject()
		}
		sub += time.Since(start)
		for k, bl := range baselines {
			start = time.Now()
			for j := 0; j < batch; j++ {
				bl.fn()
			}
			base[k] += time.Since(start)
		}
	}
	for k, bl := range baselines {
		b.ReportMetric(float64(sub)/float64(base[k]), "x/"+bl.name)
	}
}

// BenchmarkSigningRatios reports the ratios directly: paygate's
// SignForm and VerifyCallback against raw HMAC (hmac.New per call), the
// reused HMAC floor, and the naive implementations, interleaved.
func BenchmarkSigningRatios(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	rawKey, _ := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	now := time.Unix(1_800_000_000, 0)
	order := benchOrder()
	orderMsg, _ := FormMessage(order, now)
	cb := benchCallback(b, key)
	cbMsgs, _ := CallbackMessages(cb)
	reused := func(msg []byte) func() {
		m := hmac.New(sha256.New, rawKey)
		sum := make([]byte, 0, sha256.Size)
		var dst [64]byte
		return func() {
			m.Reset()
			m.Write(msg)
			sum = m.Sum(sum[:0])
			hex.Encode(dst[:], sum)
		}
	}
	b.Run("SignForm", func(b *testing.B) {
		msg := []byte(orderMsg.Message)
		benchRatios(b, 200, func() { _, _ = SignForm(key, order, now) },
			ratioBaseline{"rawHMAC", func() { rawHMACNew(rawKey, msg) }},
			ratioBaseline{"reusedHMAC", reused(msg)},
			ratioBaseline{"naive", func() { naiveSign(rawKey, order, now) }})
	})
	b.Run("VerifyCallback", func(b *testing.B) {
		msg := []byte(cbMsgs[0].Message)
		benchRatios(b, 200, func() { _ = VerifyCallback(cb, key) },
			ratioBaseline{"rawHMAC", func() { rawHMACNew(rawKey, msg) }},
			ratioBaseline{"reusedHMAC", reused(msg)},
			ratioBaseline{"naive", func() { naiveVerify(rawKey, cb) }})
	})
	// The same with every call a field set the state does not remember
	// (maxShapes+1 sets in turn): the general path's cost.
	b.Run("VerifyCallbackShapeMiss", func(b *testing.B) {
		msg := []byte(cbMsgs[0].Message)
		var forms [maxShapes + 1]url.Values
		for i := range forms {
			f := url.Values{}
			for k, v := range cb {
				f[k] = v
			}
			f.Set(fmt.Sprint("extra", i), "1")
			forms[i], _ = SignCallback(key, f)
		}
		i := 0
		benchRatios(b, 200, func() { i++; _ = VerifyCallback(forms[i%len(forms)], key) },
			ratioBaseline{"rawHMAC", func() { rawHMACNew(rawKey, msg) }},
			ratioBaseline{"naive", func() { naiveVerify(rawKey, cb) }})
	})
}

// benchOrder10 is the realistic 10-field order of the peer benchmarks
// (bench/): a unicode name, a description with spaces, two URLs.
func benchOrder10() url.Values {
	o := benchOrder()
	o.Set("paymentCategory", "ZAKAT")
	o.Set("name", "Siti Nur Aisyah binti Ahmad 林美玲")
	o.Set("phone", "+60123456789")
	o.Set("description", "Zakat fitrah 2026 for 3 dependants, paid online")
	o.Set("returnUrl", "https://shop.example.my/paygate/return?src=web&lang=ms")
	o.Set("callbackUrl", "https://shop.example.my/paygate/callback")
	return o
}

// BenchmarkClientPOST times the Client's own POST path, signing the
// 10-field order and encoding the body (what each attempt of CreateOrder
// and QR does before net/http), against the reused-HMAC floor over the
// same message, interleaved ("x/reusedHMAC"), against that floor plus
// making the body's string from its bytes, the least any way of returning
// it adds ("x/reusedHMAC+string"), and against the way it was built
// before, SignForm then url.Values.Encode ("x/SignForm+Encode"); and
// SignForm against the floor, and against the floor plus a maps.Clone of
// the signed url.Values, less than the copy it must return
// ("x/reusedHMAC+clone").
func BenchmarkClientPOST(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	rawKey, _ := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	c, err := NewClient(WithKey(key), WithCheckoutURL("https://gw.example.my"))
	if err != nil {
		b.Fatal(err)
	}
	order := benchOrder10()
	now := time.Unix(1_800_000_000, 0)
	msg, _ := FormMessage(order, now)
	m := hmac.New(sha256.New, rawKey)
	sum := make([]byte, 0, sha256.Size)
	var dst [64]byte
	floor := ratioBaseline{"reusedHMAC", func() {
		m.Reset()
		m.Write([]byte(msg.Message))
		sum = m.Sum(sum[:0])
		hex.Encode(dst[:], sum)
	}}
	plus := func(name string, result func()) ratioBaseline {
		return ratioBaseline{name, func() { floor.fn(); result() }}
	}
	b.Run("body", func(b *testing.B) {
		b.ReportAllocs()
		body, err := c.signedPOSTBody("https://gw.example.my/v2/checkout", order, now)
		if err != nil {
			b.Fatal(err)
		}
		bodyBytes, out := []byte(body), ""
		benchRatios(b, 200, func() {
			if _, err := c.signedPOSTBody("https://gw.example.my/v2/checkout", order, now); err != nil {
				b.Fatal(err)
			}
		}, floor, plus("reusedHMAC+string", func() { out = string(bodyBytes) }), ratioBaseline{"SignForm+Encode", func() {
			signed, err := SignForm(key, order, now)
			if err != nil {
				b.Fatal(err)
			}
			_ = signed.Encode()
		}})
		_ = out
	})
	b.Run("SignForm", func(b *testing.B) {
		b.ReportAllocs()
		signed, err := SignForm(key, order, now)
		if err != nil {
			b.Fatal(err)
		}
		var out url.Values
		benchRatios(b, 200, func() {
			if _, err := SignForm(key, order, now); err != nil {
				b.Fatal(err)
			}
		}, floor, plus("reusedHMAC+clone", func() { out = maps.Clone(signed) }))
		_ = out
	})
}
