package bench

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// The API key of docs/protocol.md's examples: a UUID, 16 raw bytes.
const keyUUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"

// rawKey is keyUUID's 16 bytes, the HMAC key of the floors.
var rawKey = []byte{0x3f, 0x25, 0x04, 0xe0, 0x4f, 0x89, 0x11, 0xd3, 0x9a, 0x0c, 0x03, 0x05, 0xe8, 0x2c, 0x33, 0x01}

func mustKey(b testing.TB) paygate.Key {
	k, err := paygate.ParseKey(keyUUID)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// order is a realistic 10-field order: a unicode name, a description with
// spaces, two URLs.
func order() url.Values {
	return url.Values{
		"agency":          {"AGENCY01"},
		"refNo":           {"INV-2026-000123~cart 88"},
		"amount":          {"149.90"},
		"paymentCategory": {"ZAKAT"},
		"name":            {"Siti Nur Aisyah binti Ahmad 林美玲"},
		"email":           {"buyer+shop@example.com"},
		"phone":           {"+60123456789"},
		"description":     {"Zakat fitrah 2026 for 3 dependants, paid online"},
		"returnUrl":       {"https://shop.example.my/paygate/return?src=web&lang=ms"},
		"callbackUrl":     {"https://shop.example.my/paygate/callback"},
	}
}

// orderURL is the order as a GET URL to sign.
func orderURL() string {
	return "https://checkout.example.my/v2/pay?" + order().Encode()
}

// fpxField is the callback's fpx JSON, padded to about 478 bytes.
func fpxField() string {
	fpx := `{"fpx_debit_auth_code":"00","fpx_credit_auth_code":"00","fpx_buyer_bank_id":"MB2U0227",` +
		`"fpx_buyer_bank_branch":"MAYBANK2U","fpx_buyer_name":"SITI NUR AISYAH BINTI AHMAD",` +
		`"fpx_seller_ex_order_no":"20261122103015123456","fpx_seller_order_no":"INV-2026-000123",` +
		`"fpx_seller_txn_time":"20261122103015","fpx_txn_amount":"149.90","fpx_txn_currency":"MYR",` +
		`"fpx_fpx_txn_id":"2611221030150987","fpx_msg_type":"AC","fpx_checksum":"7F3A19C2E0B4",` +
		`"fpx_note":"`
	return fpx + strings.Repeat("x", 478-len(fpx)-2) + `"}`
}

// callback is an 11-field signed callback (signature included) for refNo.
func callback(b testing.TB, key paygate.Key, refNo string) url.Values {
	form := url.Values{
		"status": {"success"}, "orderNo": {"GW20261122000123"}, "refNo": {refNo},
		"amount": {"149.90"}, "addCharge": {"0.00"}, "fpxTxnId": {"2611221030150987"},
		"fpxTxnTime": {time.Now().In(paygate.MalaysiaTime()).Format(time.DateTime)}, "agency": {"AGENCY01"}, "extraData": {"cart 88"}, "fpx": {fpxField()},
	}
	signed, err := gatewaytest.SignCallback(key, form)
	if err != nil {
		b.Fatal(err)
	}
	if len(signed) != 11 || len(signed.Get("fpx")) != 478 {
		b.Fatalf("callback has %d fields, fpx %d bytes", len(signed), len(signed.Get("fpx")))
	}
	return signed
}
