package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Taking a batch (the relay's own statement, claiming DefaultBatchSize
// due rows, in a transaction rolled back so the table stays as it is)
// from an outbox of 1,000,000 queued rows against one of 1,000, in
// alternating batches of calls: x/1k is time(1M) / time(1k). The fill is
// not timed; the plans of both are logged (-v). In this package, not in
// bench/, because it runs the unexported take statement.
func BenchmarkTake(b *testing.B) {
	ctx := context.Background()
	srv := sandbox(b)
	db := openDB(b, testDSN(b))
	small, big := newOutboxOn(b, db, srv), newOutboxOn(b, db, srv)
	body, err := json.Marshal(validTx("X", 0))
	require.NoError(b, err)
	for _, t := range []struct {
		o *Outbox
		n int
	}{{small, 1000}, {big, 1000000}} {
		_, err := db.Exec(`INSERT INTO `+t.o.table+` (orderno, body, status, due_at)
SELECT 'T-' || i, $1, 'success', now() - interval '1 hour' + i * interval '1 millisecond' FROM generate_series(1, $2::int) AS i`, string(body), t.n)
		require.NoError(b, err)
		_, err = db.Exec(`VACUUM ANALYZE ` + t.o.table)
		require.NoError(b, err)
		b.Logf("%d rows:\n%s", t.n, explainTake(b, db, t.o))
	}
	take := func(o *Outbox) time.Duration {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(b, err)
		defer func() { _ = tx.Rollback() }()
		start := time.Now()
		rows, err := tx.QueryContext(ctx, o.takeSQL, "bench", us(time.Minute), DefaultBatchSize)
		require.NoError(b, err)
		k := 0
		for rows.Next() {
			k++
		}
		took := time.Since(start)
		require.NoError(b, rows.Err())
		require.Equal(b, DefaultBatchSize, k)
		return took
	}
	var tookSmall, tookBig time.Duration
	b.ResetTimer()
	for range b.N {
		for range 5 {
			tookBig += take(big)
		}
		for range 5 {
			tookSmall += take(small)
		}
	}
	b.ReportMetric(float64(tookBig)/float64(5*b.N), "ns/take-1m")
	b.ReportMetric(float64(tookSmall)/float64(5*b.N), "ns/take-1k")
	b.ReportMetric(float64(tookBig)/float64(tookSmall), "x/1k")
}

// explainTake is the plan of the take statement on o's table, run and
// rolled back.
func explainTake(b *testing.B, db *sql.DB, o *Outbox) string {
	tx, err := db.Begin()
	require.NoError(b, err)
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.Query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) `+o.takeSQL, "bench", us(time.Minute), DefaultBatchSize)
	require.NoError(b, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		require.NoError(b, rows.Scan(&l))
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
