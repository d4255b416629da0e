package zakat

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseWebhookTime(t *testing.T) {
	myt := time.FixedZone("", 8*3600)
	tests := []struct {
		in   string
		want time.Time // zero: refused
	}{
		{in: "2026-11-22T10:30:00+08:00", want: time.Date(2026, 11, 22, 10, 30, 0, 0, myt)},
		{in: "2024-01-02T03:04:05+0800", want: time.Date(2024, 1, 2, 3, 4, 5, 0, myt)}, // PHP DATE_ISO8601
		{in: "2024-01-02T03:04+08:00", want: time.Date(2024, 1, 2, 3, 4, 0, 0, myt)},
		{in: "2024-01-02T03:04+0800", want: time.Date(2024, 1, 2, 3, 4, 0, 0, myt)},
		{in: "2024-01-02T03:04Z", want: time.Date(2024, 1, 2, 3, 4, 0, 0, time.UTC)},
		{in: "2024-01-02T03:04:05.5Z", want: time.Date(2024, 1, 2, 3, 4, 5, 500_000_000, time.UTC)},
		{in: "2024-01-02T03:04:05.123456789123-0330", want: time.Date(2024, 1, 2, 3, 4, 5, 123_456_789, time.FixedZone("", -(3*3600+30*60)))},
		{in: "2024-02-29T23:59:59+23:59", want: time.Date(2024, 2, 29, 23, 59, 59, 0, time.FixedZone("", 23*3600+59*60))},
		{in: "2026-11-22T10:30:00", want: time.Time{}},
		{in: "2026-11-22T10:30", want: time.Time{}},
		{in: "2026-11-22", want: time.Time{}},
		{in: "2026-11-22T10:30:00+08", want: time.Time{}},
		{in: "2026-11-22T10:30:00.+08:00", want: time.Time{}},
		{in: "2026-11-22T10:30:0+08:00", want: time.Time{}},
		{in: "2023-02-29T00:00Z", want: time.Time{}},
		{in: "2026-11-22T10:30:00+08:00 ", want: time.Time{}},
		{in: "2026-11-22T10:30:00Z\n", want: time.Time{}},
		{in: "2026-11-22T10:30:00z", want: time.Time{}},
		{in: "2026-11-22T10:30:00+08:0", want: time.Time{}},
		{in: "2026-11-22T10:30:00+0800:", want: time.Time{}},
		{in: "2026-11-22T10:30:", want: time.Time{}},
		// Every edge of the calendar and the clock, on both sides.
		{in: "2026-01-01T00:00Z", want: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2026-12-31T23:59:59Z", want: time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)},
		{in: "2026-04-30T10:00Z", want: time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC)},
		{in: "2026-02-28T10:00Z", want: time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)},
		{in: "2026-04-31T10:00Z", want: time.Time{}},
		{in: "2026-02-29T10:00Z", want: time.Time{}},
		{in: "2026-01-32T10:00Z", want: time.Time{}},
		{in: "2026-01-00T10:00Z", want: time.Time{}},
		{in: "2026-00-10T10:00Z", want: time.Time{}},
		{in: "2026-13-10T10:00Z", want: time.Time{}},
		{in: "2026-01-02T24:00Z", want: time.Time{}},
		{in: "2026-01-02T23:60Z", want: time.Time{}},
		{in: "2026-01-02T23:59:60Z", want: time.Time{}},
		{in: "2026-01-02T03:04:05.123", want: time.Time{}}, // a fraction, then nothing
	}
	for _, tt := range tests {
		got, ok := parseWebhookTime(tt.in)
		require.Equal(t, !tt.want.IsZero(), ok, tt.in)
		if ok {
			require.True(t, tt.want.Equal(got), "%s: got %v", tt.in, got)
			_, off := got.Zone()
			_, wantOff := tt.want.Zone()
			require.Equal(t, wantOff, off, "%s keeps its offset", tt.in)
		}
	}
}

// schemaTimePattern is the `time` pattern of the embedded schema.
func schemaTimePattern(t testing.TB) *regexp.Regexp {
	var s struct {
		Defs struct {
			Transaction struct {
				Properties struct {
					Time struct {
						Pattern string `json:"pattern"`
					} `json:"time"`
				} `json:"properties"`
			} `json:"transaction"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(Validator{}.Schema(), &s))
	require.NotEmpty(t, s.Defs.Transaction.Properties.Time.Pattern)
	return regexp.MustCompile(s.Defs.Transaction.Properties.Time.Pattern)
}

// rfc3339Shape is RFC 3339's own grammar: two-digit fields, hours 00-23,
// minutes 00-59, offset minutes 00-59. Go's time.Parse is looser (it reads
// "T1:30:00" as 01:30 and "+00:60" as +01:00), so the oracle below only
// judges strings of this shape.
var rfc3339Shape = regexp.MustCompile(`^\d{4}-\d\d-\d\d[Tt]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]\d\d:[0-5]\d)$`)

// The time rule of the validator and the schema's pattern agree on every
// string, and whatever Go reads as RFC 3339 (in RFC 3339's own shape) the
// rule accepts as the same instant and offset.
func FuzzWebhookTime(f *testing.F) {
	for _, s := range []string{"2026-11-22T10:30:00+08:00", "2024-01-02T03:04:05+0800", "2024-01-02T03:04Z",
		"2000-02-29T00:00:00.000000001-00:00", "1900-02-29T00:00Z", "2026-11-22T10:30:00", "2026-11-22T24:00Z",
		"2026-11-22T1:30:00+08:00", "0000-01-01T00:00:00+00:60"} {
		f.Add(s)
	}
	pattern := schemaTimePattern(f)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseWebhookTime(s)
		require.Equal(t, pattern.MatchString(s), ok, "validator and schema on %q", s)
		std, err := time.Parse(time.RFC3339, s)
		if err != nil || !rfc3339Shape.MatchString(s) {
			return
		}
		require.True(t, ok, "%q is RFC 3339 (%v)", s, std)
		require.True(t, std.Equal(got), "%q: %v, RFC 3339 %v", s, got, std)
		_, a := got.Zone()
		_, b := std.Zone()
		require.Equal(t, b, a, "%q keeps its offset", s)
	})
}

// A time read in another ISO 8601 form is sent on as RFC 3339 with the
// same offset (what WebhookSender posts for a batch read from a file).
func TestWebhookTimeResentAsRFC3339(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "2024-01-02T03:04:05+0800", want: `"time":"2024-01-02T03:04:05+08:00"`},
		{in: "2024-01-02T03:04-0330", want: `"time":"2024-01-02T03:04:00-03:30"`},
		{in: "2024-01-02T03:04:05.250Z", want: `"time":"2024-01-02T03:04:05.25Z"`},
		{in: "2024-01-02T03:04:05.1+05:45", want: `"time":"2024-01-02T03:04:05.1+05:45"`},
	}
	for _, tt := range tests {
		in, want := tt.in, tt.want
		body := `{"transactions":[{"agency":"BANK","orderno":"1","amount":1,"name":"a","email":"a@b.co","time":"` + in + `","status":"success","data":{}}]}`
		batch, err := Validator{}.ValidateBatchJSON([]byte(body))
		require.NoError(t, err, in)
		out, err := json.Marshal(batch)
		require.NoError(t, err)
		require.Contains(t, string(out), want, in)
	}
}
