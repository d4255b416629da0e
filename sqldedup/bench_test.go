package sqldedup

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
)

// BenchmarkHandlerOnPostgres runs CallbackHandler on this Deduper for a
// duplicate callback (the gateway's retries) and for a new event, each in
// batches interleaved with a bare handler that parses the form and answers
// 200, and reports the round trips to PostgreSQL per callback and the
// callbacks per second of each relative to the bare handler ("x-req/s"),
// one callback at a time on loopback.
func BenchmarkHandlerOnPostgres(b *testing.B) {
	direct := testDSN(b)
	proxy, counted := newCountingProxy(b, direct)
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	if err != nil {
		b.Fatal(err)
	}
	handler := func(dsn string) *paygate.CallbackHandler {
		d, _ := testDeduperOn(b, openDB(b, dsn))
		return &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Fulfil: func(context.Context, *paygate.Callback) error { return nil }}
	}
	h, hc := handler(direct), handler(counted) // timed; round trips counted through the proxy
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	body := func(ref string) string {
		f := url.Values{"status": {"success"}, "refNo": {ref}, "orderNo": {"GW-" + ref}, "amount": {"149.90"},
			"fpx": {`{"fpx_debit_auth_code":"00","fpx_buyer_name":"SITI NUR AISYAH"}`}}
		signed, err := paygate.SignCallback(key, f)
		if err != nil {
			b.Fatal(err)
		}
		return signed.Encode()
	}
	serve := func(h http.Handler, body string) {
		r := httptest.NewRequest(http.MethodPost, "/return", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	dup := body("BENCH-DUP")
	serve(h, dup)
	serve(hc, dup)
	seq := 0
	for _, tt := range []struct {
		name string
		body func() string
	}{
		{"duplicate", func() string { return dup }},
		{"new", func() string { seq++; return body(fmt.Sprint("BENCH-", seq)) }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			const batch = 50
			bodies := make([]string, batch)
			var sub, base time.Duration
			var trips int64
			for i := 0; i < b.N; i++ {
				for j := range bodies {
					bodies[j] = tt.body()
				}
				start := time.Now()
				for _, s := range bodies {
					serve(h, s)
				}
				sub += time.Since(start)
				if i == 0 {
					trips = proxy.roundTrips(func() {
						for _, s := range bodies {
							serve(hc, s)
						}
					})
				}
				start = time.Now()
				for _, s := range bodies {
					serve(bare, s)
				}
				base += time.Since(start)
			}
			n := float64(b.N * batch)
			b.ReportMetric(float64(trips)/batch, "roundtrips/callback")
			b.ReportMetric(n/sub.Seconds(), "req/s")
			b.ReportMetric(n/base.Seconds(), "bare-req/s")
			b.ReportMetric(base.Seconds()/sub.Seconds(), "x-req/s")
		})
	}
}
