package paygate

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr string
	}{
		{"10", 1000, ""},
		{"10.5", 1050, ""},
		{"10.50", 1050, ""},
		{"0", 0, ""},
		{"0.01", 1, ""},
		{"007.00", 700, ""},
		{"92233720368547758.07", math.MaxInt64, ""},
		{"92233720368547758.08", 0, "too large"},
		{"99999999999999999999", 0, "too large"},
		{"10.505", 0, "more than two decimals"},
		{"10.500", 0, "more than two decimals"},
		{"-1", 0, `unexpected '-'`},
		{"1e3", 0, `unexpected 'e'`},
		{"", 0, "empty"},
		{" 10", 0, `unexpected ' '`},
		{"10 ", 0, `unexpected ' '`},
		{"1,000.00", 0, `unexpected ','`},
		{"10.", 0, "no digit after the decimal point"},
		{".5", 0, "no digit before the decimal point"},
		{"1.2.3", 0, `unexpected '.'`},
		{"+1", 0, `unexpected '+'`},
		{"RM10", 0, `unexpected 'R'`},
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
		{0, "0.00"}, {1, "0.01"}, {10, "0.10"}, {100, "1.00"}, {1230, "12.30"},
		{123456789, "1234567.89"}, {-5, "-0.05"}, {-1230, "-12.30"},
		{math.MaxInt64, "92233720368547758.07"}, {math.MinInt64, "-92233720368547758.08"},
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
		{`12.30`, 1230, ""},
		{`12.3`, 1230, ""},
		{`12`, 1200, ""},
		{`0`, 0, ""},
		{`0.00`, 0, ""},
		{`12.300`, 1230, ""},
		{`1.5e2`, 15000, ""},
		{`1E+2`, 10000, ""},
		{`1234e-2`, 1234, ""},
		{`0e-5000`, 0, "exponent out of range"},
		{`0.000`, 0, ""},
		{`12.305`, 0, "finer than one sen"},
		{`1e-3`, 0, "finer than one sen"},
		{`-1`, 0, "must be >= 0"},
		{`-0.00`, 0, ""},
		{`-0.01`, 0, "must be >= 0"},
		{`"12.30"`, 0, "not a string"},
		{`true`, 0, "not a JSON number"},
		{`92233720368547758.07`, math.MaxInt64, ""},
		{`92233720368547758.08`, 0, "too large"},
		{`1e30`, 0, "too large"},
		{`1e999999`, 0, "exponent out of range"},
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

	got := Amount(77)
	require.NoError(t, json.Unmarshal([]byte(`null`), &got))
	require.Equal(t, Amount(77), got, "null leaves the value alone")
	var s struct{ A Amount }
	require.NoError(t, json.Unmarshal([]byte(`{"A":1.05}`), &s))
	require.Equal(t, Amount(105), s.A)
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"10", "10.5", "10.50", "10.505", "-1", "1e3", "", " 10", "1,000.00", "92233720368547758.07"} {
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
