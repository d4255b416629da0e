package paygate

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr string
	}{
		{in: "10", want: 1000, wantErr: ""},
		{in: "10.5", want: 1050, wantErr: ""},
		{in: "10.50", want: 1050, wantErr: ""},
		{in: "0", want: 0, wantErr: ""},
		{in: "0.01", want: 1, wantErr: ""},
		{in: "007.00", want: 700, wantErr: ""},
		{in: "92233720368547758.07", want: math.MaxInt64, wantErr: ""},
		{in: "92233720368547758.08", want: 0, wantErr: "too large"},
		{in: "99999999999999999999", want: 0, wantErr: "too large"},
		{in: "10.505", want: 0, wantErr: "more than two decimals"},
		{in: "10.500", want: 0, wantErr: "more than two decimals"},
		{in: "-1", want: 0, wantErr: `unexpected '-'`},
		{in: "1e3", want: 0, wantErr: `unexpected 'e'`},
		{in: "", want: 0, wantErr: "empty"},
		{in: " 10", want: 0, wantErr: `unexpected ' '`},
		{in: "10 ", want: 0, wantErr: `unexpected ' '`},
		{in: "1,000.00", want: 0, wantErr: `unexpected ','`},
		{in: "10.", want: 0, wantErr: "no digit after the decimal point"},
		{in: ".5", want: 0, wantErr: "no digit before the decimal point"},
		{in: "1.2.3", want: 0, wantErr: `unexpected '.'`},
		{in: "+1", want: 0, wantErr: `unexpected '+'`},
		{in: "RM10", want: 0, wantErr: `unexpected 'R'`},
		{in: "1.x5", want: 0, wantErr: `unexpected 'x'`},
		{in: "1.-5", want: 0, wantErr: `unexpected '-'`},
		{in: "1. ", want: 0, wantErr: `unexpected ' '`},
		{in: "92233720368547758", want: 9223372036854775800, wantErr: ""},
		{in: "92233720368547759", want: 0, wantErr: "too large"},
		{in: "1.0" + string(make([]byte, 62)), want: 0, wantErr: "…"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseAmount(tt.in)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidAmount)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestAmountString(t *testing.T) {
	tests := []struct {
		in   Amount
		want string
	}{
		{in: 0, want: "0.00"}, {in: 1, want: "0.01"}, {in: 10, want: "0.10"}, {in: 100, want: "1.00"}, {in: 1230, want: "12.30"},
		{in: 123456789, want: "1234567.89"}, {in: -5, want: "-0.05"}, {in: -1230, want: "-12.30"},
		{in: math.MaxInt64, want: "92233720368547758.07"}, {in: math.MinInt64, want: "-92233720368547758.08"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.in.String())
		b, err := json.Marshal(tt.in)
		require.NoError(t, err)
		require.Equal(t, tt.want, string(b))
	}
}

func TestAmountJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr string
	}{
		{in: `12.30`, want: 1230, wantErr: ""},
		{in: `12.3`, want: 1230, wantErr: ""},
		{in: `12`, want: 1200, wantErr: ""},
		{in: `0`, want: 0, wantErr: ""},
		{in: `0.00`, want: 0, wantErr: ""},
		{in: `12.300`, want: 1230, wantErr: ""},
		{in: `1.5e2`, want: 15000, wantErr: ""},
		{in: `1E+2`, want: 10000, wantErr: ""},
		{in: `1234e-2`, want: 1234, wantErr: ""},
		{in: `0e-5000`, want: 0, wantErr: "exponent out of range"},
		{in: `0.000`, want: 0, wantErr: ""},
		{in: `12.305`, want: 0, wantErr: "finer than one sen"},
		{in: `1e-3`, want: 0, wantErr: "finer than one sen"},
		{in: `-1`, want: 0, wantErr: "must be >= 0"},
		{in: `-0.00`, want: 0, wantErr: ""},
		{in: `-0.01`, want: 0, wantErr: "must be >= 0"},
		{in: `"12.30"`, want: 0, wantErr: "not a string"},
		{in: `true`, want: 0, wantErr: "not a JSON number"},
		{in: `92233720368547758.07`, want: math.MaxInt64, wantErr: ""},
		{in: `92233720368547758.08`, want: 0, wantErr: "too large"},
		{in: `1e30`, want: 0, wantErr: "too large"},
		{in: `1e999999`, want: 0, wantErr: "exponent out of range"},
		{in: `0e1000`, want: 0, wantErr: ""},
		{in: `0e-1000`, want: 0, wantErr: ""},
		{in: `0e1001`, want: 0, wantErr: "exponent out of range"},
		{in: `0e-5`, want: 0, wantErr: ""},
		{in: `92233720368547758`, want: 9223372036854775800, wantErr: ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got Amount
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidAmount)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}

	var empty Amount
	require.ErrorIs(t, empty.UnmarshalJSON(nil), ErrInvalidAmount, "no bytes: an error, not a panic")
	require.ErrorContains(t, empty.UnmarshalJSON([]byte(`"`)), "not a string", "a lone quote opens a string")
	got := Amount(77)
	require.NoError(t, json.Unmarshal([]byte(`null`), &got))
	require.Equal(t, Amount(77), got, "null leaves the value alone")
	var s struct{ A Amount }
	require.NoError(t, json.Unmarshal([]byte(`{"A":1.05}`), &s))
	require.Equal(t, Amount(105), s.A)
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"10", "10.5", "10.50", "10.505", "-1", "1e3", "", " 10", "1,000.00", "92233720368547758.07", "1.x5", "92233720368547758"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAmount(s)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidAmount)
			return
		}
		require.GreaterOrEqual(t, a, Amount(0))
		back, err := ParseAmount(a.String())
		require.NoError(t, err)
		require.Equal(t, a, back)
		var j Amount
		require.NoError(t, j.UnmarshalJSON([]byte(s)), "the JSON reader takes every valid amount text")
		require.Equal(t, a, j)
	})
}

func FuzzAmountJSON(f *testing.F) {
	for _, s := range []string{"12.30", "1.5e2", "-1", `"1"`, "1e-3", "0e9", "1E400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a Amount
		if err := a.UnmarshalJSON([]byte(s)); err != nil {
			return
		}
		require.GreaterOrEqual(t, a, Amount(0))
		b, err := json.Marshal(a)
		require.NoError(t, err)
		var back Amount
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, a, back)
	})
}

// An invalid amount is quoted whole in its error up to maxErrorValue
// bytes, and cut with … past them.
func TestAmountErrorQuotesUpToTheCap(t *testing.T) {
	atCap := "1.x" + strings.Repeat("9", maxErrorValue-3)
	_, err := ParseAmount(atCap)
	require.ErrorContains(t, err, strconv.Quote(atCap))
	_, err = ParseAmount(atCap + "9")
	require.ErrorContains(t, err, strconv.Quote(atCap)[:len(atCap)+1]+"…")
}
