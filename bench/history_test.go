package bench

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// historyRows are the table sizes BenchmarkPostgresDeduperHistory runs at:
// PAYGATE_BENCH_ROWS (comma-separated), else 10 k and 1 M.
func historyRows(b *testing.B) []int {
	list := os.Getenv("PAYGATE_BENCH_ROWS")
	if list == "" {
		list = "10000,1000000"
	}
	var rows []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("PAYGATE_BENCH_ROWS: %q is not a positive count", f)
		}
		rows = append(rows, n)
	}
	return rows
}

// historyTables is a pgstore table holding rows completed events
// ("fulfil|INV-" and the md5 of a number, done, kept 400 days) and the
// floor's table, a copy of it (same columns, same rows). Both are kept
// between runs (filling 10 M rows takes minutes): drop them by hand, or
// the database.
type historyTables struct {
	d     *pgstore.Deduper
	dsql  *pgstore.Deduper // the same table on database/sql's pool, for FulfilTx
	pool  *pgxpool.Pool
	table string
	rows  int
	floor string // INSERT ... ON CONFLICT DO NOTHING of the floor's row
}

func newHistoryTables(b *testing.B, ctx context.Context, pool *pgxpool.Pool, db *sql.DB, rows int) *historyTables {
	table := fmt.Sprintf("bench_history_%d", rows)
	floor := table + "_floor"
	d, err := pgstore.NewPgx(pool, pgstore.WithTable(table))
	if err != nil {
		b.Fatal(err)
	}
	dsql, err := pgstore.New(db, pgstore.WithTable(table))
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	var have int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have < rows {
		for _, q := range []string{
			"TRUNCATE " + table,
			`INSERT INTO ` + table + ` (key, token, done, result, expires_at)
SELECT 'fulfil|INV-' || md5(i::text), NULL, true, 'GW' || i, now() + interval '400 days' FROM generate_series(1, ` + strconv.Itoa(rows) + `) AS i`,
			"DROP TABLE IF EXISTS " + floor,
			"CREATE TABLE " + floor + " (LIKE " + table + " INCLUDING ALL)",
			"INSERT INTO " + floor + " SELECT * FROM " + table,
			"VACUUM ANALYZE " + table,
			"VACUUM ANALYZE " + floor,
		} {
			if _, err := pool.Exec(ctx, q); err != nil {
				b.Fatal(q, err)
			}
		}
	}
	return &historyTables{d: d, dsql: dsql, pool: pool, table: table, rows: rows,
		floor: `INSERT INTO ` + floor + ` (key, token, done, result, expires_at) VALUES ($1, NULL, true, $2, now() + interval '400 days') ON CONFLICT DO NOTHING`}
}

// serverCounters is the server's WAL insert position and next transaction
// id: a server-wide count, so the benchmark's figures hold only on a
// server nothing else uses.
type serverCounters struct{ wal, xid int64 }

func readCounters(b *testing.B, ctx context.Context, pool *pgxpool.Pool) serverCounters {
	var c serverCounters
	if err := pool.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn() - '0/0', txid_snapshot_xmax(txid_current_snapshot())`).Scan(&c.wal, &c.xid); err != nil {
		b.Fatal(err)
	}
	return c
}

// historySide is one side of a comparison: its time, WAL and ids, summed.
type historySide struct {
	name      string
	fn        func(key string)
	took      time.Duration
	wal, xids int64
}

// BenchmarkPostgresDeduperHistory: a new payment and a duplicate against the
// floor (a bare pgx transaction of INSERT ... ON CONFLICT DO NOTHING of the
// same row into a copy of the table) at each of historyRows' sizes, one
// caller, in alternating batches of 100 after a CHECKPOINT, so that every
// first change of a page is a full-page image, as after each checkpoint in
// production. Paths: FulfilPgx on a pgxpool, FulfilTx on database/sql and,
// for duplicates, the lease path's Claim. New keys are random (a hashed
// refNo) or in order (INV-<sequence>). Reports rate-x (floor time / SDK
// time), WAL bytes and transaction ids a call for each side. WAL and ids
// are the server's counters: run it on a server nothing else uses. Needs
// PAYGATE_TEST_POSTGRES_DSN; add wal_compression=lz4 to the DSN (a
// superuser's session setting) to measure with compression.
func BenchmarkPostgresDeduperHistory(b *testing.B) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("PAYGATE_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxIdleConns(4)
	for _, rows := range historyRows(b) {
		ht := newHistoryTables(b, ctx, pool, db, rows)
		for _, op := range []string{"new-random", "new-ordered", "duplicate"} {
			for _, path := range []string{"FulfilPgx", "FulfilTx", "lease"} {
				if path == "lease" && op != "duplicate" {
					continue // a lease claim's new event is two commits: BenchmarkPostgresDeduperNew
				}
				b.Run(fmt.Sprintf("rows=%d/%s/%s", rows, op, path), func(b *testing.B) {
					ht.run(b, ctx, op, path)
				})
			}
		}
	}
}

// run measures op on path against the floor, b.N rounds of a batch each.
func (ht *historyTables) run(b *testing.B, ctx context.Context, op, path string) {
	const batch = 100
	noop := func(context.Context, pgx.Tx, *paygate.Callback) error { return nil }
	noopSQL := func(context.Context, *sql.Tx, *paygate.Callback) error { return nil }
	var fulfiller paygate.TxFulfiller
	d := ht.d
	switch path {
	case "FulfilPgx":
		fulfiller = ht.d.FulfilPgx(noop)
	case "FulfilTx":
		fulfiller, d = ht.dsql.FulfilTx(noopSQL), ht.dsql
	}
	want := paygate.ClaimAcquired
	if op == "duplicate" {
		want = paygate.ClaimDone
	}
	sdk := &historySide{name: "sdk", fn: func(key string) {
		if fulfiller == nil {
			if c, err := ht.d.Claim(ctx, key, time.Minute); err != nil || c.State != want {
				b.Fatal(c.State, err)
			}
			return
		}
		cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: key, OrderNo: "GW-" + key}
		c, err := fulfiller.FulfilOnce(ctx, paygate.HookClaim{Key: key, Result: cb.OrderNo, Deduper: d}, cb)
		if err != nil || c.State != want {
			b.Fatal(c.State, err)
		}
	}}
	floor := &historySide{name: "floor", fn: func(key string) {
		if err := pgx.BeginFunc(ctx, ht.pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, ht.floor, key, "GW-"+key)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}}
	var run [8]byte
	_, _ = rand.Read(run[:])
	seq := 0
	nextKey := func() string {
		seq++
		switch op {
		case "new-random":
			var k [16]byte
			_, _ = rand.Read(k[:])
			return "fulfil|INV-" + hex.EncodeToString(k[:])
		case "new-ordered":
			return fmt.Sprintf("fulfil|INV-%s-%09d", hex.EncodeToString(run[:]), seq)
		}
		return existingKey(mrand.IntN(ht.rows) + 1)
	}
	if _, err := ht.pool.Exec(ctx, "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range []*historySide{sdk, floor} {
			keys := make([]string, batch)
			for j := range keys {
				keys[j] = nextKey()
			}
			before := readCounters(b, ctx, ht.pool)
			start := time.Now()
			for _, k := range keys {
				s.fn(k)
			}
			s.took += time.Since(start)
			after := readCounters(b, ctx, ht.pool)
			s.wal += after.wal - before.wal
			s.xids += after.xid - before.xid
		}
	}
	calls := float64(b.N * batch)
	b.ReportMetric(float64(floor.took)/float64(sdk.took), "rate-x")
	for _, s := range []*historySide{sdk, floor} {
		b.ReportMetric(calls/s.took.Seconds(), "op/s-"+s.name)
		b.ReportMetric(float64(s.wal)/calls, "walB/op-"+s.name)
		b.ReportMetric(float64(s.xids)/calls, "xid/op-"+s.name)
	}
}

// existingKey is the key of the i-th row the fill wrote.
func existingKey(i int) string {
	sum := md5.Sum([]byte(strconv.Itoa(i)))
	return "fulfil|INV-" + hex.EncodeToString(sum[:])
}
