package paygate_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// Per-request benchmarks over real loopback HTTP (BENCHMARKS.md "Per
// request"): what a merchant's server and client feel of the SDK, one
// request at a time on a kept-alive connection. create_order_bench_test.go
// holds the client's.

const benchRequestKey = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"

// benchSignedCallback is a typical signed direct callback (the 11 fields of
// docs/protocol.md A2, a ~400-byte fpx JSON) for refNo, form-encoded.
func benchSignedCallback(b *testing.B, key paygate.Key, refNo string) string {
	fpx := `{"fpx_debit_auth_code":"00","fpx_credit_auth_code":"00","fpx_buyer_bank_id":"MB2U0227",` +
		`"fpx_buyer_bank_branch":"MAYBANK2U","fpx_buyer_name":"SITI NUR AISYAH BINTI AHMAD",` +
		`"fpx_seller_ex_order_no":"20261122103015123456","fpx_seller_order_no":"INV-2026-000123",` +
		`"fpx_seller_txn_time":"20261122103015","fpx_txn_amount":"149.90","fpx_txn_currency":"MYR",` +
		`"fpx_fpx_txn_id":"2611221030150987","fpx_msg_type":"AC","fpx_checksum":"7F3A19C2E0B4"}`
	form := url.Values{
		"status": {"success"}, "orderNo": {"GW20261122000123"}, "refNo": {refNo},
		"amount": {"149.90"}, "addCharge": {"0.00"}, "fpxTxnId": {"2611221030150987"},
		"fpxTxnTime": {time.Now().In(paygate.MalaysiaTime()).Format(time.DateTime)}, "agency": {"AGENCY01"}, "extraData": {"cart 88"}, "fpx": {fpx},
	}
	signed, err := benchSign(key, form)
	if err != nil {
		b.Fatal(err)
	}
	return signed.Encode()
}

// BenchmarkRequestCallbackHTTP posts signed callbacks to a CallbackHandler
// (a no-op Fulfil, the in-memory Deduper) behind an httptest.Server, one at
// a time: a fresh refNo each request ("new"), or the same delivered again
// ("duplicate").
func BenchmarkRequestCallbackHTTP(b *testing.B) {
	key, err := paygate.ParseKey(benchRequestKey)
	if err != nil {
		b.Fatal(err)
	}
	for _, event := range []string{"new", "duplicate"} {
		b.Run(event, func(b *testing.B) {
			h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
			srv := httptest.NewServer(h)
			defer srv.Close()
			client := srv.Client()
			post := func(body string) {
				resp, err := client.Post(srv.URL+"/return", "application/x-www-form-urlencoded", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			bodies := []string{benchSignedCallback(b, key, "INV-2026-000123~cart 88")}
			if event == "new" {
				bodies = make([]string, b.N)
				for i := range bodies {
					bodies[i] = benchSignedCallback(b, key, fmt.Sprintf("INV-2026-%07d~cart 88", i))
				}
			} else {
				post(bodies[0]) // the first delivery fulfils
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				post(bodies[i%len(bodies)])
			}
		})
	}
}

// benchSign signs a callback as the gateway does.
var benchSign = gatewaytest.SignCallback
