package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paygate-go/paygate"
)

// BenchmarkFleetCPU: what a callback costs in CPU, on the replica and in
// PostgreSQL, for an operator sizing a fleet (docs/operations.md). A
// replica (the real CallbackHandler, pgstore's FulfilTx writing one
// ledger row, on an httptest server) takes rounds of signed callbacks over
// loopback HTTP from 16 kept-alive clients, one in ten a duplicate of a
// completed event (the previous round's callback, resent as is). In
// alternating rounds, on the same bodies and client: a bare handler
// (parse the form, 200), and the floor, PostgreSQL alone: a pgx loop of
// the same transaction at the same concurrency (BEGIN, INSERT ... ON
// CONFLICT DO NOTHING of the key, the ledger row if it inserted, COMMIT).
//
// Per callback (or floor transaction), from diffs around each round:
//   - cpu-us:process, this process's user+system time (getrusage): the
//     handler, its database/sql and pgx driver, net/http's server and the
//     driving client; cpu-us:bare, the same for the bare handler; and
//     cpu-us:replica, their difference: what the SDK's handler and its
//     database round trips add to a bare net/http handler.
//   - cpu-us:pg, the CPU time of PostgreSQL's backends serving this
//     benchmark's database (every client backend pg_stat_activity shows
//     on it; the database must be the benchmark's alone), from /proc;
//     cpu-us:pg-floor, the same for the floor.
//   - cpu-us:pg-bg, the server's other processes (WAL writer,
//     checkpointer, background writer, autovacuum) and the postmaster:
//     server-wide, so others' load on a shared server counts too;
//     cpu-us:pg-bg-floor, the same during the floor's rounds.
//
// cb/s and tx/s:floor are the rates of the two; rate-x/floor is the
// floor's time over the replica's. It is skipped without
// PAYGATE_TEST_POSTGRES_DSN or off Linux, and fails when the server's
// processes cannot be read (a server on another machine).
func BenchmarkFleetCPU(b *testing.B) {
	if errNoCPUClock != nil {
		b.Skip(errNoCPUClock)
	}
	ctx := context.Background()
	sb := newSQLBench(b, "bench_fleet_cpu")
	key := mustKey(b)
	ledger, floorLedger := sb.table()+"_ledger", sb.table()+"_floor_ledger"
	for _, l := range []string{ledger, floorLedger} {
		if _, err := sb.pool.Exec(ctx, "CREATE TABLE "+l+" (ref_no text, order_no text)"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _, _ = sb.pool.Exec(ctx, "DROP TABLE IF EXISTS "+l) })
	}
	ledgerInsert := "INSERT INTO " + ledger + " (ref_no, order_no) VALUES ($1, $2)"
	handler := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: sb.d,
		Fulfil: sb.d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
			_, err := tx.ExecContext(ctx, ledgerInsert, cb.RefNo, cb.OrderNo)
			return err
		})}
	const conc = 16
	n := 512 // callbacks a round
	if testing.Short() {
		n = 64
	}
	replica, bare := newPoster(b, handler, conc), newPoster(b, bareHandler, conc)
	floor := &floorTx{b: b, pool: sb.pool, insert: sb.insert, ledger: "INSERT INTO " + floorLedger + " (ref_no, order_no) VALUES ($1, $2)"}

	// Every round's bodies, signed before the clock starts: round r's
	// duplicates are round r-1's callbacks (round 0's, of a warm-up
	// round that also opens the pools' connections).
	var seq int
	rounds := make([][]string, b.N+1)
	refs := make([][]string, b.N+1)
	for r := range rounds {
		for i := range n {
			if r > 0 && i%10 == 9 {
				rounds[r] = append(rounds[r], rounds[r-1][i-1])
				refs[r] = append(refs[r], refs[r-1][i-1])
				continue
			}
			seq++
			ref := fmt.Sprintf("INV-2026-%07d~cart 88", seq)
			rounds[r] = append(rounds[r], callback(b, key, ref).Encode())
			refs[r] = append(refs[r], ref)
		}
	}
	openConns(b, sb, conc)
	replica.round(rounds[0])
	bare.round(rounds[0])
	floor.round(refs[0], conc)

	pg := pgProcs(b, sb.pool)
	var fleet, bareSide, floorSide cpuSide
	b.ResetTimer()
	for r := 1; r <= b.N; r++ {
		fleet.measure(b, pg, n, func() { replica.round(rounds[r]) })
		bareSide.measure(b, pg, n, func() { bare.round(rounds[r]) })
		floorSide.measure(b, pg, n, func() { floor.round(refs[r], conc) })
	}
	b.StopTimer()
	if after := pgProcs(b, sb.pool); !slices.Equal(after.backends, pg.backends) {
		b.Fatalf("PostgreSQL's backends changed during the run (%v, then %v): their CPU time is not all counted", pg.backends, after.backends)
	}
	var fulfilled int
	if err := sb.pool.QueryRow(ctx, "SELECT count(*) FROM "+ledger).Scan(&fulfilled); err != nil {
		b.Fatal(err)
	}
	if fulfilled != seq {
		b.Fatalf("%d ledger rows for %d payments", fulfilled, seq)
	}
	us := func(d time.Duration, calls int) float64 {
		return float64(d) / float64(time.Microsecond) / float64(calls)
	}
	b.ReportMetric(us(fleet.self, fleet.calls), "cpu-us:process")
	b.ReportMetric(us(bareSide.self, bareSide.calls), "cpu-us:bare")
	b.ReportMetric(us(fleet.self, fleet.calls)-us(bareSide.self, bareSide.calls), "cpu-us:replica")
	b.ReportMetric(us(fleet.backends, fleet.calls), "cpu-us:pg")
	b.ReportMetric(us(fleet.background, fleet.calls), "cpu-us:pg-bg")
	b.ReportMetric(us(floorSide.backends, floorSide.calls), "cpu-us:pg-floor")
	b.ReportMetric(us(floorSide.background, floorSide.calls), "cpu-us:pg-bg-floor")
	b.ReportMetric(float64(fleet.calls)/fleet.wall.Seconds(), "cb/s")
	b.ReportMetric(float64(floorSide.calls)/floorSide.wall.Seconds(), "tx/s:floor")
	b.ReportMetric(float64(floorSide.wall)/float64(fleet.wall), "rate-x/floor")
}

// poster posts callbacks to a server running a handler, conc at a time on
// kept-alive connections, and fails on an answer other than 200.
type poster struct {
	b      *testing.B
	url    string
	client *http.Client
	conc   int
}

func newPoster(b *testing.B, h http.Handler, conc int) *poster {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}}
	b.Cleanup(client.CloseIdleConnections)
	return &poster{b: b, url: srv.URL + "/callback", client: client, conc: conc}
}

// round posts every body once.
func (p *poster) round(bodies []string) {
	var next atomic.Int64
	concurrently(p.conc, len(bodies), func() {
		resp, err := p.client.Post(p.url, "application/x-www-form-urlencoded", strings.NewReader(bodies[next.Add(1)-1]))
		if err != nil {
			p.b.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			p.b.Errorf("status %d", resp.StatusCode)
		}
	})
}

// floorTx is the floor of BenchmarkFleetCPU: the callback's transaction
// written by hand on pgx, PostgreSQL's side alone.
type floorTx struct {
	b              *testing.B
	pool           *pgxpool.Pool
	insert, ledger string
}

// round runs one transaction a ref, conc at a time.
func (f *floorTx) round(refs []string, conc int) {
	ctx := context.Background()
	var next atomic.Int64
	concurrently(conc, len(refs), func() {
		ref := refs[next.Add(1)-1]
		tx, err := f.pool.Begin(ctx)
		if err != nil {
			f.b.Error(err)
			return
		}
		defer func() { _ = tx.Rollback(ctx) }()
		tag, err := tx.Exec(ctx, f.insert, "fulfil|"+ref)
		if err == nil && tag.RowsAffected() == 1 {
			_, err = tx.Exec(ctx, f.ledger, ref, "GW-"+ref)
		}
		if err == nil {
			err = tx.Commit(ctx)
		}
		if err != nil {
			f.b.Error(err)
		}
	})
}

// openConns opens conc connections in each pool before the backends are
// listed, so that none opens mid-run, its CPU time uncounted.
func openConns(b *testing.B, sb *sqlBench, conc int) {
	ctx := context.Background()
	for range conc {
		c, err := sb.db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		pc, err := sb.pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer pc.Release()
	}
}

// pgServer is the PostgreSQL processes whose CPU time BenchmarkFleetCPU
// reads: the client backends on its database, and the rest of the server.
type pgServer struct {
	backends, background []int
}

// pgProcs lists them: pg_stat_activity's client backends on the current
// database, its other processes (autovacuum workers come and go: those of
// the moment) and the postmaster, the parent of a backend.
func pgProcs(b *testing.B, pool *pgxpool.Pool) pgServer {
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT pid, backend_type = 'client backend' AND datname = current_database() FROM pg_stat_activity
		WHERE backend_type <> 'client backend' OR datname = current_database() ORDER BY pid`)
	if err != nil {
		b.Fatal(err)
	}
	var s pgServer
	for rows.Next() {
		var pid int
		var ours bool
		if err := rows.Scan(&pid, &ours); err != nil {
			b.Fatal(err)
		}
		if ours {
			s.backends = append(s.backends, pid)
		} else {
			s.background = append(s.background, pid)
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	var postmaster int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&postmaster); err != nil {
		b.Fatal(err)
	}
	if postmaster, err = parentOf(postmaster); err != nil {
		b.Fatal("PostgreSQL's processes are not readable here (is the server on this machine?): ", err)
	}
	s.background = append(s.background, postmaster)
	return s
}

// cpuSide is one side's totals over its rounds.
type cpuSide struct {
	calls                            int
	wall, self, backends, background time.Duration
}

// measure runs one round of calls and adds its wall and CPU times.
func (s *cpuSide) measure(b *testing.B, pg pgServer, calls int, round func()) {
	read := func(pids []int, strict bool) map[int]time.Duration {
		t := make(map[int]time.Duration, len(pids))
		for _, pid := range pids {
			c, err := procCPU(pid)
			if err != nil && strict {
				b.Fatal("PostgreSQL's CPU time is not readable (is the server on this machine?): ", err)
			}
			if err == nil {
				t[pid] = c
			}
		}
		return t
	}
	// A process read at both ends: an autovacuum worker that ends
	// mid-round is left out.
	diff := func(before, after map[int]time.Duration) (d time.Duration) {
		for pid, t := range after {
			if t0, ok := before[pid]; ok {
				d += t - t0
			}
		}
		return d
	}
	self0, be0, bg0, start := selfCPU(), read(pg.backends, true), read(pg.background, false), time.Now()
	round()
	wall := time.Since(start)
	s.self += selfCPU() - self0
	s.backends += diff(be0, read(pg.backends, true))
	s.background += diff(bg0, read(pg.background, false))
	s.wall += wall
	s.calls += calls
}
