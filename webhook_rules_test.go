package paygate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// validTx is a transaction that passes every rule; tests change one thing.
func validTx(i int) Transaction {
	return Transaction{
		Agency:  ZakatAgencyLZS,
		OrderNo: fmt.Sprintf("ORD-%06d", i),
		Amount:  1050,
		Name:    "Ahmad bin Ali",
		Email:   "ahmad@example.com",
		Time:    time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("", 8*3600)),
		Status:  StatusSuccess,
		Data: ZakatData{
			Email: "ahmad@example.com", Name: "Ahmad bin Ali", ICNo: "900101145678",
			State: StateSelangor, Type: TypeZakatFitrah, Year: "2026", Phone: "0123456789",
			Address: "1 Jalan Satu", Postcode: "40000", City: "Shah Alam", Amount: "10.50",
			Rate: "2.625", Dependants: "4",
		},
	}
}

// validBatchJSON is a body of n valid transactions, as a map so tests can
// change any field.
func validBatchMap(n int) map[string]any {
	txs := make([]any, n)
	for i := range txs {
		b, _ := json.Marshal(validTx(i))
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		txs[i] = m
	}
	return map[string]any{"$schema": "urn:paygate:bank-webhook:v1", "transactions": txs}
}

func problemsOf(t *testing.T, err error) []FieldError {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "want *ValidationError, got %v", err)
	return ve.Problems
}

// hasProblem asserts that exactly one problem names pointer, with rule as a
// prefix of its rule.
func requireProblem(t *testing.T, probs []FieldError, pointer, rule string) {
	t.Helper()
	require.Len(t, probs, 1, "problems: %v", probs)
	require.Equal(t, pointer, probs[0].Field)
	require.True(t, strings.HasPrefix(probs[0].Rule, rule), "rule %q, want %q", probs[0].Rule, rule)
}

func TestValidateTransactionsRules(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Transaction)
		pointer string // "" for valid
		rule    string
	}{
		{"valid", func(*Transaction) {}, "", ""},
		{"valid: zero amount", func(tx *Transaction) { tx.Amount = 0; tx.Data.Rate = ""; tx.Data.Dependants = "" }, "", ""},
		{"valid: test agency", func(tx *Transaction) { tx.Agency = ZakatAgencyTest }, "", ""},
		{"valid: minimal data", func(tx *Transaction) { tx.Data = ZakatData{} }, "", ""},
		{"valid: fitrah type", func(tx *Transaction) { tx.Data.Type = TypeFitrah }, "", ""},
		{"valid: non-fitrah without rate", func(tx *Transaction) {
			tx.Data.Type, tx.Data.Rate, tx.Data.Dependants = TypePendapatan, "", ""
		}, "", ""},
		{"agency missing", func(tx *Transaction) { tx.Agency = "" }, "/transactions/0/agency", ruleRequired},
		{"agency unknown", func(tx *Transaction) { tx.Agency = "BANKXYZ" }, "/transactions/0/agency", "must be one of BANKLZS, BANKPPZ, BANK"},
		{"orderno missing", func(tx *Transaction) { tx.OrderNo = "" }, "/transactions/0/orderno", ruleRequired},
		{"amount negative", func(tx *Transaction) { tx.Amount = -1 }, "/transactions/0/amount", ruleAmountMin},
		{"name missing", func(tx *Transaction) { tx.Name = "" }, "/transactions/0/name", ruleRequired},
		{"email missing", func(tx *Transaction) { tx.Email = "" }, "/transactions/0/email", ruleRequired},
		{"email bad", func(tx *Transaction) { tx.Email = "ahmad.example.com" }, "/transactions/0/email", ruleEmail},
		{"email with name", func(tx *Transaction) { tx.Email = "Ahmad <a@example.com>" }, "/transactions/0/email", ruleEmail},
		{"time missing", func(tx *Transaction) { tx.Time = time.Time{} }, "/transactions/0/time", ruleRequired},
		{"status missing", func(tx *Transaction) { tx.Status = "" }, "/transactions/0/status", ruleRequired},
		{"status unknown", func(tx *Transaction) { tx.Status = "SUCCESS" }, "/transactions/0/status", ruleStatus},
		{"data email", func(tx *Transaction) { tx.Data.Email = "x@" }, "/transactions/0/data/email", ruleEmail},
		{"ic short", func(tx *Transaction) { tx.Data.ICNo = "90010114567" }, "/transactions/0/data/zakat_ic_no", ruleICNo},
		{"ic dashes", func(tx *Transaction) { tx.Data.ICNo = "900101-14-5678" }, "/transactions/0/data/zakat_ic_no", ruleICNo},
		{"state", func(tx *Transaction) { tx.Data.State = "Selangor" }, "/transactions/0/data/zakat_state", ruleState},
		{"type", func(tx *Transaction) { tx.Data.Type = "zakat_gaji"; tx.Data.Rate, tx.Data.Dependants = "", "" }, "/transactions/0/data/zakat_type", ruleType},
		{"year", func(tx *Transaction) { tx.Data.Year = "26" }, "/transactions/0/data/zakat_year", ruleYear},
		{"phone short", func(tx *Transaction) { tx.Data.Phone = "012345678" }, "/transactions/0/data/zakat_phone", rulePhone},
		{"phone long", func(tx *Transaction) { tx.Data.Phone = "0123456789012" }, "/transactions/0/data/zakat_phone", rulePhone},
		{"phone plus", func(tx *Transaction) { tx.Data.Phone = "+60123456789" }, "/transactions/0/data/zakat_phone", rulePhone},
		{"postcode", func(tx *Transaction) { tx.Data.Postcode = "4000" }, "/transactions/0/data/zakat_postcode", rulePostcode},
		{"zakat_amount 3 decimals", func(tx *Transaction) { tx.Data.Amount = "10.505" }, "/transactions/0/data/zakat_amount", ruleZakatAmount},
		{"zakat_amount words", func(tx *Transaction) { tx.Data.Amount = "ten" }, "/transactions/0/data/zakat_amount", ruleZakatAmount},
		{"zakat_amount trailing dot", func(tx *Transaction) { tx.Data.Amount = "10." }, "/transactions/0/data/zakat_amount", ruleZakatAmount},
		{"rate not numeric", func(tx *Transaction) { tx.Data.Rate = "2,6" }, "/transactions/0/data/zakat_rate", ruleRate},
		{"dependant fraction", func(tx *Transaction) { tx.Data.Dependants = "1.5" }, "/transactions/0/data/zakat_dependant", ruleDependant},
		{"rate on non-fitrah", func(tx *Transaction) { tx.Data.Type, tx.Data.Dependants = TypeEmas, "" }, "/transactions/0/data/zakat_rate", ruleFitrahOnly},
		{"dependant without type", func(tx *Transaction) { tx.Data.Type, tx.Data.Rate = "", "" }, "/transactions/0/data/zakat_dependant", ruleFitrahOnly},
		{"fitrah product", func(tx *Transaction) { tx.Amount = 1051 }, "/transactions/0/amount", ruleFitrahProduct},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := validTx(0)
			tt.edit(&tx)
			probs := problemsOf(t, ValidateTransactions([]Transaction{tx}))
			if tt.pointer == "" {
				require.Empty(t, probs)
				return
			}
			requireProblem(t, probs, tt.pointer, tt.rule)
		})
	}
}

func TestValidateTransactionsDuplicatesAndAll(t *testing.T) {
	a, b, c := validTx(0), validTx(1), validTx(0)
	b.Email = "bad"
	probs := problemsOf(t, ValidateTransactions([]Transaction{a, b, c}))
	require.Len(t, probs, 2)
	require.Equal(t, "/transactions/1/email", probs[0].Field)
	require.Equal(t, "/transactions/2/orderno", probs[1].Field)
	require.Equal(t, ruleUnique+" (also at /transactions/0/orderno)", probs[1].Rule)
	require.Equal(t, "ORD-000000", probs[1].Value)
	require.NoError(t, ValidateTransactions(nil))
}

func TestValidateBatchJSONRules(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(tx map[string]any, body map[string]any)
		pointer string
		rule    string
	}{
		{"valid", func(map[string]any, map[string]any) {}, "", ""},
		{"valid: unknown fields", func(tx, body map[string]any) { tx["extra"] = 1; body["meta"] = []any{1} }, "", ""},
		{"valid: Z time", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T02:30:00Z" }, "", ""},
		{"valid: fractional seconds", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00.123+08:00" }, "", ""},
		{"valid: offset without colon (PHP DATE_ISO8601)", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00+0800" }, "", ""},
		{"valid: no seconds", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30+08:00" }, "", ""},
		{"valid: empty free text", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_city"] = "" }, "", ""},
		{"body: transactions missing", func(_, body map[string]any) { delete(body, "transactions") }, "/transactions", ruleRequired},
		{"body: transactions wrong case", func(_, body map[string]any) {
			body["Transactions"] = body["transactions"]
			delete(body, "transactions")
		}, "/transactions", ruleRequired},
		{"body: transactions object", func(_, body map[string]any) { body["transactions"] = map[string]any{"a": 1} }, "/transactions", ruleArray},
		{"body: $schema number", func(_, body map[string]any) { body["$schema"] = 7 }, "/$schema", ruleString},
		{"agency missing", func(tx, _ map[string]any) { delete(tx, "agency") }, "/transactions/0/agency", ruleRequired},
		{"agency wrong case key", func(tx, _ map[string]any) { tx["Agency"] = tx["agency"]; delete(tx, "agency") }, "/transactions/0/agency", ruleRequired},
		{"agency number", func(tx, _ map[string]any) { tx["agency"] = 1 }, "/transactions/0/agency", ruleString},
		{"agency null", func(tx, _ map[string]any) { tx["agency"] = nil }, "/transactions/0/agency", ruleString},
		{"agency empty", func(tx, _ map[string]any) { tx["agency"] = "" }, "/transactions/0/agency", "must be one of BANKLZS, BANKPPZ, BANK"},
		{"orderno empty", func(tx, _ map[string]any) { tx["orderno"] = "" }, "/transactions/0/orderno", ruleNotEmpty},
		{"orderno number", func(tx, _ map[string]any) { tx["orderno"] = 12 }, "/transactions/0/orderno", ruleString},
		{"amount string", func(tx, _ map[string]any) { tx["amount"] = "10.50" }, "/transactions/0/amount", ruleNumber},
		{"amount missing", func(tx, _ map[string]any) { delete(tx, "amount") }, "/transactions/0/amount", ruleRequired},
		{"amount negative", func(tx, _ map[string]any) { tx["amount"] = json.Number("-1") }, "/transactions/0/amount", ruleAmountMin},
		{"amount 3 decimals", func(tx, _ map[string]any) { tx["amount"] = json.Number("10.505") }, "/transactions/0/amount", ruleAmountSen},
		{"name empty", func(tx, _ map[string]any) { tx["name"] = "" }, "/transactions/0/name", ruleNotEmpty},
		{"email bad", func(tx, _ map[string]any) { tx["email"] = "a@@b" }, "/transactions/0/email", ruleEmail},
		{"time no offset", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00" }, "/transactions/0/time", ruleTime},
		{"time date only", func(tx, _ map[string]any) { tx["time"] = "2026-11-22" }, "/transactions/0/time", ruleTime},
		{"time 30 February", func(tx, _ map[string]any) { tx["time"] = "2026-02-30T10:30:00+08:00" }, "/transactions/0/time", ruleTime},
		{"time offset of one digit", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00+8:00" }, "/transactions/0/time", ruleTime},
		{"time offset of hours only", func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00+08" }, "/transactions/0/time", ruleTime},
		{"time number", func(tx, _ map[string]any) { tx["time"] = 1763778600 }, "/transactions/0/time", ruleString},
		{"status unknown", func(tx, _ map[string]any) { tx["status"] = "done" }, "/transactions/0/status", ruleStatus},
		{"data missing", func(tx, _ map[string]any) { delete(tx, "data") }, "/transactions/0/data", ruleRequired},
		{"data array", func(tx, _ map[string]any) { tx["data"] = []any{} }, "/transactions/0/data", ruleObject},
		{"data field number", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_year"] = 2026 }, "/transactions/0/data/zakat_year", ruleString},
		{"data field null", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_city"] = nil }, "/transactions/0/data/zakat_city", ruleString},
		{"data ic empty", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_ic_no"] = "" }, "/transactions/0/data/zakat_ic_no", ruleICNo},
		{"data postcode", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_postcode"] = "4000a" }, "/transactions/0/data/zakat_postcode", rulePostcode},
		{"fitrah product", func(tx, _ map[string]any) { tx["amount"] = json.Number("10.49") }, "/transactions/0/amount", ruleFitrahProduct},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := validBatchMap(1)
			tt.edit(body["transactions"].([]any)[0].(map[string]any), body)
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			batch, err := ValidateBatchJSON(raw)
			probs := problemsOf(t, err)
			if tt.pointer == "" {
				require.Empty(t, probs)
				require.Len(t, batch.Transactions, 1)
				return
			}
			require.Nil(t, batch)
			requireProblem(t, probs, tt.pointer, tt.rule)
		})
	}
}

func TestValidateBatchJSONShapes(t *testing.T) {
	tests := []struct {
		body    string
		pointer string
		rule    string
	}{
		{`not json`, "", ruleJSON},
		{`{"transactions": []} trailing`, "", ruleJSON},
		{`[]`, "", ruleObject},
		{`"x"`, "", ruleObject},
		{`{"transactions": [{"amount": 10.`, "", ruleJSON},
		{`{"transactions": [{"amount": -`, "", ruleJSON},
		{`{"transactions": [{"name": "a\u12`, "", ruleJSON},
		{`{"transactions": [1]}`, "/transactions/0", ruleObject},
		{`{"transactions": "x"}`, "/transactions", ruleArray},
		{`{"transactions": null}`, "/transactions", ruleArray},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, err := ValidateBatchJSON([]byte(tt.body))
			requireProblem(t, problemsOf(t, err), tt.pointer, tt.rule)
		})
	}
	batch, err := ValidateBatchJSON([]byte(`{"transactions": []}`))
	require.NoError(t, err)
	require.Empty(t, batch.Transactions)
}

// Every problem of a batch is reported at once, each with its pointer.
func TestValidateBatchJSONAllProblems(t *testing.T) {
	body := validBatchMap(3)
	txs := body["transactions"].([]any)
	txs[0].(map[string]any)["amount"] = "1"
	txs[1].(map[string]any)["email"] = "x"
	txs[1].(map[string]any)["data"].(map[string]any)["zakat_phone"] = "1"
	txs[2].(map[string]any)["orderno"] = txs[0].(map[string]any)["orderno"]
	raw, _ := json.Marshal(body)
	_, err := ValidateBatchJSON(raw)
	probs := problemsOf(t, err)
	var pointers []string
	for _, p := range probs {
		pointers = append(pointers, p.Field)
	}
	require.Equal(t, []string{
		"/transactions/0/amount", "/transactions/1/email", "/transactions/1/data/zakat_phone", "/transactions/2/orderno",
	}, pointers)
	require.Contains(t, err.Error(), "4 validation problems")
}

// The typed and raw paths agree: a marshalled valid batch passes both, and the
// decoded batch equals the original.
func TestValidateBatchJSONRoundTrip(t *testing.T) {
	txs := []Transaction{validTx(0), validTx(1)}
	raw, err := json.Marshal(Batch{Transactions: txs})
	require.NoError(t, err)
	require.Contains(t, string(raw), `"time":"2026-11-22T10:30:00+08:00"`)
	require.Contains(t, string(raw), `"amount":10.50`)
	batch, err := ValidateBatchJSON(raw)
	require.NoError(t, err)
	require.Len(t, batch.Transactions, 2)
	for i := range txs {
		require.True(t, txs[i].Time.Equal(batch.Transactions[i].Time))
		batch.Transactions[i].Time = txs[i].Time
	}
	require.Equal(t, txs, batch.Transactions)
}

func FuzzValidateBatchJSON(f *testing.F) {
	valid, _ := json.Marshal(validBatchMap(2))
	f.Add(valid)
	f.Add([]byte(`{"transactions":[{"agency":"BANK","orderno":"1","amount":0,"name":"a","email":"a@b.c","time":"2026-01-01T00:00:00Z","status":"failed","data":{}}]}`))
	f.Add([]byte(`{"transactions":[{"agency":"BANKPPZ","orderno":"2","amount":1.5,"name":"a","email":"a@b.c","time":"0000-02-29T23:59:59.1234567891+2359","status":"pending","data":{}}]}`))
	f.Add([]byte(`{"transactions":[{"agency":"BANKLZS","orderno":"3","amount":1e2,"name":"a","email":"a@b.c","time":"2024-01-02T03:04-00:00","status":"success","data":{}}]}`))
	f.Add([]byte(`{"transactions":[1,"x",null,{}]}`))
	f.Add([]byte(`{"transactions":{}}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		batch, err := ValidateBatchJSON(body)
		if err != nil {
			problemsOf(t, err)
			require.Nil(t, batch)
			return
		}
		require.NoError(t, ValidateTransactions(batch.Transactions), "accepted raw, rejected typed")
		again, err := json.Marshal(batch)
		require.NoError(t, err)
		batch2, err := ValidateBatchJSON(again)
		require.NoError(t, err, "re-encoded batch: %s", again)
		require.Len(t, batch2.Transactions, len(batch.Transactions))
	})
}

// The switch lookups agree with the field tables they stand for.
func TestFieldLookups(t *testing.T) {
	for bit, name := range txFields {
		require.Equal(t, uint16(1)<<bit, txBit(name), name)
	}
	require.Zero(t, txBit("Agency"))
	for i, f := range zakatFields {
		require.Equal(t, i, zakatIndex(f.name), f.name)
	}
	require.Equal(t, -1, zakatIndex("zakat_rates"))
	require.Equal(t, "zakat_type", zakatFields[bitIndex(zdType)].name)
	require.Equal(t, "zakat_rate", zakatFields[bitIndex(zdRate)].name)
	require.Equal(t, "zakat_dependant", zakatFields[bitIndex(zdDependant)].name)
}

// The eight-byte test agrees with the byte table on every word it is shown.
func TestHasSpecialByte(t *testing.T) {
	words := []string{"abcdefgh", `abc"efgh`, `abc\efgh`, "abc\x1fefgh", "abc\x80efgh", "\x00bcdefgh", "abcdefg\xff",
		"ABCDEFGH", "        ", "!#$%&'()", "~~~~~~~~", "\x20\x20\x20\x20\x20\x20\x20\x21"}
	for c := 0; c < 256; c++ {
		words = append(words, strings.Repeat("a", 7)+string(rune(0))[:0]+string([]byte{byte(c)}), string([]byte{byte(c)})+strings.Repeat("z", 7))
	}
	for _, w := range words {
		want := false
		for i := 0; i < 8; i++ {
			want = want || strSpecial[w[i]]
		}
		require.Equal(t, want, hasSpecialByte(load64(w, 0)), "%q", w)
	}
}

// The enum rules list exactly the allowed values, in the messages a bank's
// operator reads.
func TestEnumRulesListTheirValues(t *testing.T) {
	for _, tt := range []struct {
		rule   string
		values []string
	}{
		{ruleState, func() (v []string) {
			for _, s := range ZakatStates() {
				v = append(v, string(s))
			}
			return v
		}()},
		{ruleType, func() (v []string) {
			for _, z := range ZakatTypes() {
				v = append(v, string(z))
			}
			return v
		}()},
	} {
		listed := strings.Split(strings.TrimPrefix(tt.rule, "must be one of "), ", ")
		require.ElementsMatch(t, tt.values, listed)
	}
}
