package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/pgstore"
	"github.com/paygate-go/paygate/watch"
)

// watchTable is a WatchStore filled with n awaited orders, every third
// created with extra data (INV-<i>~cart-<i>), all due, the earliest the
// highest i: a take walks the next_check index to its first row, a find
// looks up one base reference.
type watchTable struct {
	s     *pgstore.WatchStore
	n     int
	table string
}

// newWatchTable fills a WatchStore of n orders on db and analyses it.
func newWatchTable(b *testing.B, db *sql.DB, n int) *watchTable {
	ctx := context.Background()
	table := fmt.Sprintf("bench_watch_%d_%d", n, time.Now().UnixNano())
	s, err := pgstore.NewWatchStore(db, table)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table + ", " + table + "_budget") })
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO `+table+` (ref, created, next_check)
SELECT 'INV-' || g || CASE WHEN g % 3 = 0 THEN '~cart-' || g ELSE '' END,
       now() - interval '1 day', now() - make_interval(secs => g)
FROM generate_series(1, $1) g`, n); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
	return &watchTable{s: s, n: n, table: table}
}

// plan is the EXPLAIN (ANALYZE) of query on the table, one line.
func (w *watchTable) plan(b *testing.B, db *sql.DB, query string, args ...any) string {
	rows, err := db.Query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+strings.ReplaceAll(query, "$T", w.table), args...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			b.Fatal(err)
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, " | ")
}

// BenchmarkWatchStoreScale: the watch's take of one due order and its find
// by base reference on a WatchStore of 1,000,000 awaited orders against
// the same on a small one (1,000 for the take, 10,000 for the find), in
// alternating rounds; x/small is time(1 M) / time(small). With -v it logs
// each query's plan at 1 M. Each round's take moves one order past the
// lease (b.N at most 1,000). It needs PAYGATE_TEST_POSTGRES_DSN; with
// -short the big table has 20,000 orders.
func BenchmarkWatchStoreScale(b *testing.B) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("PAYGATE_TEST_POSTGRES_DSN is not set")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	size := 1_000_000
	if testing.Short() {
		size = 20_000 // CI's one round: the code runs, the figure is not the point
	}
	big := newWatchTable(b, db, size)
	take := `WITH due AS (SELECT ref, next_check FROM $T WHERE next_check <= now() ORDER BY next_check LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE $T w SET next_check = now() + interval '20 seconds', token = md5(random()::text || w.ref) FROM due WHERE w.ref = due.ref RETURNING w.ref`
	find := `SELECT ref FROM $T WHERE ref COLLATE "C" = $1 OR (ref COLLATE "C" >= $1 || '~' AND ref COLLATE "C" < $1 || chr(127)) ORDER BY ref COLLATE "C"`
	b.Logf("take at 1 M: %s", big.plan(b, db, take))
	b.Logf("find at 1 M: %s", big.plan(b, db, find, "INV-999"))
	for _, c := range []struct {
		name  string
		small int
		op    func(w *watchTable) func()
	}{
		{"take", 1_000, func(w *watchTable) func() {
			return func() {
				if _, err := w.s.Take(ctx, time.Now(), 1, watch.DefaultLease); err != nil {
					b.Error(err)
				}
			}
		}},
		{"find", 10_000, func(w *watchTable) func() {
			return func() {
				base := fmt.Sprint("INV-", 1+rand.IntN(w.n/10)*3) // an order created with extra data
				if got, err := w.s.Find(ctx, base); err != nil || len(got) != 1 {
					b.Error(base, got, err)
				}
			}
		}},
	} {
		small := newWatchTable(b, db, c.small)
		b.Run(c.name, func(b *testing.B) {
			if b.N > 1_000 {
				b.Fatal("at most 1,000 rounds: each take moves one of the small table's orders")
			}
			interleave(b, 1, side{"1M", c.op(big)}, side{"small", c.op(small)})
		})
	}
}
