package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// concurrently runs fn n times spread over c goroutines.
func concurrently(c, n int, fn func()) {
	var wg sync.WaitGroup
	for g := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += c {
				fn()
			}
		}()
	}
	wg.Wait()
}

// sqlBench is what both pgstore benchmarks stand on: a migrated
// pgstore table on a *sql.DB of pgx's driver, pgx's own pool, and the
// floor's table, a bare (key text PRIMARY KEY); all dropped after. It
// skips without PAYGATE_TEST_POSTGRES_DSN.
type sqlBench struct {
	d      *pgstore.Deduper
	db     *sql.DB
	pool   *pgxpool.Pool
	name   string // the pgstore table's
	insert string // the floor: INSERT ... ON CONFLICT DO NOTHING of $1
}

// table is the pgstore table's name, a prefix for the benchmark's own.
func (sb *sqlBench) table() string { return sb.name }

func newSQLBench(b testing.TB, name string) *sqlBench {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("PAYGATE_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	// One pool size on both sides: as many connections as the most
	// callers at once.
	const conns = 32 // two pools within PostgreSQL's default 100
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	table := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	d, err := pgstore.New(db, pgstore.WithTable(table))
	if err != nil {
		b.Fatal(err)
	}
	floor := table + "_floor"
	b.Cleanup(func() {
		_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+floor)
		_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+table)
		_, _ = pool.Exec(ctx, "DROP FUNCTION IF EXISTS "+table+"_claim(text, text, bigint)")
	})
	if err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE "+floor+" (key text PRIMARY KEY)"); err != nil {
		b.Fatal(err)
	}
	return &sqlBench{d: d, db: db, pool: pool, name: table, insert: "INSERT INTO " + floor + " (key) VALUES ($1) ON CONFLICT DO NOTHING"}
}

// BenchmarkPostgresDeduper: pgstore's Claim of a completed key (a duplicate
// callback) against the floor, a hand-written pgx INSERT ... ON CONFLICT DO
// NOTHING of an existing key on a pool, with 1 and 16 callers at once. It
// needs PAYGATE_TEST_POSTGRES_DSN and is skipped without it.
func BenchmarkPostgresDeduper(b *testing.B) {
	ctx := context.Background()
	sb := newSQLBench(b, "bench_dedup")
	d, pool, insert := sb.d, sb.pool, sb.insert
	if _, err := pool.Exec(ctx, insert, "INV-2026-000123"); err != nil {
		b.Fatal(err)
	}
	c, err := d.Claim(ctx, "INV-2026-000123", time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Complete(ctx, "INV-2026-000123", c.Token, "GW20261122000123"); err != nil {
		b.Fatal(err)
	}
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			interleave(b, 1, side{"pgstore", func() {
				concurrently(conc, 16*conc, func() {
					if c, err := d.Claim(ctx, "INV-2026-000123", time.Minute); err != nil || c.State != paygate.ClaimDone {
						b.Error(c.State, err)
					}
				})
			}}, side{"pgx", func() {
				concurrently(conc, 16*conc, func() {
					if _, err := pool.Exec(ctx, insert, "INV-2026-000123"); err != nil {
						b.Error(err)
					}
				})
			}})
		})
	}
}

// BenchmarkPostgresDeduperNew: pgstore's Claim of a key never seen (a new
// event's first delivery) against the floor, a hand-written pgx INSERT ...
// ON CONFLICT DO NOTHING of a fresh key on a pool, with 1 and 16 callers
// at once. Both insert a row and commit it (a WAL flush each). Every call
// uses a key of its own: at most 16*16*b.N rows a side, dropped after. It
// needs PAYGATE_TEST_POSTGRES_DSN and is skipped without it.
func BenchmarkPostgresDeduperNew(b *testing.B) {
	ctx := context.Background()
	sb := newSQLBench(b, "bench_dedup_new")
	d, pool, insert := sb.d, sb.pool, sb.insert
	var seq atomic.Int64
	fresh := func() string { return fmt.Sprint("INV-NEW-", seq.Add(1)) }
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			interleave(b, 1, side{"pgstore", func() {
				concurrently(conc, 16*conc, func() {
					if c, err := d.Claim(ctx, fresh(), time.Minute); err != nil || c.State != paygate.ClaimAcquired {
						b.Error(c.State, err)
					}
				})
			}}, side{"pgx", func() {
				concurrently(conc, 16*conc, func() {
					if _, err := pool.Exec(ctx, insert, fresh()); err != nil {
						b.Error(err)
					}
				})
			}})
		})
	}
}

// BenchmarkFulfilTx: a payment through PostgreSQL on pgstore's
// transactional path, called as CallbackHandler calls it, against the
// floor a merchant would write by hand, in alternating rounds, at 1, 16
// and 64 callers at once: FulfilTx (database/sql: BEGIN, its claim, the
// merchant's INSERT into a ledger, COMMIT) against the "sql" floor on the
// same *sql.DB, and FulfilPgx (pgx, on a *sql.DB made by
// stdlib.OpenDBFromPool: BEGIN with its claim in one round trip, the
// INSERT, COMMIT) against the "pgx" floor on the same *pgxpool.Pool. A
// floor's new event is a transaction of BEGIN, INSERT ... ON CONFLICT DO
// NOTHING of the key, the same ledger INSERT and COMMIT; its duplicate is
// that one INSERT of an existing key. It reports rate-x/<floor>, the
// floor's time over the SDK's (1 is parity, above 1 faster), and
// p99-x/<floor>, the SDK's 99th percentile latency over the floor's. It
// needs PAYGATE_TEST_POSTGRES_DSN and is skipped without it.
func BenchmarkFulfilTx(b *testing.B) {
	ctx := context.Background()
	sb := newSQLBench(b, "bench_fulfil_tx")
	d, db, pool, insert := sb.d, sb.db, sb.pool, sb.insert
	dp, err := pgstore.NewPgx(pool, pgstore.WithTable(sb.table()))
	if err != nil {
		b.Fatal(err)
	}
	ledger, floorLedger := sb.table()+"_ledger", sb.table()+"_floor_ledger"
	for _, l := range []string{ledger, floorLedger} {
		if _, err := pool.Exec(ctx, "CREATE TABLE "+l+" (ref_no text, order_no text)"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+l) })
	}
	ledgerInsert, floorInsert := "INSERT INTO "+ledger+" (ref_no, order_no) VALUES ($1, $2)", "INSERT INTO "+floorLedger+" (ref_no, order_no) VALUES ($1, $2)"
	viaSQL := d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		_, err := tx.ExecContext(ctx, ledgerInsert, cb.RefNo, cb.OrderNo)
		return err
	})
	viaPgx := dp.FulfilPgx(func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error {
		_, err := tx.Exec(ctx, ledgerInsert, cb.RefNo, cb.OrderNo)
		return err
	})
	fulfil := func(f paygate.TxFulfiller, d paygate.Deduper, ref string, want paygate.ClaimState) {
		cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: ref, OrderNo: "GW-" + ref}
		if res, err := f.FulfilOnce(ctx, paygate.HookClaim{Key: "fulfil|" + ref, Result: cb.OrderNo, Deduper: d}, cb); err != nil || res.State != want {
			b.Error(ref, res.State, err)
		}
	}
	sqlFloor := func(ref string) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Error(err)
			return
		}
		defer func() { _ = tx.Rollback() }()
		res, err := tx.ExecContext(ctx, insert, "fulfil|"+ref)
		if err != nil {
			b.Error(err)
			return
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if _, err := tx.ExecContext(ctx, floorInsert, ref, "GW-"+ref); err != nil {
				b.Error(err)
				return
			}
		}
		if err := tx.Commit(); err != nil {
			b.Error(err)
		}
	}
	pgxFloor := func(ref string) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Error(err)
			return
		}
		defer func() { _ = tx.Rollback(ctx) }()
		tag, err := tx.Exec(ctx, insert, "fulfil|"+ref)
		if err != nil {
			b.Error(err)
			return
		}
		if tag.RowsAffected() == 1 {
			if _, err := tx.Exec(ctx, floorInsert, ref, "GW-"+ref); err != nil {
				b.Error(err)
				return
			}
		}
		if err := tx.Commit(ctx); err != nil {
			b.Error(err)
		}
	}
	fulfil(viaSQL, d, "DUP", paygate.ClaimAcquired)
	fulfil(viaPgx, dp, "DUP-PGX", paygate.ClaimAcquired)
	pgxFloor("DUP")
	var seq atomic.Int64
	fresh := func() string { return fmt.Sprint("NEW-", seq.Add(1)) }
	for _, tt := range []struct {
		name                     string
		viaSQL, sql, viaPgx, pgx func()
	}{
		{"new",
			func() { fulfil(viaSQL, d, fresh(), paygate.ClaimAcquired) }, func() { sqlFloor(fresh()) },
			func() { fulfil(viaPgx, dp, fresh(), paygate.ClaimAcquired) }, func() { pgxFloor(fresh()) }},
		{"duplicate",
			func() { fulfil(viaSQL, d, "DUP", paygate.ClaimDone) }, func() {
				if _, err := db.ExecContext(ctx, insert, "fulfil|DUP"); err != nil {
					b.Error(err)
				}
			},
			func() { fulfil(viaPgx, dp, "DUP-PGX", paygate.ClaimDone) }, func() {
				if _, err := pool.Exec(ctx, insert, "fulfil|DUP"); err != nil {
					b.Error(err)
				}
			}},
	} {
		for _, conc := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/c=%d", tt.name, conc), func(b *testing.B) {
				// 8 calls a caller a round, 32 at least: a p99 of 1,920
				// calls at 60 rounds, not of 480.
				n := max(8*conc, 32)
				var viaSQL, sqlSide, viaPgx, pgxSide timedSide
				for range b.N {
					viaSQL.round(conc, n, tt.viaSQL)
					sqlSide.round(conc, n, tt.sql)
					viaPgx.round(conc, n, tt.viaPgx)
					pgxSide.round(conc, n, tt.pgx)
				}
				for _, pair := range []struct {
					name       string
					sdk, floor *timedSide
				}{{"FulfilTx/sql", &viaSQL, &sqlSide}, {"FulfilPgx/pgx", &viaPgx, &pgxSide}} {
					b.ReportMetric(float64(pair.floor.took)/float64(pair.sdk.took), "rate-x:"+pair.name)
					b.ReportMetric(float64(pair.sdk.p99())/float64(pair.floor.p99()), "p99-x:"+pair.name)
				}
			})
		}
	}
}

// timedSide is one side of BenchmarkFulfilTx: its total time and every
// call's latency.
type timedSide struct {
	took time.Duration
	mu   sync.Mutex
	lat  []time.Duration
}

// round runs fn n times over c goroutines, timing the round and each call.
func (s *timedSide) round(c, n int, fn func()) {
	start := time.Now()
	concurrently(c, n, func() {
		t := time.Now()
		fn()
		d := time.Since(t)
		s.mu.Lock()
		s.lat = append(s.lat, d)
		s.mu.Unlock()
	})
	s.took += time.Since(start)
}

// p99 is the 99th percentile of the latencies.
func (s *timedSide) p99() time.Duration {
	slices.Sort(s.lat)
	return s.lat[len(s.lat)*99/100]
}
