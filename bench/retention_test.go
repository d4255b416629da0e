package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// retentionSizesVar names the sizes BenchmarkRetention measures, completed
// events in the table, comma-separated (default 1000000, 100000 with
// -short); the baseline of
// 10,000 is always measured beside them. retentionKeepVar set keeps the
// filled tables for the next run (a fill of 10 M rows takes minutes).
const (
	retentionSizesVar = "PAYGATE_BENCH_SIZES"
	retentionKeepVar  = "PAYGATE_BENCH_KEEP"
	retentionBase     = 10000
	// retentionDay is a day's rows: a shop of 25,000 payments a day,
	// which reaches 10 M rows at the default 400 days.
	retentionDay = 25000
	// retentionBacklog is ten days' rows, a purge that was not run for
	// ten days.
	retentionBacklog = 250000
)

// retentionTable is one size's pgstore table, filled with completed
// events that expire over the next 400 days.
type retentionTable struct {
	rows int
	d    *pgstore.Deduper
	f    paygate.TxFulfiller
	seq  atomic.Int64
	name string
	// lastPurge is how long the last purge measured beside claims took.
	lastPurge time.Duration
}

// BenchmarkRetention: the dedupe table at 10,000 completed events and at
// each size of PAYGATE_BENCH_SIZES, alternating round by round. It reports
// rate-x:10k/c=<callers>, the 10 k table's time for the same new payments
// (FulfilPgx, fn writing nothing) over this size's (1 is parity); purge-s
// and purge-max-s, the median and the slowest Purge of a day's 25,000
// expired rows, in seconds, its rests included (four fifths of it), and
// purge-x:10k, that median over the median of the same purge on the 10 k
// table, alternating with it;
// purge-claims-x, sixteen callers' new-payment rate while a Purge of a
// day's rows runs over their rate in as long a window without one, on the
// same table, the two windows alternating which goes first;
// backlog-claims-x, the same for a Purge of ten days' rows. The
// fill is one INSERT ... SELECT generate_series and a VACUUM ANALYZE, as
// autovacuum leaves a table. It needs PAYGATE_TEST_POSTGRES_DSN and is
// skipped without it.
func BenchmarkRetention(b *testing.B) {
	sb := newSQLBench(b, "bench_retention")
	sizes := []int{1000000}
	if testing.Short() { // CI's one round of every benchmark
		sizes = []int{100000}
	}
	if v := os.Getenv(retentionSizesVar); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				b.Fatal(retentionSizesVar, err)
			}
			sizes = append(sizes, n)
		}
	}
	base := retentionFill(b, sb.pool, retentionBase)
	for _, n := range sizes {
		t := retentionFill(b, sb.pool, n)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			for _, c := range []int{1, 16} {
				calls := max(8*c, 64)
				var atBase, atSize time.Duration
				for range b.N {
					atBase += retentionRound(b, base, c, calls)
					atSize += retentionRound(b, t, c, calls)
				}
				b.ReportMetric(float64(atBase)/float64(atSize), fmt.Sprintf("rate-x:10k/c=%d", c))
			}
			var took, atBaseTook []time.Duration
			for range b.N {
				atBaseTook = append(atBaseTook, retentionPurge(b, sb.pool, base, retentionDay))
				took = append(took, retentionPurge(b, sb.pool, t, retentionDay))
			}
			slices.Sort(took)
			slices.Sort(atBaseTook)
			b.ReportMetric(took[len(took)/2].Seconds(), "purge-s")
			b.ReportMetric(took[len(took)-1].Seconds(), "purge-max-s")
			b.ReportMetric(float64(took[len(took)/2])/float64(atBaseTook[len(atBaseTook)/2]), "purge-x:10k")
			for _, load := range []struct {
				rows int
				name string
			}{{retentionDay, "purge-claims-x"}, {retentionBacklog, "backlog-claims-x"}} {
				var with, without float64
				for i := range b.N {
					w, wo := retentionClaimsDuringPurge(b, sb.pool, t, load.rows, i%2 == 0)
					with += w
					without += wo
				}
				b.ReportMetric(with/without, load.name)
			}
		})
	}
}

// retentionFill returns the table of rows completed events, filled now or
// kept from an earlier run (retentionKeepVar).
func retentionFill(b *testing.B, pool *pgxpool.Pool, rows int) *retentionTable {
	ctx := context.Background()
	name := fmt.Sprintf("bench_retention_rows_%d", rows)
	d, err := pgstore.NewPgx(pool, pgstore.WithTable(name))
	if err != nil {
		b.Fatal(err)
	}
	t := &retentionTable{rows: rows, d: d, name: name}
	t.f = d.FulfilPgx(func(context.Context, pgx.Tx, *paygate.Callback) error { return nil })
	if os.Getenv(retentionKeepVar) == "" {
		b.Cleanup(func() {
			_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+name)
			_, _ = pool.Exec(ctx, "DROP FUNCTION IF EXISTS "+name+"_claim(text, text, bigint)")
		})
	}
	var have int64
	if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass($1)), -1)`, name).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have >= int64(rows) && have < int64(rows)*11/10 {
		return t // kept, its rows within 10 % (new payments of earlier runs)
	}
	_, _ = pool.Exec(ctx, "DROP TABLE IF EXISTS "+name)
	if err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := pool.Exec(ctx, `INSERT INTO `+name+` (key, token, done, result, expires_at)
SELECT 'fulfil|R' || lpad(i::text, 12, '0'), NULL, true, 'GW-' || i, now() + interval '1 day' + (i % 400) * interval '1 day' + (i % 86400) * interval '1 second'
FROM generate_series(1, $1::int) AS i`, rows); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+name); err != nil {
		b.Fatal(err)
	}
	var size int64
	if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, name).Scan(&size); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d rows filled in %v, %d bytes (%.0f a row with its two indexes)", name, rows, time.Since(start).Round(time.Second), size, float64(size)/float64(rows))
	return t
}

// retentionRound runs calls new payments over c callers on t and returns
// the time they took.
func retentionRound(b *testing.B, t *retentionTable, c, calls int) time.Duration {
	ctx := context.Background()
	start := time.Now()
	concurrently(c, calls, func() {
		ref := fmt.Sprint("NEW-", t.seq.Add(1), "-", start.UnixNano())
		cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: ref, OrderNo: "GW-" + ref}
		res, err := t.f.FulfilOnce(ctx, paygate.HookClaim{Key: "fulfil|" + ref, Result: cb.OrderNo, Deduper: t.d}, cb)
		if err != nil || res.State != paygate.ClaimAcquired {
			b.Error(ref, res.State, err)
		}
	})
	return time.Since(start)
}

// retentionExpire adds n expired completed events to t and vacuums it
// (untimed).
func retentionExpire(b *testing.B, pool *pgxpool.Pool, t *retentionTable, n int) {
	if _, err := pool.Exec(context.Background(), `INSERT INTO `+t.name+` (key, token, done, result, expires_at)
SELECT 'fulfil|X' || $2::bigint || '-' || i, NULL, true, 'GW-' || i, now() - interval '1 second' - (i % 86400) * interval '1 second'
FROM generate_series(1, $1::int) AS i`, n, time.Now().UnixNano()); err != nil {
		b.Fatal(err)
	}
	// As the rows a purge meets are, written 400 days before and vacuumed
	// since: their hint bits set, and the dead rows of the purge before
	// gone (autovacuum follows each day's purge, docs/operations.md).
	if _, err := pool.Exec(context.Background(), `VACUUM `+t.name); err != nil {
		b.Fatal(err)
	}
}

// retentionPurge adds n expired events to t and returns how long Purge
// took to delete them.
func retentionPurge(b *testing.B, pool *pgxpool.Pool, t *retentionTable, n int) time.Duration {
	retentionExpire(b, pool, t, n)
	start := time.Now()
	deleted, err := t.d.Purge(context.Background())
	took := time.Since(start)
	if err != nil || deleted < int64(n) {
		b.Fatal(deleted, err)
	}
	return took
}

// retentionClaimsDuringPurge returns sixteen callers' new-payment rate
// on t while a Purge of n expired rows runs, and over as long a window
// without one, the two windows in the order first (with the purge first
// when true). The callers run throughout; the n rows are added before
// they start.
func retentionClaimsDuringPurge(b *testing.B, pool *pgxpool.Pool, t *retentionTable, n int, purgeFirst bool) (with, without float64) {
	ctx := context.Background()
	retentionExpire(b, pool, t, n)
	var paid atomic.Int64
	stop := make(chan struct{})
	var callers sync.WaitGroup
	for range 16 {
		callers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ref := fmt.Sprint("NEW-", t.seq.Add(1), "-", time.Now().UnixNano())
				cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: ref, OrderNo: "GW-" + ref}
				res, err := t.f.FulfilOnce(ctx, paygate.HookClaim{Key: "fulfil|" + ref, Result: cb.OrderNo, Deduper: t.d}, cb)
				if err != nil || res.State != paygate.ClaimAcquired {
					b.Error(ref, res.State, err)
				}
				paid.Add(1)
			}
		})
	}
	defer callers.Wait()
	defer close(stop)
	time.Sleep(50 * time.Millisecond) // every caller under way
	window := func(run func()) float64 {
		start, before := time.Now(), paid.Load()
		run()
		return float64(paid.Load()-before) / time.Since(start).Seconds()
	}
	var took time.Duration
	purge := func() {
		start := time.Now()
		deleted, err := t.d.Purge(ctx)
		took = time.Since(start)
		if err != nil || deleted < int64(n) {
			b.Error(deleted, err)
		}
	}
	if purgeFirst {
		with = window(purge)
		without = window(func() { time.Sleep(took) })
	} else {
		// As long as the purge will take: the one before on this table.
		without = window(func() { time.Sleep(t.lastPurge) })
		with = window(purge)
	}
	t.lastPurge = took
	return with, without
}
