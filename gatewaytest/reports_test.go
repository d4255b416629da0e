package gatewaytest

import (
	"net/url"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

// The report's query: defaults, the malformed refused, and the end day
// included.
func TestParseReportFilter(t *testing.T) {
	myt := time.FixedZone("MYT", 8*3600)
	tests := []struct {
		name, query string
		bad         bool
		check       func(t *testing.T, f reportFilter)
	}{
		{name: "defaults", query: "", check: func(t *testing.T, f reportFilter) {
			require.Equal(t, reportFilter{items: 20}, f)
		}},
		{name: "every row", query: "items=-1&page=0", check: func(t *testing.T, f reportFilter) { require.Equal(t, -1, f.items) }},
		{name: "days in Malaysia, end included", query: "start=2026-11-01&end=2026-11-02&is_approved=1&seller_order_no=INV-1", check: func(t *testing.T, f reportFilter) {
			require.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, myt), f.start)
			require.Equal(t, time.Date(2026, 11, 3, 0, 0, 0, 0, myt), f.end)
			require.True(t, f.approvedOnly)
			require.Equal(t, "INV-1", f.ref)
		}},
		{name: "items 0", query: "items=0", bad: true},
		{name: "items below -1", query: "items=-2", bad: true},
		{name: "items not a number", query: "items=ten", bad: true},
		{name: "negative page", query: "page=-1", bad: true},
		{name: "page not a number", query: "page=1.5", bad: true},
		{name: "start not a day", query: "start=2026-13-01", bad: true},
		{name: "end not a day", query: "end=yesterday", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			require.NoError(t, err)
			f, err := parseReportFilter(q)
			if tt.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			tt.check(t, f)
		})
	}
}

// Each filter drops the orders it names, and paging cuts and counts.
func TestReportFilterKeepsAndPages(t *testing.T) {
	myt := time.FixedZone("MYT", 8*3600)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, myt) }
	o := Order{RefNo: "INV-1", Status: paygate.StatusSuccess, Created: day(2).Add(23 * time.Hour)}
	tests := []struct {
		name string
		f    reportFilter
		keep bool
	}{
		{name: "no filter", keep: true},
		{name: "approved only, success", f: reportFilter{approvedOnly: true}, keep: true},
		{name: "reference", f: reportFilter{ref: "INV-1"}, keep: true},
		{name: "other reference", f: reportFilter{ref: "INV-2"}},
		{name: "within the days", f: reportFilter{start: day(2), end: day(3)}, keep: true},
		{name: "before start", f: reportFilter{start: day(3)}},
		{name: "at end", f: reportFilter{end: day(2).Add(23 * time.Hour)}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.keep, tt.f.keeps(o), tt.name)
	}
	pending := o
	pending.Status = paygate.StatusPending
	require.False(t, reportFilter{approvedOnly: true}.keeps(pending))

	rows := []any{1, 2, 3, 4, 5}
	pages := []struct {
		name  string
		f     reportFilter
		rows  []any
		total int
	}{
		{name: "first page", f: reportFilter{items: 2}, rows: []any{1, 2}, total: 3},
		{name: "last, short page", f: reportFilter{items: 2, page: 2}, rows: []any{5}, total: 3},
		{name: "past the end", f: reportFilter{items: 2, page: 9}, rows: []any{}, total: 3},
		{name: "every row", f: reportFilter{items: -1}, rows: rows, total: 1},
		{name: "every row, page 1", f: reportFilter{items: -1, page: 1}, rows: []any{}, total: 1},
	}
	for _, tt := range pages {
		got, total := tt.f.pageOf(rows)
		require.Equal(t, tt.rows, got, tt.name)
		require.Equal(t, tt.total, total, tt.name)
	}
	got, total := reportFilter{items: 2}.pageOf(nil)
	require.Equal(t, []any{}, got, "no rows is an empty array, not null")
	require.Equal(t, 0, total)
}

// What the report announces as stats.total_pages, by WithReportTotalPages.
func TestTotalPagesStats(t *testing.T) {
	tests := []struct {
		mode TotalPages
		want map[string]any
	}{
		{mode: TotalPagesTrue, want: map[string]any{"total_pages": 3}},
		{mode: TotalPagesUnder, want: map[string]any{"total_pages": 1}},
		{mode: TotalPagesAbsent, want: map[string]any{}},
		{mode: TotalPagesString, want: map[string]any{"total_pages": "3"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.mode.stats(3), "mode %d", tt.mode)
	}
}
