package zakat

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zakatRule is the rule text of the data field name.
func zakatRule(name string) string {
	return zakatFields[zakatIndex(name)].rule
}

// The lookups find every row of their table by its name and nothing else,
// and the bits the cross-field rules read are those of the fields they name.
func TestFieldLookups(t *testing.T) {
	for bit, f := range txFields {
		require.Equal(t, bit, txIndex(f.name), f.name)
	}
	for bit, f := range zakatFields {
		require.Equal(t, bit, zakatIndex(f.name), f.name)
	}
	for _, key := range []string{"", "a", "Agency", "agencyx", "agenc", "emai", "zakat_rates", "zakat_", "email ", "zakat_dependants"} {
		require.Equal(t, -1, txIndex(key), key)
		require.Equal(t, -1, zakatIndex(key), key)
	}
	require.Equal(t, -1, txIndex("zakat_name"), "a data key is not a transaction key")
	require.Equal(t, -1, zakatIndex("orderno"), "a transaction key is not a data key")
	for _, tt := range []struct {
		bit   uint16
		index func(string) int
		name  string
	}{
		{bit: txOrderNo, index: txIndex[string], name: "orderno"},
		{bit: txAmount, index: txIndex[string], name: "amount"},
		{bit: txData, index: txIndex[string], name: "data"},
		{bit: zdRate, index: zakatIndex[string], name: "zakat_rate"},
		{bit: zdDependant, index: zakatIndex[string], name: "zakat_dependant"},
	} {
		require.Equal(t, uint16(1)<<tt.index(tt.name), tt.bit, tt.name)
	}
	require.Equal(t, uint16(1)<<len(txFields)-1, txAll)
	require.PanicsWithValue(t, "paygate: zakat_rates is not a field of its table", func() { rowBit(zakatFields[:], "zakat_rates") })
}

// The enum rules list exactly the allowed values, in the messages a bank's
// operator reads.
func TestEnumRulesListTheirValues(t *testing.T) {
	for _, tt := range []struct {
		rule   string
		values []string
	}{
		{rule: zakatRule("zakat_state"), values: func() (v []string) {
			for _, s := range States() {
				v = append(v, string(s))
			}
			return v
		}()},
		{rule: zakatRule("zakat_type"), values: func() (v []string) {
			for _, z := range Types() {
				v = append(v, string(z))
			}
			return v
		}()},
	} {
		listed := strings.Split(strings.TrimPrefix(tt.rule, "must be one of "), ", ")
		require.ElementsMatch(t, tt.values, listed)
	}
}

// The schema names the fields of the tables: the transaction's properties
// and required list are txFields in order, the data object's properties are
// zakatFields in order, and the fields it forbids for a non-fitrah type are
// the fitrahOnly rows. (TestWebhookSchemaAgreement checks the rules.)
func TestSchemaNamesTheTableFields(t *testing.T) {
	var schema struct {
		Defs struct {
			Transaction struct {
				Required   []string        `json:"required"`
				Properties json.RawMessage `json:"properties"`
			} `json:"transaction"`
			Data struct {
				Properties json.RawMessage `json:"properties"`
				Else       struct {
					Properties json.RawMessage `json:"properties"`
				} `json:"else"`
			} `json:"data"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(Validator{}.Schema(), &schema))
	var txNames, dataNames, fitrahOnly []string
	for _, f := range txFields {
		txNames = append(txNames, f.name)
	}
	for _, f := range zakatFields {
		dataNames = append(dataNames, f.name)
		if f.fitrahOnly {
			fitrahOnly = append(fitrahOnly, f.name)
		}
	}
	const fix = "schema.json against the rows of fields.go, in their order: "
	require.Equal(t, txNames, schema.Defs.Transaction.Required, fix+"$defs.transaction.required is txFields")
	require.Equal(t, txNames, objectKeys(t, schema.Defs.Transaction.Properties), fix+"$defs.transaction.properties are txFields")
	require.Equal(t, dataNames, objectKeys(t, schema.Defs.Data.Properties), fix+"$defs.data.properties are zakatFields")
	require.Equal(t, fitrahOnly, objectKeys(t, schema.Defs.Data.Else.Properties), fix+"$defs.data.else.properties are the fitrahOnly rows")
}

// objectKeys lists the keys of a JSON object in the order they are written.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var keys []string
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return slices.Clip(keys)
}

// Every string of a Transaction has a row whose text reads it (what
// ValidateTransactions checks for UTF-8: a string field without text would
// go out unchecked), and text reads what store writes.
func TestTextReadsEveryTransactionString(t *testing.T) {
	typ := reflect.TypeFor[Transaction]()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if sf.Type.Kind() != reflect.String {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		bit := txIndex(name)
		require.GreaterOrEqual(t, bit, 0, "%s has no row", sf.Name)
		f := txFields[bit]
		require.NotNil(t, f.text, "row %s has no text", name)
		var tx Transaction
		f.store(&tx, "x\xff")
		require.Equal(t, "x\xff", f.text(&tx), name)
	}
}
