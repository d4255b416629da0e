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
		{"ic short", func(tx *Transaction) { tx.Data.ICNo = "90010114567" }, "/transactions/0/data/zakat_ic_no", "must be 12 digits"},
		{"ic dashes", func(tx *Transaction) { tx.Data.ICNo = "900101-14-5678" }, "/transactions/0/data/zakat_ic_no", "must be 12 digits"},
		{"state", func(tx *Transaction) { tx.Data.State = "Selangor" }, "/transactions/0/data/zakat_state", zakatRule("zakat_state")},
		{"type", func(tx *Transaction) { tx.Data.Type = "zakat_gaji"; tx.Data.Rate, tx.Data.Dependants = "", "" }, "/transactions/0/data/zakat_type", zakatRule("zakat_type")},
		{"year", func(tx *Transaction) { tx.Data.Year = "26" }, "/transactions/0/data/zakat_year", "must be 4 digits"},
		{"phone short", func(tx *Transaction) { tx.Data.Phone = "012345678" }, "/transactions/0/data/zakat_phone", "must be 10 to 12 digits"},
		{"phone long", func(tx *Transaction) { tx.Data.Phone = "0123456789012" }, "/transactions/0/data/zakat_phone", "must be 10 to 12 digits"},
		{"phone plus", func(tx *Transaction) { tx.Data.Phone = "+60123456789" }, "/transactions/0/data/zakat_phone", "must be 10 to 12 digits"},
		{"postcode", func(tx *Transaction) { tx.Data.Postcode = "4000" }, "/transactions/0/data/zakat_postcode", "must be 5 digits"},
		{"zakat_amount 3 decimals", func(tx *Transaction) { tx.Data.Amount = "10.505" }, "/transactions/0/data/zakat_amount", "must be numeric with at most 2 decimals"},
		{"zakat_amount words", func(tx *Transaction) { tx.Data.Amount = "ten" }, "/transactions/0/data/zakat_amount", "must be numeric with at most 2 decimals"},
		{"zakat_amount trailing dot", func(tx *Transaction) { tx.Data.Amount = "10." }, "/transactions/0/data/zakat_amount", "must be numeric with at most 2 decimals"},
		{"rate not numeric", func(tx *Transaction) { tx.Data.Rate = "2,6" }, "/transactions/0/data/zakat_rate", "must be numeric"},
		{"dependant fraction", func(tx *Transaction) { tx.Data.Dependants = "1.5" }, "/transactions/0/data/zakat_dependant", "must be a whole number"},
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
