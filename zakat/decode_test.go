package zakat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/paygate-go/paygate/internal/jsonscan"
	"github.com/stretchr/testify/require"
)

func TestValidateBatchJSONRules(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(tx map[string]any, body map[string]any)
		pointer string
		rule    string
	}{
		{name: "valid", edit: func(map[string]any, map[string]any) {}},
		{name: "valid: unknown fields", edit: func(tx, body map[string]any) { tx["extra"] = 1; body["meta"] = []any{1} }},
		{name: "valid: Z time", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T02:30:00Z" }},
		{name: "valid: fractional seconds", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00.123+08:00" }},
		{name: "valid: offset without colon (PHP DATE_ISO8601)", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00+0800" }},
		{name: "valid: no seconds", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30+08:00" }},
		{name: "valid: empty free text", edit: func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_city"] = "" }},
		{name: "body: transactions missing", edit: func(_, body map[string]any) { delete(body, "transactions") }, pointer: "/transactions", rule: ruleRequired},
		{name: "body: transactions wrong case", edit: func(_, body map[string]any) {
			body["Transactions"] = body["transactions"]
			delete(body, "transactions")
		}, pointer: "/transactions", rule: ruleRequired},
		{name: "body: transactions object", edit: func(_, body map[string]any) { body["transactions"] = map[string]any{"a": 1} }, pointer: "/transactions", rule: ruleArray},
		{name: "body: $schema number", edit: func(_, body map[string]any) { body["$schema"] = 7 }, pointer: "/$schema", rule: ruleString},
		{name: "agency missing", edit: func(tx, _ map[string]any) { delete(tx, "agency") }, pointer: "/transactions/0/agency", rule: ruleRequired},
		{name: "agency wrong case key", edit: func(tx, _ map[string]any) { tx["Agency"] = tx["agency"]; delete(tx, "agency") }, pointer: "/transactions/0/agency", rule: ruleRequired},
		{name: "agency number", edit: func(tx, _ map[string]any) { tx["agency"] = 1 }, pointer: "/transactions/0/agency", rule: ruleString},
		{name: "agency null", edit: func(tx, _ map[string]any) { tx["agency"] = nil }, pointer: "/transactions/0/agency", rule: ruleString},
		{name: "agency empty", edit: func(tx, _ map[string]any) { tx["agency"] = "" }, pointer: "/transactions/0/agency", rule: "must be one of BANKLZS, BANKPPZ, BANK"},
		{name: "orderno empty", edit: func(tx, _ map[string]any) { tx["orderno"] = "" }, pointer: "/transactions/0/orderno", rule: ruleNotEmpty},
		{name: "orderno number", edit: func(tx, _ map[string]any) { tx["orderno"] = 12 }, pointer: "/transactions/0/orderno", rule: ruleString},
		{name: "amount string", edit: func(tx, _ map[string]any) { tx["amount"] = "10.50" }, pointer: "/transactions/0/amount", rule: ruleNumber},
		{name: "amount missing", edit: func(tx, _ map[string]any) { delete(tx, "amount") }, pointer: "/transactions/0/amount", rule: ruleRequired},
		{name: "amount negative", edit: func(tx, _ map[string]any) { tx["amount"] = json.Number("-1") }, pointer: "/transactions/0/amount", rule: ruleAmountMin},
		{name: "amount 3 decimals", edit: func(tx, _ map[string]any) { tx["amount"] = json.Number("10.505") }, pointer: "/transactions/0/amount", rule: ruleAmountSen},
		{name: "name empty", edit: func(tx, _ map[string]any) { tx["name"] = "" }, pointer: "/transactions/0/name", rule: ruleNotEmpty},
		{name: "email bad", edit: func(tx, _ map[string]any) { tx["email"] = "a@@b" }, pointer: "/transactions/0/email", rule: ruleEmail},
		{name: "time no offset", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00" }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time date only", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22" }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time 30 February", edit: func(tx, _ map[string]any) { tx["time"] = "2026-02-30T10:30:00+08:00" }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time offset of one digit", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00+8:00" }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time offset of hours only", edit: func(tx, _ map[string]any) { tx["time"] = "2026-11-22T10:30:00+08" }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time number", edit: func(tx, _ map[string]any) { tx["time"] = 1763778600 }, pointer: "/transactions/0/time", rule: ruleString},
		{name: "status unknown", edit: func(tx, _ map[string]any) { tx["status"] = "done" }, pointer: "/transactions/0/status", rule: ruleStatus},
		{name: "data missing", edit: func(tx, _ map[string]any) { delete(tx, "data") }, pointer: "/transactions/0/data", rule: ruleRequired},
		{name: "data array", edit: func(tx, _ map[string]any) { tx["data"] = []any{} }, pointer: "/transactions/0/data", rule: ruleObject},
		{name: "data field number", edit: func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_year"] = 2026 }, pointer: "/transactions/0/data/zakat_year", rule: ruleString},
		{name: "data field null", edit: func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_city"] = nil }, pointer: "/transactions/0/data/zakat_city", rule: ruleString},
		{name: "data ic empty", edit: func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_ic_no"] = "" }, pointer: "/transactions/0/data/zakat_ic_no", rule: "must be 12 digits"},
		{name: "data postcode", edit: func(tx, _ map[string]any) { tx["data"].(map[string]any)["zakat_postcode"] = "4000a" }, pointer: "/transactions/0/data/zakat_postcode", rule: "must be 5 digits"},
		{name: "fitrah product", edit: func(tx, _ map[string]any) { tx["amount"] = json.Number("10.49") }, pointer: "/transactions/0/amount", rule: ruleFitrahProduct},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := validBatchMap(1)
			tt.edit(body["transactions"].([]any)[0].(map[string]any), body)
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			batch, err := Validator{}.ValidateBatchJSON(raw)
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
		{body: `not json`, rule: ruleJSON},
		{body: `{"transactions": []} trailing`, rule: ruleJSON},
		{body: `[]`, rule: ruleObject},
		{body: `"x"`, rule: ruleObject},
		{body: `{"transactions": [{"amount": 10.`, rule: ruleJSON},
		{body: `{"transactions": [{"amount": -`, rule: ruleJSON},
		{body: `{"transactions": [{"name": "a\u12`, rule: ruleJSON},
		{body: `{"transactions": [1]}`, pointer: "/transactions/0", rule: ruleObject},
		{body: `{"transactions": "x"}`, pointer: "/transactions", rule: ruleArray},
		{body: `{"transactions": null}`, pointer: "/transactions", rule: ruleArray},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, err := Validator{}.ValidateBatchJSON([]byte(tt.body))
			requireProblem(t, problemsOf(t, err), tt.pointer, tt.rule)
		})
	}
	batch, err := Validator{}.ValidateBatchJSON([]byte(`{"transactions": []}`))
	require.NoError(t, err)
	require.Empty(t, batch.Transactions)
}

// A body that is not an object holds no transaction: both readers say
// so, and the stream counts none read.
func TestValidateBatchNotAnObjectReadsNoTransaction(t *testing.T) {
	for _, body := range []string{`[]`, `[{"orderno":"1"}]`, `"x"`, `7`} {
		t.Run(body, func(t *testing.T) {
			want := []FieldError{{Rule: ruleObject}}
			_, err := Validator{}.ValidateBatchJSON([]byte(body))
			require.Equal(t, want, problemsOf(t, err))
			n, err := Validator{}.ValidateBatchReader(strings.NewReader(body))
			require.Equal(t, want, problemsOf(t, err))
			require.Zero(t, n)
		})
	}
}

// Each top-level key is checked for repeats on its own: a $schema after
// transactions, or before them, is no repeat; a second $schema is.
func TestValidateBatchJSONTopLevelKeysInAnyOrder(t *testing.T) {
	tx, err := json.Marshal(validTx(0))
	require.NoError(t, err)
	for _, tc := range []struct {
		name, body string
		want       []FieldError
	}{
		{name: "$schema after transactions", body: `{"transactions":[` + string(tx) + `],"$schema":"urn:x"}`},
		{name: "$schema before transactions", body: `{"$schema":"urn:x","transactions":[` + string(tx) + `]}`},
		{name: "$schema twice", body: `{"$schema":"urn:x","transactions":[` + string(tx) + `],"$schema":"urn:y"}`,
			want: []FieldError{{Field: "/$schema", Rule: ruleDuplicateKey}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch, err := Validator{}.ValidateBatchJSON([]byte(tc.body))
			require.Equal(t, tc.want, problemsOf(t, err))
			if tc.want == nil {
				require.Equal(t, "urn:x", batch.Schema)
				require.Len(t, batch.Transactions, 1)
			}
		})
	}
}

// Past maxBatchProblems, even one problem more is counted in the last
// problem, by both readers.
func TestValidateBatchCountsOneProblemPastTheCap(t *testing.T) {
	body := []byte(`{"transactions":[` + strings.TrimSuffix(strings.Repeat("1,", maxBatchProblems+1), ",") + `]}`)
	_, err := Validator{}.ValidateBatchJSON(body)
	problems := problemsOf(t, err)
	require.Len(t, problems, maxBatchProblems+1)
	require.Equal(t, FieldError{Rule: "1 more problems, not listed: only the first 1000 are"}, problems[maxBatchProblems])
	requireSameAsJSON(t, body, 4096)
}

// Once a body has a problem it is not returned, so the transactions read
// after it are not kept (an invalid body costs what the stream costs),
// even when that problem is its only one.
func TestValidateBatchJSONKeepsNoTransactionPastAProblem(t *testing.T) {
	tx, err := json.Marshal(validTx(0))
	require.NoError(t, err)
	body := []byte(`{"$schema":7,"transactions":[` + string(tx) + `]}`)
	var v ValidationError
	p := jsonscan.New(body)
	batch, count, err := decodeBatch(p, &v, body, Validator{})
	require.NoError(t, err)
	require.Equal(t, []FieldError{{Field: "/$schema", Rule: ruleString, Value: "7"}}, v.Problems)
	require.Equal(t, 1, count)
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
	_, err := Validator{}.ValidateBatchJSON(raw)
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
	batch, err := Validator{}.ValidateBatchJSON(raw)
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
	batch, err := Validator{}.ValidateBatchJSON(raw)
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
	for _, tc := range append(notUTF8Texts(), utf8Texts()...) {
		f.Add(bodyWithText(f, []string{"orderno"}, tc.text))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		batch, err := Validator{}.ValidateBatchJSON(body)
		if err != nil {
			problemsOf(t, err)
			require.Nil(t, batch)
			return
		}
		require.NoError(t, Validator{}.ValidateTransactions(batch.Transactions), "accepted raw, rejected typed")
		again, err := json.Marshal(batch)
		require.NoError(t, err)
		batch2, err := Validator{}.ValidateBatchJSON(again)
		require.NoError(t, err, "re-encoded batch: %s", again)
		require.Len(t, batch2.Transactions, len(batch.Transactions))
	})
}

// Decoding a batch allocates per arena block and per slice, never per
// transaction: the fields are read through the table without a copy of
// their own (a kept string goes to the scanner's arena, a time is parsed
// from the body's bytes).
func TestValidateBatchJSONAllocationsDoNotGrowPerTransaction(t *testing.T) {
	small, large := benchBatch(10), benchBatch(2000)
	allocs := func(body []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, err := (Validator{}).ValidateBatchJSON(body); err != nil {
				t.Fatal(err)
			}
		})
	}
	a10, a2000 := allocs(small), allocs(large)
	require.Less(t, a2000-a10, 1000.0, "2,000 transactions cost %v allocations, 10 cost %v: about one per transaction", a2000, a10)
}

// ValidateBatchJSON reads the caller's bytes in place, yet nothing it
// returns is a view of them: after the call the caller may reuse the
// buffer (a pooled request body) and the Batch and the problems stay as
// they were. Plain strings, escaped ones, non-ASCII, the schema, a number
// and the values problems quote are all checked by overwriting the bytes.
func TestValidateBatchJSONOwnsWhatItReturns(t *testing.T) {
	valid, err := os.ReadFile("testdata/webhook/valid-batch.json")
	require.NoError(t, err)
	invalid, err := os.ReadFile("testdata/webhook/invalid-batch.json")
	require.NoError(t, err)
	tx := `{"agency":"BANK","orderno":"ORD-\u0031","amount":1.50,"name":"Siti \"Nur\" Aisyah \u6797","email":"siti@example.com",` +
		`"time":"2026-11-22T10:30:00+08:00","status":"success",` +
		`"data":{"zakat_name":"Siti Nur Aisyah 林美玲","zakat_address":"Jalan 1\nTaman 2","zakat_city":"Shah Alam"}}`
	bad := `{"agency":"BANK","orderno":"ORD-\u0031","amount":-1,"name":"x","email":"not an e-mail","time":"yesterday","status":"paid","data":{"zakat_ic_no":"12"}}`
	for _, tc := range []struct {
		name  string
		body  []byte
		valid bool
	}{
		{name: "valid batch", body: valid, valid: true},
		{name: "invalid batch", body: invalid},
		{name: "escapes and non-ASCII", body: []byte(`{"$schema":"urn:paygate:bank-webhook:v1","transactions":[` + tx + `]}`), valid: true},
		{name: "problems quoting values", body: []byte(`{"transactions":[` + tx + "," + bad + `]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantBatch, wantErr := Validator{}.ValidateBatchJSON(bytes.Clone(tc.body))
			buf := bytes.Clone(tc.body)
			gotBatch, gotErr := Validator{}.ValidateBatchJSON(buf)
			for i := range buf {
				buf[i] = 'X'
			}
			require.Equal(t, tc.valid, wantErr == nil, "%v", wantErr)
			require.Equal(t, wantBatch, gotBatch)
			require.Equal(t, wantErr, gotErr)
		})
	}
}

// ValidateBatchJSON's memory is bounded by its body's size, whatever the
// bytes: braces inside a string do not size the batch (4 MB of them sized
// it for 2 million transactions, 640 MB), and the transactions of a batch
// with a problem are not kept (3 bytes of [{},{},...] kept a 320-byte
// Transaction each). The bound counts every byte allocated, garbage
// included: past the 1,000 problems listed, the pointers of those dropped
// are built and thrown away.
func TestValidateBatchJSONMemoryBoundedByBody(t *testing.T) {
	const n = 1 << 20
	for _, tc := range []struct {
		name string
		body string
	}{
		{name: "braces in a string", body: `{"transactions":[],"x":"` + strings.Repeat("{", 4*n) + `"}`},
		{name: "elements that are not objects", body: `{"transactions":[` + strings.Repeat(`1,`, n) + `1]}`},
		{name: "empty transactions", body: `{"transactions":[` + strings.Repeat(`{},`, n) + `{}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Validator{}.ValidateBatchJSON(body)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			allocated := after.TotalAlloc - before.TotalAlloc
			require.Less(t, allocated, uint64(150*len(body)), "%d bytes allocated for a body of %d (%.0fx)", allocated, len(body), float64(allocated)/float64(len(body)))
		})
	}
}

// textCase is the JSON text of a string (quotes excluded, put raw in a
// body) and, when it is UTF-8, the string it reads as.
type textCase struct {
	name, text, want string
}

// notUTF8Texts are string texts that are not UTF-8 once read: invalid
// bytes, or a \u escape of an unpaired surrogate. encoding/json reads each
// as U+FFFD in place of the bad part, so that two of them read alike.
func notUTF8Texts() []textCase {
	return []textCase{
		{name: "raw 0xff", text: "INV-\xff1"},
		{name: "raw 0xfe", text: "INV-\xfe1"},
		{name: "lone continuation byte", text: "INV-\x801"},
		{name: "2-byte sequence cut at the end", text: "INV-\xc3"},
		{name: "3-byte sequence cut at the end", text: "INV-\xe2\x82"},
		{name: "4-byte sequence cut at the end", text: "INV-\xf0\x9f\x98"},
		{name: "sequence cut by an escape", text: "INV-\xe2\x82\\n"},
		{name: "invalid byte after an escape", text: "INV-\\n\xff"},
		{name: "overlong '/' in 2 bytes", text: "INV-\xc0\xaf"},
		{name: "overlong '/' in 3 bytes", text: "INV-\xe0\x80\xaf"},
		{name: "overlong '/' in 4 bytes", text: "INV-\xf0\x80\x80\xaf"},
		{name: "surrogate encoded in UTF-8", text: "INV-\xed\xa0\x80"},
		{name: "beyond U+10FFFF", text: "INV-\xf4\x90\x80\x80"},
		{name: "lone high surrogate escape", text: `INV-\ud800`},
		{name: "lone high surrogate escape at the end", text: `INV-\ud83d`},
		{name: "lone low surrogate escape", text: `INV-\udc00`},
		{name: "pair reversed", text: `INV-\ude00\ud83d`},
		{name: "high surrogate then a letter's escape", text: `INV-\ud83d\u0041`},
		{name: "high surrogate then another escape", text: `INV-\ud83d\n`},
		{name: "high surrogate then a pair", text: `INV-\ud83d\ud83d\ude00`},
	}
}

// utf8Texts are string texts near those of notUTF8Texts that are UTF-8,
// with what they read as.
func utf8Texts() []textCase {
	return []textCase{
		{name: "accented", text: "INV-\xc3\xa9", want: "INV-é"},
		{name: "escape of an accented letter", text: `INV-\u00e9`, want: "INV-é"},
		{name: "surrogate pair escape", text: `INV-\ud83d\ude00`, want: "INV-😀"},
		{name: "surrogate pair escape, upper case", text: `INV-\uD83D\uDE00`, want: "INV-😀"},
		{name: "4-byte sequence", text: "INV-\xf0\x9f\x98\x80", want: "INV-😀"},
		{name: "U+FFFD itself", text: "INV-\xef\xbf\xbd", want: "INV-\uFFFD"},
		{name: "escape of U+FFFD", text: `INV-\ufffd`, want: "INV-\uFFFD"},
		{name: "noncharacter U+FFFE", text: "INV-\xef\xbf\xbe", want: "INV-\uFFFE"},
		{name: "last code point", text: "INV-\xf4\x8f\xbf\xbf", want: "INV-\U0010FFFF"},
	}
}

// textPaths are the paths (as mutation.path) of every string a batch
// keeps: $schema, the string fields of a transaction and its data fields.
func textPaths() [][]string {
	paths := [][]string{{"", "$schema"}}
	for _, f := range txFields {
		if f.kind == kindString {
			paths = append(paths, []string{f.name})
		}
	}
	for _, f := range zakatFields {
		paths = append(paths, []string{"data", f.name})
	}
	return paths
}

// textPointer is the JSON pointer of a path of textPaths, in transaction 0.
func textPointer(path []string) string {
	if path[0] == "" {
		return "/" + path[1]
	}
	return "/transactions/0/" + strings.Join(path, "/")
}

// bodyWithText is a valid body of two transactions with the string at path
// (in transaction 0) given the JSON text text, raw.
func bodyWithText(t testing.TB, path []string, text string) []byte {
	t.Helper()
	const marker = "@text@"
	body := validBatchMap(2)
	target, key := body["transactions"].([]any)[0].(map[string]any), path[0]
	switch path[0] {
	case "":
		target, key = body, path[1]
	case "data":
		target, key = target["data"].(map[string]any), path[1]
	}
	target[key] = marker
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(raw, []byte(marker)))
	return bytes.Replace(raw, []byte(`"`+marker+`"`), []byte(`"`+text+`"`), 1)
}

// Every string a batch keeps that is not UTF-8 once read is a problem of
// its own, ruleUTF8 at its pointer, instead of its field's other rules;
// the stream reports the same in windows of every size.
func TestValidateBatchJSONRefusesTextNotUTF8(t *testing.T) {
	for _, path := range textPaths() {
		pointer := textPointer(path)
		want := []FieldError{{Field: pointer, Rule: ruleUTF8}}
		if pointer == "/transactions/0/data/zakat_type" { // not read: not a fitrah type
			want = append(want, FieldError{Field: "/transactions/0/data/zakat_rate", Rule: ruleFitrahOnly},
				FieldError{Field: "/transactions/0/data/zakat_dependant", Rule: ruleFitrahOnly})
		}
		for _, tc := range notUTF8Texts() {
			t.Run(pointer+"/"+tc.name, func(t *testing.T) {
				body := bodyWithText(t, path, tc.text)
				batch, err := Validator{}.ValidateBatchJSON(body)
				require.Nil(t, batch)
				require.Equal(t, want, problemsOf(t, err))
				requireSameAsJSON(t, body, 1, 2, 7, 64)
			})
		}
	}
}

// Text that is UTF-8, escaped or not, is read as it is, U+FFFD included.
func TestValidateBatchJSONReadsUTF8Text(t *testing.T) {
	read := map[string]func(b *Batch) string{ // the free-text fields
		"/$schema":                           func(b *Batch) string { return b.Schema },
		"/transactions/0/orderno":            func(b *Batch) string { return b.Transactions[0].OrderNo },
		"/transactions/0/name":               func(b *Batch) string { return b.Transactions[0].Name },
		"/transactions/0/data/zakat_name":    func(b *Batch) string { return b.Transactions[0].Data.Name },
		"/transactions/0/data/zakat_address": func(b *Batch) string { return b.Transactions[0].Data.Address },
		"/transactions/0/data/zakat_city":    func(b *Batch) string { return b.Transactions[0].Data.City },
	}
	for _, path := range textPaths() {
		pointer := textPointer(path)
		if read[pointer] == nil {
			continue
		}
		for _, tc := range utf8Texts() {
			t.Run(pointer+"/"+tc.name, func(t *testing.T) {
				body := bodyWithText(t, path, tc.text)
				batch, err := Validator{}.ValidateBatchJSON(body)
				require.NoError(t, err)
				require.Equal(t, tc.want, read[pointer](batch))
				requireSameAsJSON(t, body, 1, 2, 7, 64)
			})
		}
	}
}

// Two ordernos that differ only in bytes that are not UTF-8 are both
// refused as such, not read as one orderno given twice (encoding/json reads
// both as INV-\uFFFD1).
func TestValidateBatchJSONOrdernosNotUTF8AreNotDuplicates(t *testing.T) {
	for _, pair := range [][2]string{
		{"INV-\xff1", "INV-\xfe1"},
		{`INV-\ud8001`, `INV-\udbff1`},
		{"INV-\xff1", `INV-\udc001`},
	} {
		body := validBatchMap(2)
		for k, txAny := range body["transactions"].([]any) {
			txAny.(map[string]any)["orderno"] = fmt.Sprintf("@orderno%d@", k)
		}
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		for k, text := range pair {
			raw = bytes.Replace(raw, []byte(fmt.Sprintf(`"@orderno%d@"`, k)), []byte(`"`+text+`"`), 1)
		}
		var ref Batch
		require.NoError(t, json.Unmarshal(raw, &ref))
		require.Equal(t, ref.Transactions[0].OrderNo, ref.Transactions[1].OrderNo, "encoding/json reads %q and %q alike", pair[0], pair[1])

		_, err = Validator{}.ValidateBatchJSON(raw)
		require.Equal(t, []FieldError{
			{Field: "/transactions/0/orderno", Rule: ruleUTF8},
			{Field: "/transactions/1/orderno", Rule: ruleUTF8},
		}, problemsOf(t, err), "%q and %q", pair[0], pair[1])
		requireSameAsJSON(t, raw, 1, 2, 7, 64)
	}
}
