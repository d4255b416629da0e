package paygate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

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
		{"data ic empty", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_ic_no"] = "" }, "/transactions/0/data/zakat_ic_no", "must be 12 digits"},
		{"data postcode", func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_postcode"] = "4000a" }, "/transactions/0/data/zakat_postcode", "must be 5 digits"},
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

// The batch ValidateBatchJSON returns does not share memory with the body:
// overwriting the body afterwards changes nothing in it.
func TestValidateBatchJSONCopies(t *testing.T) {
	txs := []Transaction{validTx(0), validTx(1)}
	raw, err := json.Marshal(Batch{Schema: "urn:x", Transactions: txs})
	require.NoError(t, err)
	batch, err := ValidateBatchJSON(raw)
	require.NoError(t, err)
	for i := range raw {
		raw[i] = 'X'
	}
	require.Equal(t, "urn:x", batch.Schema)
	for i := range txs {
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
