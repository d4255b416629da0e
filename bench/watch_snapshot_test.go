package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/paygate-go/paygate/pgstore"
)

// BenchmarkWatchTakeUnderSnapshot: the watch's take of one due order (and
// the check's reschedule) with 10,000 awaited orders, every one always
// due, after 20,000 checks (b.N rounds of them), idle against the same
// with one other session holding a snapshot open from before the first
// check (REPEATABLE READ, one SELECT, then idle in transaction: what a
// report, a pg_dump or a forgotten BEGIN does). Each check moves its
// order's next_check twice, so every one leaves two index entries that
// vacuum may not remove while the snapshot lives, and the take's index
// scan walks them. Reports ms a take over the last 1,000 checks of each
// side and x/idle. Needs PAYGATE_TEST_POSTGRES_DSN.
func BenchmarkWatchTakeUnderSnapshot(b *testing.B) {
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
	const orders, checks, last = 10_000, 20_000, 1_000
	for i := 0; i < b.N; i++ {
		var took [2]time.Duration
		for side, held := range []bool{false, true} {
			table := fmt.Sprintf("bench_watch_%d_%d", time.Now().UnixNano(), side)
			s, err := pgstore.NewWatchStore(db, table)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
			drop := func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table + ", " + table + "_budget") }
			base := time.Now().Add(-time.Hour)
			if _, err := db.Exec(`INSERT INTO `+table+` (ref, created, next_check)
SELECT 'INV-' || i, $1::timestamptz, $1::timestamptz + i * interval '1 millisecond' FROM generate_series(1, $2::int) AS i`, base, orders); err != nil {
				b.Fatal(err)
			}
			if _, err := db.Exec("VACUUM ANALYZE " + table); err != nil {
				b.Fatal(err)
			}
			var snapshot *sql.Tx
			if held {
				if snapshot, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead}); err != nil {
					b.Fatal(err)
				}
				var n int
				if err := snapshot.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
			now := base.Add(24 * time.Hour) // every order is always due
			for c := range checks {
				start := time.Now()
				got, err := s.Take(ctx, now, 1, time.Minute)
				if c >= checks-last {
					took[side] += time.Since(start)
				}
				if err != nil || len(got) != 1 {
					b.Fatal(len(got), err)
				}
				o := got[0]
				o.Next, o.Checks = base.Add(time.Duration(orders+c)*time.Millisecond), o.Checks+1 // due again, behind the others
				if err := s.Reschedule(ctx, o); err != nil {
					b.Fatal(err)
				}
			}
			if snapshot != nil {
				_ = snapshot.Rollback()
			}
			drop()
		}
		b.ReportMetric(float64(took[0].Microseconds())/last/1000, "ms/take-idle")
		b.ReportMetric(float64(took[1].Microseconds())/last/1000, "ms/take-held")
		b.ReportMetric(float64(took[1])/float64(took[0]), "x/idle")
	}
}
