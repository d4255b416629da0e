package paygate

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/testbound"
)

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
	base := testbound.LiveHeap()
	one, err := c.PaymentReportPage(context.Background(), q, 0)
	if err != nil {
		b.Fatal(err)
	}
	pageBytes := testbound.LiveHeap() - base
	runtime.KeepAlive(one)
	one = nil

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base = testbound.LiveHeap()
		var peak uint64
		n := 0
		for _, err := range c.Payments(context.Background(), q) {
			if err != nil {
				b.Fatal(err)
			}
			if n%(rows/4) == 0 {
				peak = max(peak, testbound.LiveHeap()-base)
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
