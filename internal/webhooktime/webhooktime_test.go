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

// DateTime reads the canonical forms as time.ParseInLocation does, and
// refuses dates that do not exist and fields out of range.
func TestDateTime(t *testing.T) {
	loc := time.FixedZone("MYT", 8*3600)
	for _, s := range []string{"2026-11-26 02:09:27", "2026-11-26T02:09:27", "2024-02-29 23:59:59", "0000-01-01 00:00:00"} {
		_, ok := DateTime(s, loc)
		require.True(t, ok, "%q", s)
		fuzzDateTime(t, s, loc)
	}
	for _, s := range []string{
		"2023-02-29 10:00:00", "2026-13-01 10:00:00", "2026-00-01 10:00:00", "2026-11-00 10:00:00", "2026-11-31 10:00:00",
		"2026-11-26 24:00:00", "2026-11-26 23:60:00", "2026-11-26 23:59:60", "2026-11-26 2:09:27x", "2026-11-26 02:09:2x",
		"2026/11/26 02:09:27", "2026-11-26_02:09:27", "2026-11-26 02-09-27", "+026-11-26 02:09:27", "2026-11-26 02:09:27Z", "",
	} {
		_, ok := DateTime(s, loc)
		require.False(t, ok, "%q", s)
	}
}

func FuzzDateTime(f *testing.F) {
	for _, s := range []string{"2026-11-26 02:09:27", "2026-11-26T02:09:27", "2023-02-29 10:00:00", "2026-11-26 23:59:60"} {
		f.Add(s)
	}
	loc := time.FixedZone("MYT", 8*3600)
	f.Fuzz(func(t *testing.T, s string) { fuzzDateTime(t, s, loc) })
}

// fuzzDateTime holds DateTime to time.ParseInLocation on s: what DateTime
// accepts, time accepts with one of the layouts, at the same instant
// (time also takes forms DateTime leaves to it: runs of spaces, a
// one-digit hour, a fraction after the seconds).
func fuzzDateTime(t *testing.T, s string, loc *time.Location) {
	got, ok := DateTime(s, loc)
	if !ok {
		return
	}
	want, err := time.ParseInLocation(time.DateTime, s, loc)
	if err != nil {
		want, err = time.ParseInLocation("2006-01-02T15:04:05", s, loc)
	}
	require.NoError(t, err, "%q accepted by DateTime", s)
	require.True(t, want.Equal(got), "%q: %v, want %v", s, got, want)
}
