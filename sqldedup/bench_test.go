package sqldedup

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
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
	body := func(ref string) string { return benchCallbackBody(b, key, ref) }
	serve := func(h http.Handler, body string) { benchServe(b, h, body) }
	dup := body("BENCH-DUP")
	serve(h, dup)
	serve(hc, dup)
	seq := 0
	for _, tt := range []struct {
		name string
		body func() string
	}{
		{name: "duplicate", body: func() string { return dup }},
		{name: "new", body: func() string { seq++; return body(fmt.Sprint("BENCH-", seq)) }},
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

// BenchmarkPathsOnPostgres compares, in one interleaved run, the lease path
// (CallbackHandler on this Deduper, Fulfil an idempotent INSERT ... ON
// CONFLICT DO NOTHING into a ledger with a unique key), the transactional
// path (Fulfil: FulfilTx, a plain INSERT into a ledger without one) and a
// hand-written floor (parse, verify the signature, the same INSERT ... ON
// CONFLICT DO NOTHING through pgx, answer 200), for a new event and for a
// duplicate. One op is one callback through each of the three in turn; each
// is timed alone. It reports each path's callbacks per second, round trips
// per callback (counted through the wire-protocol proxy on a second set of
// handlers) and allocations per callback (on the first batch).
func BenchmarkPathsOnPostgres(b *testing.B) {
	direct := testDSN(b)
	proxy, counted := newCountingProxy(b, direct)
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	if err != nil {
		b.Fatal(err)
	}
	type paths struct{ lease, tx, floor http.Handler }
	build := func(dsn string) paths {
		db := openDB(b, dsn)
		warm(b, db, 4)
		d, _ := testDeduperOn(b, db)
		unique, plain := fmt.Sprintf("bench_ledger_u_%d", rand.Uint32()), fmt.Sprintf("bench_ledger_%d", rand.Uint32())
		for _, ddl := range []string{
			`CREATE TABLE ` + unique + ` (ref_no text PRIMARY KEY, order_no text)`,
			`CREATE TABLE ` + plain + ` (ref_no text, order_no text)`,
		} {
			if _, err := db.Exec(ddl); err != nil {
				b.Fatal(err)
			}
		}
		b.Cleanup(func() { _, _ = db.Exec(`DROP TABLE ` + unique + `, ` + plain) })
		upsert := `INSERT INTO ` + unique + ` (ref_no, order_no) VALUES ($1, $2) ON CONFLICT DO NOTHING`
		logger := slog.New(slog.DiscardHandler)
		return paths{
			lease: &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Logger: logger,
				Fulfil: func(ctx context.Context, cb *paygate.Callback) error {
					_, err := db.ExecContext(ctx, upsert, cb.RefNo, cb.OrderNo)
					return err
				}},
			tx: &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Logger: logger,
				Fulfil: d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO `+plain+` (ref_no, order_no) VALUES ($1, $2)`, cb.RefNo, cb.OrderNo)
					return err
				})},
			floor: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseForm(); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				if err := paygate.VerifyCallback(r.PostForm, key); err != nil {
					http.Error(w, "forbidden", http.StatusForbidden)
					return
				}
				cb, err := paygate.ParseCallback(r.PostForm)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				if _, err := db.ExecContext(r.Context(), upsert, cb.RefNo, cb.OrderNo); err != nil {
					http.Error(w, "unavailable", http.StatusServiceUnavailable)
					return
				}
				w.WriteHeader(http.StatusOK)
			}),
		}
	}
	timed, countedPaths := build(direct), build(counted)
	body := func(ref string) string { return benchCallbackBody(b, key, ref) }
	serve := func(h http.Handler, body string) { benchServe(b, h, body) }
	for _, name := range []string{"lease", "tx", "floor"} { // warm every path's statements, timed and counted
		for _, p := range []paths{timed, countedPaths} {
			h := map[string]http.Handler{"lease": p.lease, "tx": p.tx, "floor": p.floor}[name]
			for i := range 5 {
				serve(h, body(fmt.Sprint("WARM-", name, i)))
			}
		}
	}
	dup := body("BENCH-DUP")
	for _, p := range []paths{timed, countedPaths} {
		serve(p.lease, dup)
		serve(p.tx, dup)
		serve(p.floor, dup)
	}
	seq := 0
	for _, tt := range []struct {
		name string
		body func(path string) string
	}{
		{name: "duplicate", body: func(string) string { return dup }},
		{name: "new", body: func(path string) string { seq++; return body(fmt.Sprint("BENCH-", path, "-", seq)) }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			names := []string{"lease", "tx", "floor"}
			handlers := [][2]http.Handler{{timed.lease, countedPaths.lease}, {timed.tx, countedPaths.tx}, {timed.floor, countedPaths.floor}}
			var spent [3]time.Duration
			for i := 0; i < b.N; i++ {
				for p, h := range handlers {
					s := tt.body(names[p])
					start := time.Now()
					serve(h[0], s)
					spent[p] += time.Since(start)
				}
			}
			b.StopTimer()
			const batch = 20
			for p, h := range handlers {
				serve(h[1], tt.body(names[p])) // a connection idle for a second is pinged on reuse: not the path's cost
				bodies := make([]string, batch)
				for j := range bodies {
					bodies[j] = tt.body(names[p])
				}
				trips := proxy.roundTrips(func() {
					for _, s := range bodies {
						serve(h[1], s)
					}
				})
				for j := range bodies {
					bodies[j] = tt.body(names[p])
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for _, s := range bodies {
					serve(h[0], s)
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(trips)/batch, names[p]+"-roundtrips/callback")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/batch, names[p]+"-allocs/callback")
				b.ReportMetric(float64(b.N)/spent[p].Seconds(), names[p]+"-req/s")
			}
			b.ReportMetric(spent[2].Seconds()/spent[0].Seconds(), "lease-x-floor")
			b.ReportMetric(spent[2].Seconds()/spent[1].Seconds(), "tx-x-floor")
		})
	}
}

// benchCallbackBody is the signed body of a success callback for ref.
func benchCallbackBody(b *testing.B, key paygate.Key, ref string) string {
	f := url.Values{"status": {"success"}, "refNo": {ref}, "orderNo": {"GW-" + ref}, "amount": {"149.90"},
		"fpx": {`{"fpx_debit_auth_code":"00","fpx_buyer_name":"SITI NUR AISYAH"}`}}
	signed, err := paygate.SignCallback(key, f)
	if err != nil {
		b.Fatal(err)
	}
	return signed.Encode()
}

// benchServe runs one callback through h and fails unless it is answered
// 200.
func benchServe(b *testing.B, h http.Handler, body string) {
	r := httptest.NewRequest(http.MethodPost, "/return", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
}
