package webhooktime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParse reads each form the rule allows and refuses its near misses.
func TestParse(t *testing.T) {
	plus8 := time.FixedZone("", 8*3600)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2024-01-02T03:04Z", time.Date(2024, 1, 2, 3, 4, 0, 0, time.UTC), true},
		{"2024-01-02T03:04:05+08:00", time.Date(2024, 1, 2, 3, 4, 5, 0, plus8), true},
		{"2024-01-02T03:04:05+0800", time.Date(2024, 1, 2, 3, 4, 5, 0, plus8), true},
		{"2024-01-02T03:04:05.5-00:30", time.Date(2024, 1, 2, 3, 4, 5, 5e8, time.FixedZone("", -1800)), true},
		{"2024-01-02T03:04:05.1234567891Z", time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC), true},
		{"2024-02-29T23:59:59Z", time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), true},
		{"2024-12-31T00:00Z", time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC), true},
		{"2023-02-29T00:00Z", time.Time{}, false},
		{"2024-13-01T00:00Z", time.Time{}, false},
		{"2024-01-02T24:00Z", time.Time{}, false},
		{"2024-01-02T03:60Z", time.Time{}, false},
		{"2024-01-02T03:04:60Z", time.Time{}, false},
		{"2024-01-02T03:04:05", time.Time{}, false},
		{"2024-01-02T03:04:05.Z", time.Time{}, false},
		{"2024-01-02T03:04:05,5Z", time.Time{}, false},
		{"2024-01-02T03:04+24:00", time.Time{}, false},
		{"2024-01-02T03:04+08-00", time.Time{}, false},
		{"2024-01-02 03:04Z", time.Time{}, false},
		{"2024-01-0xT03:04Z", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := Parse(tt.in)
		require.Equal(t, tt.ok, ok, "%q", tt.in)
		if ok {
			require.True(t, tt.want.Equal(got), "%q: %v, want %v", tt.in, got, tt.want)
			_, off := got.Zone()
			_, wantOff := tt.want.Zone()
			require.Equal(t, wantOff, off, "%q: offset", tt.in)
		}
	}
}
