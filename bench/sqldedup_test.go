package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/sqldedup"
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

// sqlBench is what both sqldedup benchmarks stand on: a migrated
// sqldedup table on a *sql.DB of pgx's driver, pgx's own pool, and the
// floor's table, a bare (key text PRIMARY KEY); all dropped after. It
// skips without PAYGATE_TEST_POSTGRES_DSN.
type sqlBench struct {
	d      *sqldedup.Deduper
	pool   *pgxpool.Pool
	insert string // the floor: INSERT ... ON CONFLICT DO NOTHING of $1
}

func newSQLBench(b *testing.B, name string) *sqlBench {
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
	db.SetMaxIdleConns(32)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	table := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	d, err := sqldedup.New(db, sqldedup.WithTable(table))
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
	return &sqlBench{d: d, pool: pool, insert: "INSERT INTO " + floor + " (key) VALUES ($1) ON CONFLICT DO NOTHING"}
}

// BenchmarkSQLDedup: sqldedup's Claim of a completed key (a duplicate
// callback) against the floor, a hand-written pgx INSERT ... ON CONFLICT DO
// NOTHING of an existing key on a pool, with 1 and 16 callers at once. It
// needs PAYGATE_TEST_POSTGRES_DSN and is skipped without it.
func BenchmarkSQLDedup(b *testing.B) {
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
			interleave(b, 1, side{"sqldedup", func() {
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

// BenchmarkSQLDedupNew: sqldedup's Claim of a key never seen (a new
// event's first delivery) against the floor, a hand-written pgx INSERT ...
// ON CONFLICT DO NOTHING of a fresh key on a pool, with 1 and 16 callers
// at once. Both insert a row and commit it (a WAL flush each). Every call
// uses a key of its own: at most 16*16*b.N rows a side, dropped after. It
// needs PAYGATE_TEST_POSTGRES_DSN and is skipped without it.
func BenchmarkSQLDedupNew(b *testing.B) {
	ctx := context.Background()
	sb := newSQLBench(b, "bench_dedup_new")
	d, pool, insert := sb.d, sb.pool, sb.insert
	var seq atomic.Int64
	fresh := func() string { return fmt.Sprint("INV-NEW-", seq.Add(1)) }
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			interleave(b, 1, side{"sqldedup", func() {
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
