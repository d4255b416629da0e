package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

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
	before := runtime.NumGoroutine()
	rows := 0
	for _, err := range f.c.Payments(context.Background(), ReportQuery{ItemsPerPage: 3}) {
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

// reportServer serves pages pages of rows rows each on loopback, with a
// delay per page; a page past the short one fails the benchmark at once.
func reportServer(tb testing.TB, pages, rows int, delay time.Duration) *httptest.Server {
	tb.Helper()
	row := `{"id":%d,"seller_order_no":"INV-%08d","amount":"149.90","fpx_txn_id":"2611221030150987","status":"success"}`
	// One buffer, reused under a lock, so that the server's own memory stays
	// constant and out of the client's measured peak; the page is written
	// whole, so that Content-Length is sent, as JSON APIs do.
	var mu sync.Mutex
	var b bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if n > pages { // a hard bound: page pages is the short one
			tb.Errorf("page %d asked after the short page %d: a walk stops after a short page", n, pages)
			http.Error(w, "past the test's page bound", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		b.Reset()
		b.WriteString(`{"status":"OK","data":[`)
		for i := 0; i < rows && n < pages; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			id := n*rows + i
			fmt.Fprintf(&b, row, id, id)
		}
		fmt.Fprintf(&b, `],"stats":{"total_pages":%d}}`, pages)
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		_, _ = w.Write(b.Bytes())
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func reportClient(tb testing.TB, srv *httptest.Server) *Client {
	tb.Helper()
	c, err := NewClient(WithReportsURL(srv.URL), WithAuthToken("bench-token"))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// liveHeap is the heap in use after a full collection: live data only.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkPaymentsMemory walks 1,000,000 rows in 1,000 pages from a local
// server and reports the peak live heap (sampled after a forced collection
// four times per page, so that garbage awaiting a collection does not count)
// against the live heap one fetched page takes.
func BenchmarkPaymentsMemory(b *testing.B) {
	const pages, rows = 1000, 1000
	srv := reportServer(b, pages, rows, 0)
	c := reportClient(b, srv)
	q := ReportQuery{ItemsPerPage: rows}

	if _, err := c.PaymentReportPage(context.Background(), q, 0); err != nil { // warm the server's buffer and the connection
		b.Fatal(err)
	}
	base := liveHeap()
	one, err := c.PaymentReportPage(context.Background(), q, 0)
	if err != nil {
		b.Fatal(err)
	}
	pageBytes := liveHeap() - base
	runtime.KeepAlive(one)
	one = nil

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base = liveHeap()
		var peak uint64
		n := 0
		for _, err := range c.Payments(context.Background(), q) {
			if err != nil {
				b.Fatal(err)
			}
			if n%(rows/4) == 0 {
				peak = max(peak, liveHeap()-base)
			}
			n++
		}
		if n != pages*rows {
			b.Fatalf("%d rows", n)
		}
		b.ReportMetric(float64(pageBytes), "page-bytes")
		b.ReportMetric(float64(peak)/float64(pageBytes), "peak/page")
	}
}

// BenchmarkPaymentsPrefetch compares the prefetching iterator with fetching
// page by page, 50 pages at 20 ms of latency each, with a consumer that
// spends 20 ms on each page.
func BenchmarkPaymentsPrefetch(b *testing.B) {
	const pages, rows = 50, 100
	const work = 20 * time.Millisecond
	srv := reportServer(b, pages, rows, 20*time.Millisecond)
	c := reportClient(b, srv)
	q := ReportQuery{ItemsPerPage: rows}
	consume := func(i int) {
		if i%rows == rows-1 {
			time.Sleep(work)
		}
	}
	b.Run("prefetch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := 0
			for _, err := range c.Payments(context.Background(), q) {
				if err != nil {
					b.Fatal(err)
				}
				consume(n)
				n++
			}
		}
	})
	b.Run("page-by-page", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := 0
			for page := 0; ; page++ {
				p, err := c.PaymentReportPage(context.Background(), q, page)
				if err != nil {
					b.Fatal(err)
				}
				for range p.Rows {
					consume(n)
					n++
				}
				if len(p.Rows) < rows || page+1 >= p.TotalPages {
					break
				}
			}
		}
	})
}

// FuzzParseReport: any answer body parses or fails cleanly, and every row it
// returns is one valid JSON value.
func FuzzParseReport(f *testing.F) {
	f.Add(reportBody(0, 3, 2))
	f.Add(`{"status":"OK","data":[],"stats":{"total_pages":"x"}}`)
	f.Add(`{"status":"OK","data":[1,"a",{"b":[null]}],"stats":{"total_pages":1e3}}`)
	f.Add(`{"status":`)
	f.Fuzz(func(t *testing.T, body string) {
		var p ReportPage
		if _, err := parseReport(body, &p); err != nil {
			return
		}
		for _, r := range p.Rows {
			require.True(t, json.Valid([]byte(r.raw)), "row %q", r.raw)
		}
		require.GreaterOrEqual(t, p.TotalPages, 0)
	})
}

// Report dates are the gateway's days: Malaysia time, whatever zone the
// time.Time is in.
func TestReportDatesInMalaysiaTime(t *testing.T) {
	utc := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC) // 04:00 on the 22nd in Kuala Lumpur
	ny := time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("EST", -5*3600))
	tests := []struct {
		name       string
		start, end time.Time
		want       [2]string
	}{
		{"UTC evening is the next Malaysian day", utc, utc, [2]string{"2026-11-22", "2026-11-22"}},
		{"another zone", ny, ny, [2]string{"2026-11-22", "2026-11-22"}},
		{"a calendar day in Malaysia time", time.Date(2026, 11, 1, 0, 0, 0, 0, MalaysiaTime()), time.Date(2026, 11, 30, 23, 59, 0, 0, MalaysiaTime()), [2]string{"2026-11-01", "2026-11-30"}},
		{"local midnight before UTC midnight", time.Date(2026, 11, 22, 0, 30, 0, 0, MalaysiaTime()).UTC(), time.Date(2026, 11, 22, 0, 30, 0, 0, MalaysiaTime()).UTC(), [2]string{"2026-11-22", "2026-11-22"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals, _, err := ReportQuery{Start: tt.start, End: tt.end}.values(0)
			require.NoError(t, err)
			require.Equal(t, tt.want, [2]string{vals.Get("start"), vals.Get("end")})
		})
	}
	// The order check is by Malaysian day too.
	_, _, err := ReportQuery{Start: utc, End: time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)}.values(0) // 23:00 on the 21st there
	require.ErrorContains(t, err, "must not be before start")
}

// An order can be looked up by either reference; a multi-agency AuthToken
// can filter the report by agency, a single-agency signature cannot.
func TestLookupByEitherReferenceAndAgencyFilter(t *testing.T) {
	f := newTestClient(t, WithAuthToken(testAuthToken))
	var queries []url.Values
	f.mt.RegisterResponder(http.MethodGet, testReports+FPXRequestPath, func(req *http.Request) (*http.Response, error) {
		queries = append(queries, req.URL.Query())
		return httpmock.NewStringResponse(200, `{"status":"OK","fpxrequest":{"id":1}}`), nil
	})
	f.mt.RegisterResponder(http.MethodGet, testReports+PaymentReportPath, func(req *http.Request) (*http.Response, error) {
		queries = append(queries, req.URL.Query())
		return httpmock.NewStringResponse(200, reportBody(0, 0, 0)), nil
	})
	ctx := context.Background()
	_, err := f.c.LookupOrder(ctx, "INV-1")
	require.NoError(t, err)
	_, err = f.c.LookupOrderByRefNo(ctx, "INV-1~cart 7")
	require.NoError(t, err)
	_, err = f.c.PaymentReportPage(ctx, ReportQuery{Agency: "OTHER-AGENCY"}, 0)
	require.NoError(t, err)
	require.Len(t, queries, 3)
	require.Equal(t, "INV-1", queries[0].Get("fpx_seller_order_no"))
	require.False(t, queries[0].Has("refno"))
	require.Equal(t, "INV-1~cart 7", queries[1].Get("refno"))
	require.False(t, queries[1].Has("fpx_seller_order_no"))
	require.Equal(t, "OTHER-AGENCY", queries[2].Get("agency"))

	signed := newTestClient(t)
	_, err = signed.c.PaymentReportPage(ctx, ReportQuery{Agency: "OTHER-AGENCY"}, 0)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "agency", ve.Problems[0].Field)
	require.Zero(t, signed.mt.GetTotalCallCount(), "nothing sent")
	_, err = signed.c.LookupOrderByRefNo(ctx, "")
	require.ErrorAs(t, err, &ve)
}
