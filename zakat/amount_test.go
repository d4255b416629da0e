package zakat

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A transaction's amount reads and writes JSON numbers exactly in sen, as
// paygate.Amount does (both are internal/sen), and its errors match
// ErrInvalidAmount.
func TestAmountJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr string
	}{
		{in: `12.30`, want: 1230},
		{in: `12.300`, want: 1230},
		{in: `1.5e2`, want: 15000},
		{in: `-0.00`, want: 0},
		{in: `10.505`, wantErr: "finer than one sen"},
		{in: `-1`, wantErr: "must be >= 0"},
		{in: `"12.30"`, wantErr: "a JSON number is required"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			a := Amount(7)
			err := json.Unmarshal([]byte(tt.in), &a)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidAmount)
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, Amount(7), a, "unchanged on error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, a)
			out, err := json.Marshal(a)
			require.NoError(t, err)
			require.Equal(t, a.String(), string(out))
		})
	}
	a := Amount(7)
	require.NoError(t, json.Unmarshal([]byte(`null`), &a))
	require.Equal(t, Amount(7), a, "null leaves it unchanged")
	require.Equal(t, "0.07", a.String())
}
