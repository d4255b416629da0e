package pgstore

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
	"github.com/paygate-go/paygate/gatewaytest"
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
		return &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
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
// path (Fulfil: d.FulfilTx(fn), a plain INSERT into a ledger without one) and a
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
	pb := &pathsBench{b: b, key: key, proxy: proxy, timed: newBenchPaths(b, direct, key), counted: newBenchPaths(b, counted, key)}
	pb.warm()
	dup := pb.body("BENCH-DUP")
	for _, p := range []benchPaths{pb.timed, pb.counted} {
		for _, h := range p {
			benchServe(b, h, dup)
		}
	}
	seq := 0
	for _, tt := range []struct {
		name string
		body func(path string) string
	}{
		{name: "duplicate", body: func(string) string { return dup }},
		{name: "new", body: func(path string) string { seq++; return pb.body(fmt.Sprint("BENCH-", path, "-", seq)) }},
	} {
		b.Run(tt.name, func(b *testing.B) { pb.run(b, tt.body) })
	}
}

// benchPaths are the three handlers of BenchmarkPathsOnPostgres: the lease
// path, the transactional path and the floor (pathName).
type benchPaths [3]http.Handler

// pathName names path p of benchPaths.
func pathName(p int) string { return [...]string{"lease", "tx", "floor"}[p] }

// newBenchPaths builds the three paths on a database opened at dsn, each
// with ledger tables of its own.
func newBenchPaths(b *testing.B, dsn string, key paygate.Key) benchPaths {
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
	return benchPaths{
		&paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Logger: logger,
			Fulfil: paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error {
				_, err := db.ExecContext(ctx, upsert, cb.RefNo, cb.OrderNo)
				return err
			})},
		&paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Logger: logger,
			Fulfil: d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO `+plain+` (ref_no, order_no) VALUES ($1, $2)`, cb.RefNo, cb.OrderNo)
				return err
			})},
		floorHandler(db, key, upsert),
	}
}

// floorHandler is the hand-written floor: parse, verify, ParseCallback,
// upsert, 200.
func floorHandler(db *sql.DB, key paygate.Key, upsert string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	})
}

// pathsBench runs BenchmarkPathsOnPostgres: the paths timed, and a second
// set whose round trips the proxy counts.
type pathsBench struct {
	b              *testing.B
	key            paygate.Key
	proxy          *countingProxy
	timed, counted benchPaths
}

// body is the signed body of a success callback for ref.
func (pb *pathsBench) body(ref string) string { return benchCallbackBody(pb.b, pb.key, ref) }

// warm runs five new events through every path, timed and counted, so that
// their statements are prepared.
func (pb *pathsBench) warm() {
	for p := range pb.timed {
		for _, paths := range []benchPaths{pb.timed, pb.counted} {
			for i := range 5 {
				benchServe(pb.b, paths[p], pb.body(fmt.Sprint("WARM-", pathName(p), i)))
			}
		}
	}
}

// run times b.N callbacks of body through each path in turn, then reports
// each path's figures and the ratios to the floor.
func (pb *pathsBench) run(b *testing.B, body func(path string) string) {
	b.ReportAllocs()
	var spent [3]time.Duration
	for i := 0; i < b.N; i++ {
		for p, h := range pb.timed {
			s := body(pathName(p))
			start := time.Now()
			benchServe(b, h, s)
			spent[p] += time.Since(start)
		}
	}
	b.StopTimer()
	for p := range pb.timed {
		pb.report(b, p, body)
		b.ReportMetric(float64(b.N)/spent[p].Seconds(), pathName(p)+"-req/s")
	}
	b.ReportMetric(spent[2].Seconds()/spent[0].Seconds(), "lease-x-floor")
	b.ReportMetric(spent[2].Seconds()/spent[1].Seconds(), "tx-x-floor")
}

// report counts path p's round trips (on the counted set) and allocations
// (on the timed set) per callback over a batch of body.
func (pb *pathsBench) report(b *testing.B, p int, body func(path string) string) {
	const batch = 20
	name := pathName(p)
	benchServe(b, pb.counted[p], body(name)) // a connection idle for a second is pinged on reuse: not the path's cost
	bodies := make([]string, batch)
	for j := range bodies {
		bodies[j] = body(name)
	}
	trips := pb.proxy.roundTrips(func() {
		for _, s := range bodies {
			benchServe(b, pb.counted[p], s)
		}
	})
	for j := range bodies {
		bodies[j] = body(name)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, s := range bodies {
		benchServe(b, pb.timed[p], s)
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(trips)/batch, name+"-roundtrips/callback")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/batch, name+"-allocs/callback")
}

// benchCallbackBody is the signed body of a success callback for ref.
func benchCallbackBody(b *testing.B, key paygate.Key, ref string) string {
	f := url.Values{"status": {"success"}, "refNo": {ref}, "orderNo": {"GW-" + ref}, "amount": {"149.90"},
		"fpx": {`{"fpx_debit_auth_code":"00","fpx_buyer_name":"SITI NUR AISYAH"}`}}
	signed, err := gatewaytest.SignCallback(key, f)
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
