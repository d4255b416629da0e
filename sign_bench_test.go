package paygate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/signing"
	"github.com/paygate-go/paygate/internal/testbound"
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
		"fpxTxnTime": {time.Now().In(MalaysiaTime()).Format(time.DateTime)}, "agency": {"AGENCY01"}, "extraData": {"cart 88"}, "fpx": {fpx},
	}
	signed, err := signCallback(key, form)
	if err != nil {
		b.Fatal(err)
	}
	return signed
}

// rawHMACNew is the bare baseline: a fresh HMAC per message (hmac.New),
// hex, 16 characters.
func rawHMACNew(key []byte, msg []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// peersSign signs a POST the way stripe-go and go-github sign: copy the
// values, add exp, url.Values.Encode, a fresh HMAC, hex.
func peersSign(rawKey []byte, form url.Values, now time.Time) url.Values {
	out := make(url.Values, len(form)+2)
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	out.Set("exp", strconv.FormatInt(now.Unix()+60, 10))
	out.Set("signature", rawHMACNew(rawKey, []byte(out.Encode())))
	return out
}

// peersVerify verifies a callback the peers' way: copy the fields but
// signature, url.Values.Encode, a fresh HMAC, hex, hmac.Equal.
func peersVerify(rawKey []byte, form url.Values) bool {
	c := make(url.Values, len(form))
	for k, v := range form {
		if k != "signature" {
			c[k] = v
		}
	}
	sig := rawHMACNew(rawKey, []byte(c.Encode()))
	return hmac.Equal([]byte(sig), []byte(strings.ToLower(form.Get("signature"))))
}

// BenchmarkSigning reports the signing ratios: SignForm of the 10-field
// order (returning its copy) and VerifyCallback of the 11-field callback,
// each against a bare hmac.New HMAC of the same message ("x/hmacNew") and
// against the peers' way ("x/peers"), interleaved; and the Client's POST
// body against SignForm followed by Encode.
func BenchmarkSigning(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	rawKey, _ := hex.DecodeString(strings.ReplaceAll(testKeyUUID, "-", ""))
	now := time.Unix(1_800_000_000, 0)
	order := benchOrder10()
	orderMsg, err := signing.FormMessage("", order, now)
	if err != nil {
		b.Fatal(err)
	}
	cb := benchCallback(b, key)
	cbMsgs, err := signing.CallbackMessages(cb)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("SignForm", func(b *testing.B) {
		msg := []byte(orderMsg.Text)
		testbound.BenchRatios(b, 200, func() { _, _ = SignForm(key, order, now) },
			testbound.RatioBaseline{Name: "hmacNew", Fn: func() { rawHMACNew(rawKey, msg) }},
			testbound.RatioBaseline{Name: "peers", Fn: func() { peersSign(rawKey, order, now) }})
	})
	b.Run("VerifyCallback", func(b *testing.B) {
		msg := []byte(cbMsgs[0].Text)
		testbound.BenchRatios(b, 200, func() { _ = VerifyCallback(cb, key) },
			testbound.RatioBaseline{Name: "hmacNew", Fn: func() { rawHMACNew(rawKey, msg) }},
			testbound.RatioBaseline{Name: "peers", Fn: func() { peersVerify(rawKey, cb) }})
	})
	b.Run("ClientPOSTBody", func(b *testing.B) {
		c, err := NewClient(WithKey(key), WithCheckoutURL("https://gw.example.my"))
		if err != nil {
			b.Fatal(err)
		}
		const target = "https://gw.example.my/v2/checkout"
		testbound.BenchRatios(b, 200, func() { _, _ = c.signedPOSTBody(target, order, now) },
			testbound.RatioBaseline{Name: "SignForm+Encode", Fn: func() {
				signed, _ := SignForm(key, order, now)
				_ = signed.Encode()
			}})
	})
}

// BenchmarkVerifyCallback is VerifyCallback alone, with its allocations.
func BenchmarkVerifyCallback(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	form := benchCallback(b, key)
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifyCallback(form, key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignForm is SignForm alone, with its allocations.
func BenchmarkSignForm(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	form := benchOrder10()
	now := time.Unix(1_800_000_000, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignForm(key, form, now); err != nil {
			b.Fatal(err)
		}
	}
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
