package gatewaytest

import (
	"context"
	"fmt"
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

// TestReportRowsDecodeInBothShapes: a paid order reads back, typed, from
// the report and from the lookup, in either row shape the sandbox serves.
func TestReportRowsDecodeInBothShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape RowShape
	}{
		{name: "sandbox names", shape: RowsSandbox},
		{name: "FPX names, no status member", shape: RowsFPX},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, WithReportRows(tc.shape))
			m := newMerchant(t, sb)
			client, err := sb.Client()
			require.NoError(t, err)
			ctx := context.Background()
			for _, ref := range []string{"INV-1", "INV-2"} {
				_, err := client.CreateOrder(ctx, m.order(ref))
				require.NoError(t, err)
			}
			require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess), "the base reference names the order")
			require.NoError(t, sb.Pay("INV-2", paygate.StatusFailed))
			sb.Settle()

			got := map[string]paygate.PaymentRecord{}
			for row, err := range client.Payments(ctx, paygate.ReportQuery{}) {
				require.NoError(t, err)
				p, err := row.Payment()
				require.NoError(t, err)
				got[p.RefNo] = p
			}
			require.Len(t, got, 2)
			orders := sb.Orders()
			for i, want := range []struct {
				ref    string
				status paygate.Status
				code   paygate.FPXCode
			}{{ref: "INV-1", status: paygate.StatusSuccess, code: "00"}, {ref: "INV-2", status: paygate.StatusFailed, code: "51"}} {
				p := got[want.ref]
				require.True(t, p.Consistent(), "%+v", p.Problems)
				require.Equal(t, "cart", p.ExtraData)
				require.Equal(t, paygate.Amount(2590), p.Amount)
				require.Equal(t, want.status, p.Status)
				require.Equal(t, want.code, p.FPXCode)
				require.Equal(t, orders[i].OrderNo, p.OrderNo)
				require.Equal(t, orders[i].FPXTxnID, p.FPXTxnID)
				require.False(t, p.Time.IsZero())

				rec, err := client.LookupOrderByRefNo(ctx, want.ref+"~cart")
				require.NoError(t, err)
				q, err := rec.Payment()
				require.NoError(t, err)
				require.Equal(t, p, q, "the lookup reads like the row")
			}
		})
	}
}

// TestPaymentsAgainstSandboxCounts: the walk reads every row once whatever
// the sandbox announces as total_pages, and says so when the count is wrong
// or unreadable; a capped or unpaged (AllItems) report reads the same rows.
func TestPaymentsAgainstSandboxCounts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []Option
		items int
		rows  int
		err   error
		msg   string
	}{
		{name: "true count", items: 2, rows: 5},
		{name: "true count, an exact multiple", items: 5, rows: 5},
		{name: "under-reported count", opts: []Option{WithReportTotalPages(TotalPagesUnder)}, items: 2, rows: 5, err: paygate.ErrReportPastTotalPages},
		{name: "no count", opts: []Option{WithReportTotalPages(TotalPagesAbsent)}, items: 2, rows: 5},
		{name: "count as a string", opts: []Option{WithReportTotalPages(TotalPagesString)}, items: 2, msg: "want a number"},
		{name: "capped items", opts: []Option{WithMaxItems(2)}, items: 4, rows: 5},
		{name: "every row at once", items: paygate.AllItems, rows: 5},
		{name: "every row at once, capped", opts: []Option{WithMaxItems(3)}, items: paygate.AllItems, rows: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			m := newMerchant(t, sb)
			client, err := sb.Client()
			require.NoError(t, err)
			ctx := context.Background()
			for i := range 5 {
				_, err := client.CreateOrder(ctx, m.order(fmt.Sprintf("INV-%d", i)))
				require.NoError(t, err)
			}
			seen := map[string]int{}
			var errs []error
			for row, err := range client.Payments(ctx, paygate.ReportQuery{ItemsPerPage: tc.items, MaxPages: 10}) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				p, err := row.Payment()
				require.NoError(t, err)
				seen[p.RefNo]++
			}
			require.Len(t, seen, tc.rows)
			for ref, n := range seen {
				require.Equal(t, 1, n, "row %s read %d times", ref, n)
			}
			switch {
			case tc.err != nil:
				require.Len(t, errs, 1)
				require.ErrorIs(t, errs[0], tc.err)
			case tc.msg != "":
				require.Len(t, errs, 1)
				require.ErrorContains(t, errs[0], tc.msg)
			default:
				require.Empty(t, errs)
			}
		})
	}
}

// A report server that caps items is walked at its own page size.
func TestPaymentsWithCappedItems(t *testing.T) {
	sb := newSandbox(t, WithMaxItems(2))
	client, err := sb.Client()
	require.NoError(t, err)
	for i := range 7 {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: fmt.Sprint("INV-C", i), Amount: 1000, Email: "a@example.com", ReturnURL: "http://127.0.0.1:1/r"})
		require.NoError(t, err)
	}
	rows := 0
	for _, err := range client.Payments(context.Background(), paygate.ReportQuery{ItemsPerPage: 5}) {
		require.NoError(t, err)
		rows++
	}
	require.Equal(t, 7, rows, "every row, though each page held 2 of the 5 asked for")
}
