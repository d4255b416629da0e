package paygate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
