package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/paygate-go/paygate"
)

// reportServer serves pages of rows of the payment report
// (docs/protocol.md A3), each page built once and written whole with its
// Content-Length.
func reportServer(b *testing.B, pages, rows int) *httptest.Server {
	bodies := make([][]byte, pages+1)
	for p := range bodies {
		var buf bytes.Buffer
		buf.WriteString(`{"status":"OK","data":[`)
		for i := 0; i < rows && p < pages; i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			id := p*rows + i
			fmt.Fprintf(&buf, `{"id":%d,"seller_order_no":"INV-%08d~cart 88","order_no":"GW%014d","agency":"AGENCY01",`+
				`"amount":"149.90","status":"success","fpx_debit_auth_code":"00","fpx_txn_id":"2611221030150987",`+
				`"fpx_txn_time":"2026-11-22 10:30:15","created_at":"2026-11-22 10:29:58"}`, id, id, id)
		}
		fmt.Fprintf(&buf, `],"stats":{"total_pages":%d}}`, pages)
		bodies[p] = buf.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := strconv.Atoi(r.URL.Query().Get("page"))
		body := bodies[min(p, pages)]
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// jsonRow is the peer's typed row.
type jsonRow struct {
	ID         int    `json:"id"`
	RefNo      string `json:"seller_order_no"`
	OrderNo    string `json:"order_no"`
	Agency     string `json:"agency"`
	Amount     string `json:"amount"`
	Status     string `json:"status"`
	FPXCode    string `json:"fpx_debit_auth_code"`
	FPXTxnID   string `json:"fpx_txn_id"`
	FPXTxnTime string `json:"fpx_txn_time"`
	CreatedAt  string `json:"created_at"`
}

// BenchmarkPayments: Client.Payments with ReportRow.Payment on every row
// against fetching the same pages with net/http and decoding each with
// encoding/json into a struct of the row's fields: 20 pages of 1,000 rows
// from a local server.
func BenchmarkPayments(b *testing.B) {
	const pages, rows = 20, 1000
	srv := reportServer(b, pages, rows)
	c, err := paygate.NewClient(paygate.WithReportsURL(srv.URL), paygate.WithAuthToken("bench-token"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	q := paygate.ReportQuery{ItemsPerPage: rows}
	interleave(b, 1, side{"paygate", func() {
		n := 0
		for row, err := range c.Payments(ctx, q) {
			if err != nil {
				b.Fatal(err)
			}
			if p, err := row.Payment(); err != nil || p.Amount != 14990 {
				b.Fatal(p, err)
			}
			n++
		}
		if n != pages*rows {
			b.Fatal(n)
		}
	}}, side{"encoding-json", func() {
		n := 0
		for p := 0; ; p++ {
			resp, err := srv.Client().Get(srv.URL + "/api/report?items=" + strconv.Itoa(rows) + "&page=" + strconv.Itoa(p))
			if err != nil {
				b.Fatal(err)
			}
			var page struct {
				Status string    `json:"status"`
				Data   []jsonRow `json:"data"`
				Stats  struct {
					TotalPages int `json:"total_pages"`
				} `json:"stats"`
			}
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil || page.Status != "OK" {
				b.Fatal(err, page.Status)
			}
			n += len(page.Data)
			if len(page.Data) < rows {
				break
			}
		}
		if n != pages*rows {
			b.Fatal(n)
		}
	}})
}
