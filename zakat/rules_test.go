package zakat

import (
	"bytes"
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
		Agency:  AgencyLZS,
		OrderNo: fmt.Sprintf("ORD-%06d", i),
		Amount:  1050,
		Name:    "Ahmad bin Ali",
		Email:   "ahmad@example.com",
		Time:    time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("", 8*3600)),
		Status:  StatusSuccess,
		Data: Data{
			Email: "ahmad@example.com", Name: "Ahmad bin Ali", ICNo: "900101145678",
			State: Selangor, Type: ZakatFitrah, Year: "2026", Phone: "0123456789",
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
		{name: "valid", edit: func(*Transaction) {}},
		{name: "valid: zero amount", edit: func(tx *Transaction) { tx.Amount = 0; tx.Data.Rate = ""; tx.Data.Dependants = "" }},
		{name: "valid: test agency", edit: func(tx *Transaction) { tx.Agency = AgencyTest }},
		{name: "valid: minimal data", edit: func(tx *Transaction) { tx.Data = Data{} }},
		{name: "valid: fitrah type", edit: func(tx *Transaction) { tx.Data.Type = Fitrah }},
		{name: "valid: non-fitrah without rate", edit: func(tx *Transaction) {
			tx.Data.Type, tx.Data.Rate, tx.Data.Dependants = ZakatPendapatan, "", ""
		}},
		{name: "agency missing", edit: func(tx *Transaction) { tx.Agency = "" }, pointer: "/transactions/0/agency", rule: ruleRequired},
		{name: "agency unknown", edit: func(tx *Transaction) { tx.Agency = "BANKXYZ" }, pointer: "/transactions/0/agency", rule: "must be one of BANKLZS, BANKPPZ, BANK"},
		{name: "orderno missing", edit: func(tx *Transaction) { tx.OrderNo = "" }, pointer: "/transactions/0/orderno", rule: ruleRequired},
		{name: "amount negative", edit: func(tx *Transaction) { tx.Amount = -1 }, pointer: "/transactions/0/amount", rule: ruleAmountMin},
		{name: "name missing", edit: func(tx *Transaction) { tx.Name = "" }, pointer: "/transactions/0/name", rule: ruleRequired},
		{name: "email missing", edit: func(tx *Transaction) { tx.Email = "" }, pointer: "/transactions/0/email", rule: ruleRequired},
		{name: "email bad", edit: func(tx *Transaction) { tx.Email = "ahmad.example.com" }, pointer: "/transactions/0/email", rule: ruleEmail},
		{name: "email with name", edit: func(tx *Transaction) { tx.Email = "Ahmad <a@example.com>" }, pointer: "/transactions/0/email", rule: ruleEmail},
		{name: "time missing", edit: func(tx *Transaction) { tx.Time = time.Time{} }, pointer: "/transactions/0/time", rule: ruleRequired},
		{name: "time in year 10000", edit: func(tx *Transaction) { tx.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time before year 0", edit: func(tx *Transaction) { tx.Time = time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC) }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "time offset of a day", edit: func(tx *Transaction) { tx.Time = tx.Time.In(time.FixedZone("", 24*3600)) }, pointer: "/transactions/0/time", rule: ruleTime},
		{name: "valid: time at the end of year 9999", edit: func(tx *Transaction) { tx.Time = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC) }},
		{name: "valid: time offset of 23:59", edit: func(tx *Transaction) { tx.Time = tx.Time.In(time.FixedZone("", -(23*3600 + 59*60))) }},
		{name: "status missing", edit: func(tx *Transaction) { tx.Status = "" }, pointer: "/transactions/0/status", rule: ruleRequired},
		{name: "status unknown", edit: func(tx *Transaction) { tx.Status = "SUCCESS" }, pointer: "/transactions/0/status", rule: ruleStatus},
		{name: "data email", edit: func(tx *Transaction) { tx.Data.Email = "x@" }, pointer: "/transactions/0/data/email", rule: ruleEmail},
		{name: "ic short", edit: func(tx *Transaction) { tx.Data.ICNo = "90010114567" }, pointer: "/transactions/0/data/zakat_ic_no", rule: "must be 12 digits"},
		{name: "ic dashes", edit: func(tx *Transaction) { tx.Data.ICNo = "900101-14-5678" }, pointer: "/transactions/0/data/zakat_ic_no", rule: "must be 12 digits"},
		{name: "state", edit: func(tx *Transaction) { tx.Data.State = "Selangor" }, pointer: "/transactions/0/data/zakat_state", rule: zakatRule("zakat_state")},
		{name: "type", edit: func(tx *Transaction) { tx.Data.Type = "zakat_gaji"; tx.Data.Rate, tx.Data.Dependants = "", "" }, pointer: "/transactions/0/data/zakat_type", rule: zakatRule("zakat_type")},
		{name: "year", edit: func(tx *Transaction) { tx.Data.Year = "26" }, pointer: "/transactions/0/data/zakat_year", rule: "must be 4 digits"},
		{name: "phone short", edit: func(tx *Transaction) { tx.Data.Phone = "012345678" }, pointer: "/transactions/0/data/zakat_phone", rule: "must be 10 to 12 digits"},
		{name: "phone long", edit: func(tx *Transaction) { tx.Data.Phone = "0123456789012" }, pointer: "/transactions/0/data/zakat_phone", rule: "must be 10 to 12 digits"},
		{name: "phone plus", edit: func(tx *Transaction) { tx.Data.Phone = "+60123456789" }, pointer: "/transactions/0/data/zakat_phone", rule: "must be 10 to 12 digits"},
		{name: "postcode", edit: func(tx *Transaction) { tx.Data.Postcode = "4000" }, pointer: "/transactions/0/data/zakat_postcode", rule: "must be 5 digits"},
		{name: "zakat_amount 3 decimals", edit: func(tx *Transaction) { tx.Data.Amount = "10.505" }, pointer: "/transactions/0/data/zakat_amount", rule: "must be numeric with at most 2 decimals"},
		{name: "zakat_amount words", edit: func(tx *Transaction) { tx.Data.Amount = "ten" }, pointer: "/transactions/0/data/zakat_amount", rule: "must be numeric with at most 2 decimals"},
		{name: "zakat_amount trailing dot", edit: func(tx *Transaction) { tx.Data.Amount = "10." }, pointer: "/transactions/0/data/zakat_amount", rule: "must be numeric with at most 2 decimals"},
		{name: "rate not numeric", edit: func(tx *Transaction) { tx.Data.Rate = "2,6" }, pointer: "/transactions/0/data/zakat_rate", rule: "must be numeric"},
		{name: "dependant fraction", edit: func(tx *Transaction) { tx.Data.Dependants = "1.5" }, pointer: "/transactions/0/data/zakat_dependant", rule: "must be a whole number"},
		{name: "rate on non-fitrah", edit: func(tx *Transaction) { tx.Data.Type, tx.Data.Dependants = ZakatEmas, "" }, pointer: "/transactions/0/data/zakat_rate", rule: ruleFitrahOnly},
		{name: "dependant without type", edit: func(tx *Transaction) { tx.Data.Type, tx.Data.Rate = "", "" }, pointer: "/transactions/0/data/zakat_dependant", rule: ruleFitrahOnly},
		{name: "fitrah product", edit: func(tx *Transaction) { tx.Amount = 1051 }, pointer: "/transactions/0/amount", rule: ruleFitrahProduct},
		{name: "fitrah product of a zero amount", edit: func(tx *Transaction) { tx.Amount = 0 }, pointer: "/transactions/0/amount", rule: ruleFitrahProduct},
		{name: "valid: fitrah of a whole rate", edit: func(tx *Transaction) { tx.Amount, tx.Data.Rate, tx.Data.Dependants = 2100, "7", "3" }},
		{name: "valid: fitrah product beyond 64 bits", edit: func(tx *Transaction) {
			tx.Amount, tx.Data.Rate, tx.Data.Dependants = 100, "0.00000000000000000001", "100000000000000000000"
		}},
		{name: "fitrah product beyond 64 bits", edit: func(tx *Transaction) {
			tx.Amount, tx.Data.Rate, tx.Data.Dependants = 101, "0.00000000000000000001", "100000000000000000000"
		}, pointer: "/transactions/0/amount", rule: ruleFitrahProduct},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := validTx(0)
			tt.edit(&tx)
			probs := problemsOf(t, Validator{}.ValidateTransactions([]Transaction{tx}))
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
	probs := problemsOf(t, Validator{}.ValidateTransactions([]Transaction{a, b, c, c}))
	require.Len(t, probs, 3)
	require.Equal(t, "/transactions/1/email", probs[0].Field)
	require.Equal(t, "/transactions/2/orderno", probs[1].Field)
	require.Equal(t, ruleUnique+" (also at /transactions/0/orderno)", probs[1].Rule)
	require.Equal(t, "ORD-000000", probs[1].Value)
	require.Equal(t, "/transactions/3/orderno", probs[2].Field)
	require.Equal(t, ruleUnique+" (also at /transactions/0/orderno)", probs[2].Rule, "a repeat names the first, not the last")
	require.NoError(t, Validator{}.ValidateTransactions(nil))
}

// notUTF8Strings are Go strings that are not UTF-8, which json.Marshal
// would send with U+FFFD in place of their bad bytes.
func notUTF8Strings() []textCase {
	return []textCase{
		{name: "raw 0xff", text: "INV-\xff1"},
		{name: "lone continuation byte", text: "INV-\x801"},
		{name: "sequence cut at the end", text: "INV-\xe2\x82"},
		{name: "overlong '/'", text: "INV-\xc0\xaf"},
		{name: "surrogate encoded in UTF-8", text: "INV-\xed\xa0\x80"},
		{name: "beyond U+10FFFF", text: "INV-\xf4\x90\x80\x80"},
	}
}

// setText sets the string at path (a path of textPaths, not $schema) of a
// typed transaction.
func setText(tx *Transaction, path []string, s string) {
	if path[0] == "data" {
		*zakatFields[bitOf(zakatFields[:], path[1])].ptr(&tx.Data) = s
		return
	}
	txFields[bitOf(txFields[:], path[0])].store(tx, s)
}

// bitOf is the index of the row named name.
func bitOf[R interface{ key() string }](rows []R, name string) int {
	for i, r := range rows {
		if r.key() == name {
			return i
		}
	}
	panic(name)
}

// A typed string that is not UTF-8 is a problem of its own, ruleUTF8 at
// its pointer, instead of its field's other rules; UTF-8 text, U+FFFD
// included, is valid.
func TestValidateTransactionsRefusesTextNotUTF8(t *testing.T) {
	for _, path := range textPaths() {
		if path[0] == "" || path[0] == "time" { // not a string of a Transaction
			continue
		}
		pointer := textPointer(path)
		for _, tc := range notUTF8Strings() {
			t.Run(pointer+"/"+tc.name, func(t *testing.T) {
				tx := validTx(0)
				setText(&tx, path, tc.text)
				want := []FieldError{{Field: pointer, Rule: ruleUTF8}}
				if pointer == "/transactions/0/data/zakat_type" { // not a fitrah type
					want = append(want, FieldError{Field: "/transactions/0/data/zakat_rate", Rule: ruleFitrahOnly, Value: tc.text},
						FieldError{Field: "/transactions/0/data/zakat_dependant", Rule: ruleFitrahOnly, Value: tc.text})
				}
				require.Equal(t, want, problemsOf(t, Validator{}.ValidateTransactions([]Transaction{tx})))
			})
		}
	}
	for _, s := range []string{"INV-é", "INV-\uFFFD", "INV-\U0010FFFF"} {
		tx := validTx(0)
		tx.OrderNo, tx.Name, tx.Data.City = s, s, s
		require.NoError(t, Validator{}.ValidateTransactions([]Transaction{tx}), "%q", s)
	}
}

// Two typed ordernos that differ only in bytes that are not UTF-8, which
// json.Marshal sends as one orderno, are both refused as such, not as
// duplicates.
func TestValidateTransactionsOrdernosNotUTF8AreNotDuplicates(t *testing.T) {
	a, b := validTx(0), validTx(1)
	a.OrderNo, b.OrderNo = "INV-\xff1", "INV-\xfe1"
	ja, err := json.Marshal(a.OrderNo)
	require.NoError(t, err)
	jb, err := json.Marshal(b.OrderNo)
	require.NoError(t, err)
	require.Equal(t, ja, jb, "json.Marshal sends both as one orderno")

	require.Equal(t, []FieldError{
		{Field: "/transactions/0/orderno", Rule: ruleUTF8},
		{Field: "/transactions/1/orderno", Rule: ruleUTF8},
	}, problemsOf(t, Validator{}.ValidateTransactions([]Transaction{a, b})))

	b.OrderNo = a.OrderNo // the same bytes: still refused as text, not compared
	require.Equal(t, []FieldError{
		{Field: "/transactions/0/orderno", Rule: ruleUTF8},
		{Field: "/transactions/1/orderno", Rule: ruleUTF8},
	}, problemsOf(t, Validator{}.ValidateTransactions([]Transaction{a, b})))
}

// A typed string's UTF-8 rule reads its own field: an agency that is not
// UTF-8 beside a missing orderno is refused as such (not as an unknown
// code), and the orderno as missing.
func TestValidateTransactionsTextNotUTF8BesideAMissingField(t *testing.T) {
	tx := validTx(0)
	tx.Agency, tx.OrderNo = "\xff", ""
	require.Equal(t, []FieldError{
		{Field: "/transactions/0/agency", Rule: ruleUTF8},
		{Field: "/transactions/0/orderno", Rule: ruleRequired},
	}, problemsOf(t, Validator{}.ValidateTransactions([]Transaction{tx})))
}

// The fitrah product's problem names the product it wants, in ringgit
// and sen, and the amount given.
func TestValidateTransactionsFitrahProductNamesTheProduct(t *testing.T) {
	tx := validTx(0)
	tx.Amount = 1051
	require.Equal(t, []FieldError{
		{Field: "/transactions/0/amount", Rule: ruleFitrahProduct + " (2.625 x 4 = 10.50)", Value: "10.51"},
	}, problemsOf(t, Validator{}.ValidateTransactions([]Transaction{tx})))
}

// Ordernos are unique byte for byte, on the typed path as on the JSON ones
// (docs/assumptions.md A-webhook-encoding): ordernos that differ only in
// case or in white space are different transactions, and none is refused;
// an exact repeat is.
func TestOrderNoUniqueByteForByte(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ordernos []string
		repeats  int
	}{
		{name: "case", ordernos: []string{"ORD-a", "ORD-A"}},
		{name: "a trailing space", ordernos: []string{"ORD-1", "ORD-1 "}},
		{name: "a leading tab", ordernos: []string{"ORD-1", "\tORD-1"}},
		{name: "an exact repeat", ordernos: []string{"ORD-1", "ORD-1"}, repeats: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			txs := make([]Transaction, len(tt.ordernos))
			for i, no := range tt.ordernos {
				txs[i] = validTx(i)
				txs[i].OrderNo = no
			}
			body, err := json.Marshal(Batch{Transactions: txs})
			require.NoError(t, err)
			count := func(err error) int {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					return 0
				}
				n := 0
				for _, p := range ve.Problems {
					if strings.HasPrefix(p.Rule, ruleUnique) {
						n++
					}
				}
				return n
			}
			_, jsonErr := Validator{}.ValidateBatchJSON(body)
			_, readerErr := Validator{}.ValidateBatchReader(bytes.NewReader(body))
			require.Equal(t, tt.repeats, count(Validator{}.ValidateTransactions(txs)), "typed")
			require.Equal(t, tt.repeats, count(jsonErr), "JSON")
			require.Equal(t, tt.repeats, count(readerErr), "reader")
		})
	}
}
