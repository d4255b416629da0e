package pgstore

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/pgtest"
)

// dupPath is one path a delivery of an event claims it on: the lease
// path's Claim (the handler's, HookTx's hooks' too) or a transactional
// path's FulfilOnce.
type dupPath struct {
	name string
	// open opens dsn's database as the path's merchant would, with the
	// Options of its Deduper.
	open  func(t *testing.T, dsn string) (*sql.DB, []Option)
	claim func(d *Deduper, key string) (paygate.ClaimResult, error)
}

// dupPaths are every path a duplicate can arrive on.
func dupPaths() []dupPath {
	sqlOpen := func(t *testing.T, dsn string) (*sql.DB, []Option) { return openDB(t, dsn), nil }
	poolOpen := func(t *testing.T, dsn string) (*sql.DB, []Option) {
		pool, err := pgxpool.New(context.Background(), dsn)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		db := stdlib.OpenDBFromPool(pool)
		t.Cleanup(func() { db.Close() })
		return db, []Option{withPool(pool)}
	}
	once := func(wire func(*Deduper, pathFn) paygate.TxFulfiller) func(*Deduper, string) (paygate.ClaimResult, error) {
		return func(d *Deduper, key string) (paygate.ClaimResult, error) {
			f := wire(d, func(context.Context, pathTx, *paygate.Callback) error { return nil })
			cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: key, OrderNo: "GW-" + key}
			return f.FulfilOnce(context.Background(), paygate.HookClaim{Key: key, Result: cb.OrderNo, Deduper: d}, cb)
		}
	}
	lease := func(d *Deduper, key string) (paygate.ClaimResult, error) {
		return d.Claim(context.Background(), key, time.Minute)
	}
	return []dupPath{
		{name: "lease Claim", open: sqlOpen, claim: lease},
		{name: "lease Claim on a pgxpool", open: poolOpen, claim: lease},
		{name: "FulfilTx", open: sqlOpen, claim: once(wireSQL)},
		{name: "FulfilPgx", open: sqlOpen, claim: once(wirePgx)},
		{name: "FulfilPgx on a pgxpool", open: poolOpen, claim: once(wirePgx)},
	}
}

// rowVersion is a row's physical identity: the transaction that wrote it
// (xmin), the one that last locked or deleted it (xmax) and its place in
// the heap (ctid). A write of any kind, a row lock included, changes it.
func rowVersion(t *testing.T, db *sql.DB, table, key string) string {
	t.Helper()
	var v string
	require.NoError(t, db.QueryRow(`SELECT format('xmin=%s xmax=%s ctid=%s', xmin, xmax, ctid) FROM `+table+` WHERE key = $1`, key).Scan(&v))
	return v
}

// duplicates sets up, on d, one event completed (by the transactional
// path, as a merchant's FulfilTx does) and one held by a live lease claim,
// then sends each three duplicates on p and checks the answers. between
// runs before and after each batch of duplicates.
func duplicates(t *testing.T, d *Deduper, db *sql.DB, p dupPath, between func(phase string)) {
	ctx := context.Background()
	done, err := d.FulfilTx(func(context.Context, *sql.Tx, *paygate.Callback) error { return nil }).
		FulfilOnce(ctx, paygate.HookClaim{Key: "fulfil|INV-D", Result: "GW-D", Deduper: d}, &paygate.Callback{RefNo: "INV-D"})
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, done.State)
	held, err := d.Claim(ctx, "fulfil|INV-H", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, held.State)
	for _, tc := range []struct {
		key  string
		want paygate.ClaimResult
	}{
		{key: "fulfil|INV-D", want: paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW-D"}},
		{key: "fulfil|INV-H", want: paygate.ClaimResult{State: paygate.ClaimBusy}},
	} {
		before := rowVersion(t, db, d.table, tc.key)
		require.Contains(t, before, "xmax=0 ", "no lock on the row before the duplicates")
		between("before " + tc.key)
		for range 3 {
			got, err := p.claim(d, tc.key)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		}
		between("after " + tc.key)
		require.Equal(t, before, rowVersion(t, db, d.table, tc.key), "a duplicate of %s wrote or locked its row", tc.key)
	}
}

// A duplicate of an event completed, or held by a live claim, writes
// nothing on any path: its row keeps its version, and no duplicate locks
// it (xmax stays 0), where ON CONFLICT DO UPDATE ... WHERE locked the row
// (a transaction id and WAL for every duplicate). The answers are the
// contract's: done with the result, or busy.
func TestDuplicateWritesNothing(t *testing.T) {
	for _, p := range dupPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t, testDSN(t))
			d, _ := testDeduperOn(t, db, opts...)
			duplicates(t, d, db, p, func(string) {})
		})
	}
}

// On a server of its own, where nothing else runs, the same duplicates
// take no transaction id (the next one to be assigned stays where it was)
// and write no WAL (pg_current_wal_insert_lsn does not move). The server runs
// without autovacuum, with wal_level minimal (no standby snapshots) and
// checkpoints an hour apart, so that nothing but the test could move
// either. It needs PAYGATE_TEST_PG_BIN (internal/pgtest), as the outage
// test does.
func TestDuplicateTakesNoTransactionID(t *testing.T) {
	pg := pgtest.Start(t)
	admin := openDB(t, pgtest.DSN(pg.Addr))
	for _, set := range []string{"autovacuum = off", "wal_level = minimal", "max_wal_senders = 0", "checkpoint_timeout = '1h'"} {
		_, err := admin.Exec("ALTER SYSTEM SET " + set)
		require.NoError(t, err)
	}
	admin.Close()
	pg.RestartImmediate(t)
	for _, p := range dupPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t, pgtest.DSN(pg.Addr))
			d, _ := testDeduperOn(t, db, opts...)
			var last, lastPhase string
			duplicates(t, d, db, p, func(phase string) {
				var now string
				require.NoError(t, db.QueryRow(`SELECT format('next xid %s, wal %s', txid_snapshot_xmax(txid_current_snapshot()), pg_current_wal_insert_lsn())`).Scan(&now))
				if last != "" && phase[:5] == "after" {
					require.Equal(t, last, now, "from %s to %s", lastPhase, phase)
				}
				last, lastPhase = now, phase
			})
		})
	}
}
