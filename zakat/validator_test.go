package zakat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewValidator(t *testing.T) {
	tests := []struct {
		name    string
		codes   []Agency
		want    []Agency
		wantErr string
	}{
		{name: "none: the document's", want: []Agency{"BANKLZS", "BANKPPZ", "BANK"}},
		{name: "the bank webhook page's", codes: ADBAgencies(), want: []Agency{"ADBLZS", "ADBPPZ", "ADB"}},
		{name: "one, order kept", codes: []Agency{"B_2", "a-1"}, want: []Agency{"B_2", "a-1"}},
		{name: "empty code", codes: []Agency{"ADB", ""}, wantErr: `agency ""`},
		{name: "space", codes: []Agency{"AD B"}, wantErr: `agency "AD B"`},
		{name: "quote", codes: []Agency{`AD"B`}, wantErr: `want 1 to 64`},
		{name: "non-ASCII", codes: []Agency{"ADBÉ"}, wantErr: `want 1 to 64`},
		{name: "too long", codes: []Agency{Agency(strings.Repeat("A", 65))}, wantErr: "want 1 to 64"},
		{name: "twice", codes: []Agency{"ADB", "ADBLZS", "ADB"}, wantErr: `agency "ADB": given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewValidator(tt.codes...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, v.Agencies())
			for _, a := range tt.want {
				require.True(t, v.Accepts(a), a)
			}
			require.False(t, v.Accepts("OTHER"))
			require.False(t, v.Accepts(""))
		})
	}
	require.Equal(t, Agencies(), Validator{}.Agencies(), "the zero value is the document's")
	codes := []Agency{"X1"}
	v, err := NewValidator(codes...)
	require.NoError(t, err)
	codes[0] = "CHANGED"
	v.Agencies()[0] = "CHANGED"
	require.Equal(t, []Agency{"X1"}, v.Agencies(), "the validator keeps its own copy")
}

// A list in the form of PAYGATE_WEBHOOK_AGENCIES, read by
// ParseAgencies, makes the validator of its codes, and a list with a
// bad or repeated code is refused.
func TestNewValidatorFromList(t *testing.T) {
	tests := []struct {
		in      string
		want    []Agency
		wantErr bool
	}{
		{in: "", want: Agencies()},
		{in: "  ", want: Agencies()},
		{in: "ADBLZS,ADBPPZ,ADB", want: ADBAgencies()},
		{in: " ADBLZS , ADBPPZ,ADB ", want: ADBAgencies()},
		{in: "ADB", want: []Agency{"ADB"}},
		{in: "ADB,,ADBLZS", wantErr: true},
		{in: "ADB,", wantErr: true},
		{in: "ADB,ADB", wantErr: true},
		{in: "ADB;ADBLZS", wantErr: true},
	}
	for _, tt := range tests {
		v, err := NewValidator(ParseAgencies(tt.in)...)
		if tt.wantErr {
			require.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, v.Agencies(), tt.in)
	}
}

// The three validators of a Validator (typed, whole body,
// streaming) accept its codes and refuse the others, naming the codes.
func TestValidatorAgencies(t *testing.T) {
	adb, err := NewValidator(ADBAgencies()...)
	require.NoError(t, err)
	// Every refusal names the set in force, whose it is, and the three ways
	// to set another (issue 31: the real brand's codes were refused with
	// no word of -agencies or PAYGATE_WEBHOOK_AGENCIES).
	const (
		how      = "; set them with zakat.NewValidator, PAYGATE_WEBHOOK_AGENCIES or the CLI's -agencies)"
		document = "must be one of BANKLZS, BANKPPZ, BANK (the document's placeholders, the default; the real service's are ADBLZS, ADBPPZ, ADB" + how
		inForce  = "must be one of ADBLZS, ADBPPZ, ADB (the codes in force" + how
	)
	tests := []struct {
		name   string
		rules  Validator
		agency Agency
		rule   string // "": valid
	}{
		{name: "document: BANKLZS", rules: Validator{}, agency: "BANKLZS"},
		{name: "document: BANK", rules: Validator{}, agency: "BANK"},
		{name: "document: ADBLZS", rules: Validator{}, agency: "ADBLZS", rule: document},
		{name: "ADB: ADBLZS", rules: adb, agency: "ADBLZS"},
		{name: "ADB: ADBPPZ", rules: adb, agency: "ADBPPZ"},
		{name: "ADB: ADB", rules: adb, agency: "ADB"},
		{name: "ADB: BANKLZS", rules: adb, agency: "BANKLZS", rule: inForce},
		{name: "ADB: adb", rules: adb, agency: "adb", rule: inForce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			txs := []Transaction{validTx(0), validTx(1)}
			txs[0].Agency, txs[1].Agency = tt.agency, tt.rules.Agencies()[0]
			body, err := json.Marshal(Batch{Transactions: txs})
			require.NoError(t, err)
			typedErr := tt.rules.ValidateTransactions(txs)
			_, jsonErr := tt.rules.ValidateBatchJSON(body)
			n, streamErr := tt.rules.ValidateBatchReader(bytes.NewReader(body))
			require.Equal(t, 2, n)
			for _, err := range []error{typedErr, jsonErr, streamErr} {
				if tt.rule == "" {
					require.NoError(t, err)
					continue
				}
				requireProblem(t, problemsOf(t, err), "/transactions/0/agency", tt.rule)
				require.Equal(t, tt.rule, problemsOf(t, err)[0].Rule, "the whole text")
			}
		})
	}
}

// A validator's schema is the zero value's with its codes in the agency enum
// and nothing else changed; the zero value's is the embedded schema.
func TestValidatorSchema(t *testing.T) {
	require.Equal(t, Validator{}.Schema(), Validator{}.Schema())
	adb, err := NewValidator(ADBAgencies()...)
	require.NoError(t, err)
	var doc, want map[string]any
	require.NoError(t, json.Unmarshal(adb.Schema(), &doc))
	require.NoError(t, json.Unmarshal(Validator{}.Schema(), &want))
	agency := doc["$defs"].(map[string]any)["transaction"].(map[string]any)["properties"].(map[string]any)["agency"].(map[string]any)
	require.Equal(t, []any{"ADBLZS", "ADBPPZ", "ADB"}, agency["enum"])
	agency["enum"] = []any{"BANKLZS", "BANKPPZ", "BANK"}
	require.Equal(t, want, doc, "only the enum differs")
	require.Contains(t, string(Validator{}.Schema()), defaultAgencyEnum, "the embedded schema holds the enum Schema replaces")
}

// A validator's schema holds its codes whatever the line ends of the
// embedded schema: a checkout by Git for Windows (core.autocrlf) embeds
// CRLF, where the enum went unreplaced and the document's codes came back.
func TestValidatorSchemaLineEnds(t *testing.T) {
	adb, err := NewValidator(ADBAgencies()...)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		base []byte
	}{
		{name: "LF", base: Validator{}.Schema()},
		{name: "CRLF", base: bytes.ReplaceAll(Validator{}.Schema(), []byte("\n"), []byte("\r\n"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(adb.schemaFrom(tc.base), &doc))
			agency := doc["$defs"].(map[string]any)["transaction"].(map[string]any)["properties"].(map[string]any)["agency"].(map[string]any)
			require.Equal(t, []any{"ADBLZS", "ADBPPZ", "ADB"}, agency["enum"])
		})
	}
}

// The value cap the caller sets with WithMaxValueBytes, raised or lowered,
// is the one in force on the whole body and on the stream (whose windows,
// 256 KiB, are shorter than a raised cap's longest value): a value within
// a raised cap, though over the default, is no problem; one over a
// lowered cap is, naming that cap.
func TestWebhookValueCapInForceOnEveryPath(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxValue int
		length   int    // bytes of the name (plain ASCII)
		rule     string // "": within the cap
	}{
		{name: "raised: 300 KiB, a 280 KiB name", maxValue: 300 << 10, length: 280 << 10},
		{name: "raised: a name at the cap", maxValue: 100 << 10, length: 100 << 10},
		{name: "raised: a name one byte over", maxValue: 100 << 10, length: 100<<10 + 1, rule: fmt.Sprintf(ruleTooLong, 100<<10)},
		{name: "lowered: 200 bytes, a name one byte over", maxValue: 200, length: 201, rule: fmt.Sprintf(ruleTooLong, 200)},
		{name: "lowered: 200 bytes, a name at the cap", maxValue: 200, length: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch := validBatchMap(1)
			batch["transactions"].([]any)[0].(map[string]any)["name"] = strings.Repeat("n", tc.length)
			body, err := json.Marshal(batch)
			require.NoError(t, err)
			var want []FieldError
			if tc.rule != "" {
				want = []FieldError{{Field: "/transactions/0/name", Rule: tc.rule}}
			}
			v := Validator{}.WithMaxValueBytes(tc.maxValue)
			_, whole := v.ValidateBatchJSON(body)
			require.Equal(t, want, problemsOf(t, whole), "ValidateBatchJSON")
			n, streamed := v.ValidateBatchReader(bytes.NewReader(body))
			require.Equal(t, want, problemsOf(t, streamed), "ValidateBatchReader")
			require.Equal(t, 1, n)
		})
	}
}
