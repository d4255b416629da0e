package paygate

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// fakeReport is a report server's behaviour: the rows of page n when asked
// for items rows a page, and the stats it announces.
type fakeReport func(n, items int) (first, count int, stats string)

// honest serves total rows, capped at maxItems a page when maxItems > 0,
// with stats from totalPages (given the page size it served and the rows).
func honest(total, maxItems int, totalPages func(size, total int) string) fakeReport {
	return func(n, items int) (int, int, string) {
		size := items
		if maxItems > 0 && (size == AllItems || size > maxItems) {
			size = maxItems
		}
		if size == AllItems {
			if n > 0 {
				return 0, 0, totalPages(total, total)
			}
			return 0, total, totalPages(total, total)
		}
		first := min(n*size, total)
		return first, min(size, total-first), totalPages(size, total)
	}
}

// pagesOf announces the true page count.
func pagesOf(size, total int) string {
	return fmt.Sprintf(`{"total_pages":%d}`, (total+size-1)/max(size, 1))
}

// announce always announces s.
func announce(s string) func(int, int) string { return func(int, int) string { return s } }

// serveReport registers f as the payment report and returns the items each
// request asked for. The server has a hard bound: request limit+1 fails the
// test at once and is answered 400, which ends the walk.
func serveReport(t *testing.T, fx clientFixture, limit int, f fakeReport) func() []int {
	t.Helper()
	var mu sync.Mutex
	var asked []int
	fx.mt.RegisterResponder(http.MethodGet, testReports+paths.PaymentReport, func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		n, err := strconv.Atoi(q.Get("page"))
		if err != nil {
			return nil, err
		}
		items, err := strconv.Atoi(q.Get("items"))
		if err != nil {
			return nil, err
		}
		mu.Lock()
		asked = append(asked, items)
		calls := len(asked)
		mu.Unlock()
		if calls > limit {
			t.Errorf("request %d (page %d) is past the server's bound of %d: the walk does not stop", calls, n, limit)
			return httpmock.NewStringResponse(400, "past the test's request bound"), nil
		}
		first, count, stats := f(n, items)
		rows := make([]string, count)
		for i := range rows {
			rows[i] = fmt.Sprintf(`{"id":%d,"seller_order_no":"INV-%d","amount":"10.00"}`, first+i, first+i)
		}
		return httpmock.NewStringResponse(200, fmt.Sprintf(`{"status":"OK","data":[%s],"stats":%s}`, strings.Join(rows, ","), stats)), nil
	})
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), asked...)
	}
}

// TestPaymentsPaging: the walk stops only on a short page; total_pages is a
// cross-check; repeats of any earlier page, a total_pages that is not a
// number and the page ceiling end it with an error. Every row is read
// exactly once or the walk ends with a clear error, in a bounded number of
// requests.
func TestPaymentsPaging(t *testing.T) {
	const k = 3                            // rows asked per page
	cycle := func(period int) fakeReport { // full pages that repeat with a period
		return func(n, _ int) (int, int, string) { return (n % period) * k, k, `{"total_pages":100}` }
	}
	tests := []struct {
		name   string
		report fakeReport
		q      ReportQuery
		limit  int    // the server's request bound
		want   []int  // row ids, in order
		asked  []int  // items of each request
		err    error  // the sentinel the error matches, if any
		msg    string // the error's text; "" for no error
	}{
		{name: "short page ends the walk, total_pages true",
			report: honest(7, 0, pagesOf), limit: 3, want: seq(0, 7), asked: []int{3, 3, 3}},
		{name: "no stats at all: the short page alone ends it",
			report: honest(7, 0, announce(`{}`)), limit: 3, want: seq(0, 7), asked: []int{3, 3, 3}},
		{name: "total_pages null counts as absent",
			report: honest(4, 0, announce(`{"total_pages":null}`)), limit: 2, want: seq(0, 4), asked: []int{3, 3}},
		{name: "a full last page is followed by an empty one",
			report: honest(6, 0, pagesOf), limit: 3, want: seq(0, 6), asked: []int{3, 3, 3}},
		{name: "empty report",
			report: honest(0, 0, announce(`{"total_pages":0}`)), limit: 1, asked: []int{3}},
		{name: "under-reported total_pages: full pages past it are followed, rows yielded, then reported",
			report: honest(8, 0, announce(`{"total_pages":1}`)), limit: 3, want: seq(0, 8), asked: []int{3, 3, 3},
			err: ErrReportPastTotalPages, msg: "5 rows on pages 1 to 2, but stats.total_pages said 1 pages"},
		{name: "total_pages 0 with rows",
			report: honest(2, 0, announce(`{"total_pages":0}`)), limit: 1, want: seq(0, 2), asked: []int{3},
			err: ErrReportPastTotalPages, msg: "2 rows on pages 0 to 0"},
		{name: "short page before the announced end: cut short",
			report: honest(5, 0, announce(`{"total_pages":4}`)), limit: 2, want: seq(0, 5), asked: []int{3, 3},
			err: ErrReportPaging, msg: "page 1 has 2 of 3 rows, but stats.total_pages says 4 pages"},
		{name: "page ignored (period 1)",
			report: cycle(1), limit: 2, want: seq(0, 3), asked: []int{3, 3},
			err: ErrReportPaging, msg: "page 1 repeats page 0"},
		{name: "pages cycle with period 2",
			report: cycle(2), limit: 3, want: seq(0, 6), asked: []int{3, 3, 3},
			err: ErrReportPaging, msg: "page 2 repeats page 0"},
		{name: "pages cycle with period 3",
			report: cycle(3), limit: 4, want: seq(0, 9), asked: []int{3, 3, 3, 3},
			err: ErrReportPaging, msg: "page 3 repeats page 0"},
		{name: "one-row pages: a repeat of page 0 is still told",
			report: func(int, int) (int, int, string) { return 0, 1, `{"total_pages":100}` }, q: ReportQuery{ItemsPerPage: 1}, limit: 2,
			want: seq(0, 1), asked: []int{1, 1}, err: ErrReportPaging, msg: "page 1 repeats page 0"},
		{name: "one row past total_pages is reported",
			report: honest(4, 0, announce(`{"total_pages":1}`)), limit: 2, want: seq(0, 4), asked: []int{3, 3},
			err: ErrReportPastTotalPages, msg: "1 rows on pages 1 to 1, but stats.total_pages said 1 pages"},
		{name: "short page just before the announced last: cut short",
			report: honest(5, 0, announce(`{"total_pages":3}`)), limit: 2, want: seq(0, 5), asked: []int{3, 3},
			err: ErrReportPaging, msg: "page 1 has 2 of 3 rows, but stats.total_pages says 3 pages"},
		{name: "a short first page with total_pages 1 is the whole report, not a cap",
			report: honest(2, 0, pagesOf), limit: 1, want: seq(0, 2), asked: []int{3}},
		{name: "an empty first page while total_pages announces more: cut short, not a cap of 0",
			report: func(int, int) (int, int, string) { return 0, 0, `{"total_pages":3}` }, limit: 1, asked: []int{3},
			err: ErrReportPaging, msg: "page 0 has 0 of 3 rows, but stats.total_pages says 3 pages"},
		{name: "total_pages as a string is an error, not an absent count",
			report: honest(9, 0, announce(`{"total_pages":"3"}`)), limit: 1, asked: []int{3},
			msg: `stats.total_pages is "3", want a number`},
		{name: "total_pages not whole",
			report: honest(9, 0, announce(`{"total_pages":2.5}`)), limit: 1, asked: []int{3},
			msg: "stats.total_pages is 2.5, want a whole number"},
		{name: "total_pages negative",
			report: honest(9, 0, announce(`{"total_pages":-1}`)), limit: 1, asked: []int{3},
			msg: "stats.total_pages is -1"},
		{name: "a server that caps items is followed at its size, asked for explicitly",
			report: honest(10, 2, pagesOf), q: ReportQuery{ItemsPerPage: 5}, limit: 6, want: seq(0, 10), asked: []int{5, 2, 2, 2, 2, 2}},
		{name: "capped and an exact multiple: one empty page more",
			report: honest(4, 2, pagesOf), q: ReportQuery{ItemsPerPage: 5}, limit: 3, want: seq(0, 4), asked: []int{5, 2, 2}},
		{name: "never short, never repeating: the page ceiling",
			report: func(n, _ int) (int, int, string) { return n * k, k, `{}` }, q: ReportQuery{MaxPages: 4}, limit: 4,
			want: seq(0, 12), asked: []int{3, 3, 3, 3}, err: ErrReportPaging, msg: "4 full pages and no short one"},
		{name: "a ceiling of one page",
			report: func(n, _ int) (int, int, string) { return n * k, k, `{}` }, q: ReportQuery{MaxPages: 1}, limit: 1,
			want: seq(0, 3), asked: []int{3}, err: ErrReportPaging, msg: "1 full pages and no short one"},
		{name: "exactly MaxPages pages, the last short: no ceiling error",
			report: honest(3*k+1, 0, pagesOf), q: ReportQuery{MaxPages: 4}, limit: 4, want: seq(0, 3*k+1), asked: []int{3, 3, 3, 3}},
		{name: "AllItems: every row in one answer",
			report: honest(50, 0, announce(`{"total_pages":1}`)), q: ReportQuery{ItemsPerPage: AllItems}, limit: 1,
			want: seq(0, 50), asked: []int{-1}},
		{name: "AllItems with total_pages 0: the rows, then reported",
			report: honest(3, 0, announce(`{"total_pages":0}`)), q: ReportQuery{ItemsPerPage: AllItems}, limit: 1,
			want: seq(0, 3), asked: []int{-1}, err: ErrReportPastTotalPages, msg: "3 rows on pages 0 to 0"},
		{name: "AllItems without stats",
			report: honest(5, 0, announce(`{}`)), q: ReportQuery{ItemsPerPage: AllItems}, limit: 1, want: seq(0, 5), asked: []int{-1}},
		{name: "AllItems capped by the server at one row a page",
			report: honest(3, 1, pagesOf), q: ReportQuery{ItemsPerPage: AllItems}, limit: 4, want: seq(0, 3), asked: []int{-1, 1, 1, 1}},
		{name: "AllItems capped by the server: paged on at its size",
			report: honest(9, 4, pagesOf), q: ReportQuery{ItemsPerPage: AllItems}, limit: 3, want: seq(0, 9), asked: []int{-1, 4, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestClient(t)
			asked := serveReport(t, f, tt.limit, tt.report)
			q := tt.q
			if q.ItemsPerPage == 0 {
				q.ItemsPerPage = k
			}
			ids, errs := collectRows(t, f.c, q)
			require.Equal(t, tt.want, ids, "every row once, in order")
			require.Equal(t, tt.asked, asked(), "the requests")
			if tt.msg == "" {
				require.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			require.ErrorContains(t, errs[0], tt.msg)
			if tt.err != nil {
				require.ErrorIs(t, errs[0], tt.err)
			}
			if tt.err == ErrReportPaging {
				require.NotErrorIs(t, errs[0], ErrReportPastTotalPages, "a broken walk is not a complete one")
			}
		})
	}
}

// pagedServer answers report pages from a function of the page number. Its
// hard bound of 20 requests fails the test at once (and answers 400, which
// ends a walk) rather than letting a runaway walk reach the package timeout.
func pagedServer(t *testing.T, f clientFixture, page func(req *http.Request, n int) (*http.Response, error)) *atomic.Int32 {
	t.Helper()
	var calls atomic.Int32
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(req *http.Request) (*http.Response, error) {
		if c := calls.Add(1); c > 20 {
			t.Errorf("request %d is past the fake server's bound of 20: the walk does not stop", c)
			return httpmock.NewStringResponse(http.StatusBadRequest, "past the test's request bound"), nil
		}
		n, err := strconv.Atoi(req.URL.Query().Get("page"))
		require.NoError(t, err)
		return page(req, n)
	})
	return &calls
}

// collect walks the iterator, returning row ids and errors in order.
func collectRows(t *testing.T, c *Client, q ReportQuery) ([]int, []error) {
	t.Helper()
	var ids []int
	var errs []error
	for row, err := range c.Payments(context.Background(), q) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r struct{ ID int }
		require.NoError(t, row.Decode(&r))
		ids = append(ids, r.ID)
	}
	return ids, errs
}

func seq(from, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

// Cancelling the context mid-page ends the walk at the next row, not at the
// end of a 1,000-row page.
func TestPaymentsCancelBetweenRows(t *testing.T) {
	f := newTestClient(t)
	pagedServer(t, f, func(_ *http.Request, n int) (*http.Response, error) {
		return httpmock.NewStringResponse(200, reportBody(n*1000, 1000, 5)), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows := 0
	var errs []error
	for _, err := range f.c.Payments(ctx, ReportQuery{ItemsPerPage: 1000}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if rows++; rows == 10 {
			cancel()
		}
	}
	require.Equal(t, 10, rows)
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs[0], context.Canceled)
}

// An error mid-way is yielded once, after the rows before it, and ends the
// walk.
func TestPaymentsErrorMidway(t *testing.T) {
	f := newTestClient(t)
	calls := pagedServer(t, f, func(_ *http.Request, n int) (*http.Response, error) {
		if n == 1 {
			return httpmock.NewStringResponse(400, "bad page"), nil
		}
		return httpmock.NewStringResponse(200, reportBody(n*3, 3, 0)), nil
	})
	ids, errs := collectRows(t, f.c, ReportQuery{ItemsPerPage: 3})
	require.Equal(t, seq(0, 3), ids)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "HTTP 400")
	require.Equal(t, int32(2), calls.Load())

	// A bad query is one error, and nothing is sent.
	g := newTestClient(t)
	_, errs = collectRows(t, g.c, ReportQuery{ItemsPerPage: -5})
	require.Len(t, errs, 1)
	require.Zero(t, g.mt.GetTotalCallCount())
}

// The next page is requested while the caller still holds the current one;
// leaving the loop early cancels that request and waits for it, so no
// goroutine is left behind.
func TestPaymentsPrefetchAndEarlyBreak(t *testing.T) {
	f := newTestClient(t)
	started := make(chan int, 4)
	var cancelled atomic.Bool
	pagedServer(t, f, func(req *http.Request, n int) (*http.Response, error) {
		started <- n
		if n == 0 {
			return httpmock.NewStringResponse(200, reportBody(0, 3, 0)), nil
		}
		<-req.Context().Done() // page 1 hangs until the caller leaves
		cancelled.Store(true)
		return nil, req.Context().Err()
	})
	// A bound, not a measure: a walk that waits for its prefetch without
	// cancelling it ends when the bound cancels the context, and fails.
	ctx, cancel := context.WithCancel(context.Background())
	bound := time.AfterFunc(10*time.Second, cancel)
	t.Cleanup(func() { bound.Stop(); cancel() })
	before := runtime.NumGoroutine()
	rows := 0
	for _, err := range f.c.Payments(ctx, ReportQuery{ItemsPerPage: 3}) {
		require.NoError(t, err)
		rows++
		if rows == 1 {
			select {
			case n := <-started: // page 0
				require.Equal(t, 0, n)
			default:
			}
			require.Equal(t, 1, <-started, "page 1 is fetched while page 0 is consumed")
			break
		}
	}
	require.True(t, bound.Stop(), "leaving the loop cancelled the prefetch, not the test's bound")
	// require.Eventually would add goroutines of its own: poll by hand. (The
	// mock transport answers a cancelled request at once and lets its
	// responder finish on its own goroutine, so give that one a moment.)
	deadline := time.Now().Add(time.Second)
	for (!cancelled.Load() || runtime.NumGoroutine() > before) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.True(t, cancelled.Load(), "the prefetch was cancelled")
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine outlives the loop")
}
