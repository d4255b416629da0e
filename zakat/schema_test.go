package zakat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/testbound"
)

// compileSchema compiles the embedded webhook schema with an established
// validator, format assertions on (email).
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	onDisk, err := os.ReadFile("schema.json")
	require.NoError(t, err)
	require.Equal(t, onDisk, Validator{}.Schema(), "embedded schema is the file beside transaction.go")
	return compileSchemaOf(t, Validator{}.Schema())
}

// compileSchemaOf compiles a webhook schema (Validator.Schema or a
// Validator's Schema).
func compileSchemaOf(t testing.TB, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("urn:paygate:bank-webhook:v1", doc))
	sch, err := c.Compile("urn:paygate:bank-webhook:v1")
	require.NoError(t, err)
	return sch
}

// schemaAccepts runs the schema validator on a raw body.
func schemaAccepts(sch *jsonschema.Schema, body []byte) bool {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	return err == nil && sch.Validate(inst) == nil
}

// mutation sets one field of transaction 0 (or of the body) to a value, or
// deletes it (value deleteField).
type mutation struct {
	path  []string // keys from the transaction; first "" means the body
	value any
}

// deleteField marks a mutation that removes the field.
var deleteField = struct{ delete bool }{true}

// agreementCorpus lists one-change mutations for every field, valid and
// invalid values alike. Cross-item rules (unique orderno, the fitrah product)
// are not expressible in the schema; the base transactions keep them
// satisfied, and the amount mutations change zakat_type so the product does
// not apply.
func agreementCorpus() []mutation {
	var ms []mutation
	add := func(path []string, values ...any) {
		for _, v := range values {
			ms = append(ms, mutation{path, v})
		}
	}
	n := func(s string) json.Number { return json.Number(s) }
	add([]string{"agency"}, "BANKLZS", "BANKPPZ", "BANK", "bank", "BANKX", "ADBLZS", "ADBPPZ", "ADB", "adb", "ADBX",
		"ADB ", "", 1, nil, true, deleteField)
	add([]string{"orderno"}, "X1", "ORD-000000", "", 1, nil, []any{}, deleteField)
	add([]string{"name"}, "A", "Siti", "", 7, nil, deleteField)
	add([]string{"email"}, "a@b.co", "first.last@example.com", "x+tag@mail.example.my", "plain", "a@", "@b.com",
		"a@@b.com", "a b@c.com", "", 5, nil, deleteField)
	add([]string{"time"}, "2026-11-22T10:30:00+08:00", "2026-11-22T02:30:00Z", "2026-11-22T10:30:00.5-03:30",
		"2024-02-29T00:00:00+08:00", "2026-11-22T10:30:00", "2026-11-22", "2026-02-30T10:30:00+08:00",
		"2026-13-01T10:30:00+08:00", "2026-11-22T25:30:00+08:00", "22/11/2026 10:30", "", 1763778600, nil, deleteField)
	// ISO 8601 with an offset beyond RFC 3339 (docs/assumptions.md A-webhook-time), and near misses.
	add([]string{"time"}, "2024-01-02T03:04:05+0800", "2024-01-02T03:04+08:00", "2024-01-02T03:04Z",
		"2024-01-02T03:04-0330", "2024-01-02T03:04:05.123+0800", "2024-01-02T03:04:05.1234567891234Z",
		"2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2023-02-29T00:00Z", "2026-04-31T00:00:00Z",
		"2026-04-30T23:59:59-00:00", "0000-02-29T00:00Z", "2026-11-22T10:30:00+08", "2026-11-22T10:30:00+8:00",
		"2026-11-22T10:30:00+24:00", "2026-11-22T10:30:00+08:60", "2026-11-22T10:30:00+08:0", "2026-11-22T10:30:00+08:00:00",
		"2026-11-22t10:30:00z", "2026-11-22T10:30:00z", "2026-11-22T10:30:00.+08:00", "2026-11-22T10:30.5+08:00",
		"2026-11-22T10:30:60Z", "2026-11-22T24:00:00Z", "2026-11-22T10:30:00+08:00\n", " 2026-11-22T10:30:00Z",
		"2026-11-22T10:3Z", "2026-11-22T10Z", "20261122T103000+0800", "2026-11-22 10:30:00+08:00",
		"2026-11-22T10:30:00 +08:00", "2026-11-22T10:30", "2026-11-22T10:30:00+08:00Z", "+2026-11-22T10:30Z")
	add([]string{"status"}, "success", "pending", "failed", "Success", "ok", "", 0, nil, deleteField)
	add([]string{"data"}, map[string]any{}, map[string]any{"zakat_city": "KL"}, []any{}, "x", 1, nil, deleteField)
	add([]string{"extra_field"}, "tolerated", 1, nil)
	add([]string{"", "$schema"}, "urn:x", 1, nil, deleteField)
	add([]string{"", "transactions"}, []any{}, "x", map[string]any{}, nil, deleteField)
	add([]string{"", "Transactions"}, []any{})
	data := func(k string, values ...any) { add([]string{"data", k}, values...) }
	data("email", "a@b.co", "bad", "", 1, nil)
	data("zakat_name", "Ali", "", 1, nil)
	data("zakat_ic_no", "900101145678", "90010114567", "9001011456789", "900101-14-5678", "abcdefghijkl", "", 900101145678, nil)
	data("zakat_state", "johor", "kuala_lumpur", "putrajaya", "Johor", "kl", "", 1, nil)
	data("zakat_year", "2026", "0000", "26", "20266", "year", "", 2026, nil)
	data("zakat_phone", "0123456789", "01234567890", "012345678901", "012345678", "0123456789012", "+60123456789", "", 123, nil)
	data("zakat_address", "1 Jalan", "", 1, nil)
	data("zakat_postcode", "40000", "4000", "400000", "4000a", "", 40000, nil)
	data("zakat_city", "Shah Alam", "", 1, nil)
	data("zakat_amount", "10", "10.5", "10.50", "0.01", "10.505", "10.", ".5", "-1", "1e3", "ten", "", 10.5, nil)
	data("zakat_rate", "2.625", "7", "2.", "x", "", 2.6, nil)
	data("zakat_dependant", "4", "10", "1.5", "-1", "", 4, nil)
	// zakat_type changes whether rate and dependant are allowed.
	data("zakat_type", "zakat_fitrah", "fitrah", "zakat_emas", "zakat_gaji", "", 1, nil, deleteField)
	// amount: the product rule is switched off by dropping rate and dependant.
	for _, v := range []any{n("0"), n("0.00"), n("10.5"), n("10.50"), n("1e2"), n("-0"), n("-1"), n("-0.01"),
		n("10.505"), n("0.001"), "10.50", nil, true, deleteField} {
		ms = append(ms, mutation{[]string{"amount", "no-fitrah"}, v})
	}
	return ms
}

// apply makes a body with the mutation on transaction 0 of a 2-transaction
// batch whose agencies are the first of codes.
func (m mutation) apply(t *testing.T, codes []Agency) []byte {
	body := validBatchMap(2)
	for _, tx := range body["transactions"].([]any) {
		tx.(map[string]any)["agency"] = string(codes[0])
	}
	tx := body["transactions"].([]any)[0].(map[string]any)
	target, key := tx, m.path[0]
	switch {
	case m.path[0] == "":
		target, key = body, m.path[1]
	case m.path[0] == "data" && len(m.path) == 2:
		target, key = tx["data"].(map[string]any), m.path[1]
	case len(m.path) == 2 && m.path[1] == "no-fitrah":
		d := tx["data"].(map[string]any)
		delete(d, "zakat_rate")
		delete(d, "zakat_dependant")
	}
	if m.value == deleteField {
		delete(target, key)
	} else {
		target[key] = m.value
	}
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	return raw
}

// ValidateBatchJSON and an established JSON Schema validator give the same
// verdict on every case the schema can express, for the document's agency
// codes (Validator{}.Schema) and for the bank webhook page's
// (Validator.Schema), and the streaming validator gives the same
// verdict as ValidateBatchJSON.
func TestWebhookSchemaAgreement(t *testing.T) {
	adb, err := NewValidator(ADBAgencies()...)
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		rules  Validator
		schema *jsonschema.Schema
	}{
		{name: "document codes", rules: Validator{}, schema: compileSchema(t)},
		{name: "ADB codes", rules: adb, schema: compileSchemaOf(t, adb.Schema())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			codes := tt.rules.Agencies()
			valid, invalid, beyond := 0, 0, 0
			for _, m := range agreementCorpus() {
				body := m.apply(t, codes)
				_, err := tt.rules.ValidateBatchJSON(body)
				_, streamErr := tt.rules.ValidateBatchReader(bytes.NewReader(body))
				require.Equal(t, err, streamErr, "stream and whole body on %v = %#v", m.path, m.value)
				if onlyCrossItem(problemsOf(t, err)) {
					beyond++ // the fitrah product: not expressible in a schema
					continue
				}
				ours, theirs := err == nil, schemaAccepts(tt.schema, body)
				if ours != theirs {
					t.Errorf("disagree on %v = %#v: ours %v, schema %v (%v)", m.path, m.value, ours, theirs, err)
					continue
				}
				if ours {
					valid++
				} else {
					invalid++
				}
				if m.path[0] == "agency" {
					code, _ := m.value.(string)
					require.Equal(t, slices.Contains(codes, Agency(code)), ours, "agency %#v", m.value)
				}
			}
			t.Logf("agreement on %d cases: %d valid, %d invalid; %d beyond the schema", valid+invalid, valid, invalid, beyond)
			require.Greater(t, valid, 50)
			require.Greater(t, invalid, 130)
		})
	}
}

// onlyCrossItem reports whether every problem is one of the rules a schema
// cannot express.
func onlyCrossItem(probs []FieldError) bool {
	for _, p := range probs {
		if !strings.HasPrefix(p.Rule, ruleFitrahProduct) && !strings.HasPrefix(p.Rule, ruleUnique) {
			return false
		}
	}
	return len(probs) > 0
}

// The cross-item rules are beyond the schema: it accepts what
// ValidateBatchJSON rejects, and the schema's $comment names them.
func TestWebhookSchemaCrossItemRules(t *testing.T) {
	sch := compileSchema(t)
	body := validBatchMap(2)
	txs := body["transactions"].([]any)
	txs[1].(map[string]any)["orderno"] = txs[0].(map[string]any)["orderno"]
	txs[0].(map[string]any)["amount"] = json.Number("99.99")
	raw, _ := json.Marshal(body)
	require.True(t, schemaAccepts(sch, raw))
	_, err := Validator{}.ValidateBatchJSON(raw)
	probs := problemsOf(t, err)
	require.Len(t, probs, 2)
	require.Contains(t, string(Validator{}.Schema()), "orderno is unique")
	require.Contains(t, string(Validator{}.Schema()), "zakat_rate x zakat_dependant")

	// Text that is not UTF-8 reaches a schema validator decoded, as U+FFFD.
	bad := bodyWithText(t, []string{"name"}, "Siti \xff")
	require.True(t, schemaAccepts(sch, bad))
	_, err = Validator{}.ValidateBatchJSON(bad)
	require.Equal(t, []FieldError{{Field: "/transactions/0/name", Rule: ruleUTF8}}, problemsOf(t, err))
	require.Contains(t, string(Validator{}.Schema()), "valid UTF-8")
}

// benchBatch builds a body of n valid transactions.
func benchBatch(n int) []byte {
	txs := make([]Transaction, n)
	for i := range txs {
		txs[i] = validTx(i)
	}
	raw, err := json.Marshal(Batch{Transactions: txs})
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return raw
}

func BenchmarkValidateBatchJSON(b *testing.B) {
	body := benchBatch(100_000)
	b.Logf("body %d bytes", len(body))
	b.Run("paygate", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			if _, err := (Validator{}).ValidateBatchJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			var batch Batch
			if err := json.Unmarshal(body, &batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonschema", func(b *testing.B) {
		sch := compileSchema(b)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			if !schemaAccepts(sch, body) {
				b.Fatal("schema rejected the batch")
			}
		}
	})
}

// BenchmarkValidateRatios runs ValidateBatchJSON, plain json.Unmarshal and
// the JSON Schema validator on the 100,000-transaction batch in turn, and
// reports time(ValidateBatchJSON) / time(baseline) for each.
func BenchmarkValidateRatios(b *testing.B) {
	body := benchBatch(100_000)
	sch := compileSchema(b)
	testbound.BenchRatios(b, 1, func() {
		if _, err := (Validator{}).ValidateBatchJSON(body); err != nil {
			b.Fatal(err)
		}
	}, testbound.RatioBaseline{Name: "unmarshal", Fn: func() {
		var batch Batch
		if err := json.Unmarshal(body, &batch); err != nil {
			b.Fatal(err)
		}
	}}, testbound.RatioBaseline{Name: "jsonschema", Fn: func() {
		if !schemaAccepts(sch, body) {
			b.Fatal("schema rejected the batch")
		}
	}})
}

// Every field of the tables is in the agreement corpus with at least one
// value ValidateBatchJSON accepts and one it refuses, so that
// TestWebhookSchemaAgreement compares the schema's rule for it with the
// validator's (step 4 of TESTING.md's "Adding a webhook field").
func TestAgreementCorpusCoversEveryField(t *testing.T) {
	codes := Validator{}.Agencies()
	type verdicts struct{ accepted, refused int }
	seen := map[string]*verdicts{}
	for _, m := range agreementCorpus() {
		key := m.path[0] // a transaction's field (amount's path names a variant too)
		if key == "data" && len(m.path) > 1 {
			key = "data." + m.path[1]
		}
		if seen[key] == nil {
			seen[key] = &verdicts{}
		}
		if _, err := (Validator{}).ValidateBatchJSON(m.apply(t, codes)); err == nil {
			seen[key].accepted++
		} else {
			seen[key].refused++
		}
	}
	var fields []string
	for _, f := range txFields {
		fields = append(fields, f.name)
	}
	for _, f := range zakatFields {
		fields = append(fields, "data."+f.name)
	}
	for _, f := range fields {
		v := seen[f]
		require.NotNil(t, v, "agreementCorpus holds no value of %s", f)
		require.Positive(t, v.accepted, "agreementCorpus holds no value of %s that is valid", f)
		require.Positive(t, v.refused, "agreementCorpus holds no value of %s that breaks its rule", f)
	}
}
