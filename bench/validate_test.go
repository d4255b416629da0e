package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bytedance/sonic"
	gojson "github.com/goccy/go-json"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/paygate-go/paygate/zakat"
)

// batchBody is a valid webhook body of n fully populated transactions
// (zakat fitrah, so the rate x dependants rule runs), distinct ordernos.
func batchBody(b testing.TB, n int) []byte {
	txs := make([]zakat.Transaction, n)
	for i := range txs {
		txs[i] = zakat.Transaction{
			Agency: zakat.AgencyLZS, OrderNo: fmt.Sprintf("ORD-%08d", i), Amount: 1050,
			Name: "Ahmad bin Ali", Email: "ahmad@example.com",
			Time:   time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("", 8*3600)),
			Status: zakat.StatusSuccess,
			Data: zakat.Data{
				Email: "ahmad@example.com", Name: "Ahmad bin Ali", ICNo: "900101145678",
				State: zakat.Selangor, Type: zakat.ZakatFitrah, Year: "2026", Phone: "0123456789",
				Address: "1 Jalan Satu", Postcode: "40000", City: "Shah Alam", Amount: "10.50",
				Rate: "2.625", Dependants: "4",
			},
		}
	}
	body, err := json.Marshal(zakat.Batch{Transactions: txs})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// decodeThenCheck is a peer: a general decoder into paygate's types, then
// the same checks on the typed records (ValidateTransactions).
func decodeThenCheck(b *testing.B, name string, unmarshal func([]byte, any) error, body []byte) side {
	return side{name, func() {
		var batch zakat.Batch
		if err := unmarshal(body, &batch); err != nil {
			b.Fatal(name, err)
		}
		if err := (zakat.Validator{}).ValidateTransactions(batch.Transactions); err != nil {
			b.Fatal(name, err)
		}
	}}
}

// BenchmarkValidate: ValidateBatchJSON against sonic, goccy/go-json and
// encoding/json decoding into the same types followed by the same checks,
// and (up to 100k) the JSON Schema validator with zakat.Validator.Schema, at 1k,
// 100k and (without -short) 1M transactions. "body-x" is the bytes
// ValidateBatchJSON allocates per call over the body's size.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("1M transactions (500 MB of JSON) only without -short")
			}
			body := batchBody(b, n)
			peers := []side{
				decodeThenCheck(b, "sonic", sonic.Unmarshal, body),
				decodeThenCheck(b, "goccy", gojson.Unmarshal, body),
				decodeThenCheck(b, "encoding-json", json.Unmarshal, body),
			}
			if n <= 100_000 {
				peers = append(peers, schemaPeer(b, body))
			}
			batch := max(1, 20_000/n)
			res := interleave(b, batch, side{"paygate", func() {
				if _, err := (zakat.Validator{}).ValidateBatchJSON(body); err != nil {
					b.Fatal(err)
				}
			}}, peers...)
			b.ReportMetric(float64(len(body)), "body-bytes")
			b.ReportMetric(res[0].bytes/float64(len(body)), "body-x/paygate")
		})
	}
}

// schemaPeer checks body against zakat.Validator.Schema with santhosh-tekuri's
// validator, format assertions on (what the schema's own tests use).
func schemaPeer(b *testing.B, body []byte) side {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(zakat.Validator{}.Schema()))
	if err != nil {
		b.Fatal(err)
	}
	if err := c.AddResource("urn:paygate:bank-webhook:v1", doc); err != nil {
		b.Fatal(err)
	}
	sch, err := c.Compile("urn:paygate:bank-webhook:v1")
	if err != nil {
		b.Fatal(err)
	}
	return side{"jsonschema", func() {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			b.Fatal(err)
		}
	}}
}
