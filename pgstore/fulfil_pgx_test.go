package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// fulfilPgxOnce calls d.FulfilPgx(fn) as the handler does, for ref.
func fulfilPgxOnce(d *Deduper, ref string, fn func(context.Context, pgx.Tx, *paygate.Callback) error) (paygate.ClaimResult, error) {
	cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: ref, OrderNo: "GW-" + ref}
	return d.FulfilPgx(fn).FulfilOnce(context.Background(), paygate.HookClaim{Key: "fulfil|" + ref, Result: cb.OrderNo, Deduper: d}, cb)
}

// Every step that fails is an error naming it, never a panic, and leaves
// nothing written: no database, a claim that fails (the table missing),
// and a COMMIT that fails (a deferred constraint).
func TestFulfilPgxFailures(t *testing.T) {
	db := openDB(t, testDSN(t))
	noTable, err := New(db, WithTable(fmt.Sprintf("paygate_dedupe_missing_%d", rand.Uint32())))
	require.NoError(t, err)
	deferred := fmt.Sprintf("deferred_test_%d", rand.Uint32())
	_, err = db.Exec(`CREATE TABLE ` + deferred + ` (ref_no text UNIQUE DEFERRABLE INITIALLY DEFERRED)`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec(`DROP TABLE ` + deferred) })
	for _, tc := range []struct {
		name string
		d    func(t *testing.T) *Deduper
		fn   func(context.Context, pgx.Tx, *paygate.Callback) error
		want string
	}{
		{name: "no database", d: func(t *testing.T) *Deduper {
			d, err := New(sql.OpenDB(noDatabase{}))
			require.NoError(t, err)
			return d
		}, want: "pgstore: fulfil: paygate: the Deduper's store is unavailable: no database in this test"},
		{name: "claim fails", d: func(*testing.T) *Deduper { return noTable },
			want: "pgstore: fulfil: claim fulfil|INV-1: paygate: the Deduper's store is unavailable: "},
		{name: "commit fails", d: func(t *testing.T) *Deduper { d, _ := testDeduperOn(t, db); return d },
			fn: func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error {
				_, err := tx.Exec(ctx, `INSERT INTO `+deferred+` (ref_no) VALUES ($1), ($1)`, cb.RefNo)
				return err
			}, want: "pgstore: fulfil: commit of fulfil|INV-1 (its outcome unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d(t)
			fn := tc.fn
			if fn == nil {
				fn = func(context.Context, pgx.Tx, *paygate.Callback) error { t.Error("fn ran"); return nil }
			}
			res, err := fulfilPgxOnce(d, "INV-1", fn)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, paygate.ClaimResult{}, res)
		})
	}
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+deferred).Scan(&n))
	require.Zero(t, n)
}

// A fulfilment that fails gives its connection back clean: the same
// PostgreSQL backend serves the next one, not a new connection (a pool
// drops a connection left in a transaction).
func TestFulfilPgxRollsBackBeforeReturningTheConnection(t *testing.T) {
	db := openDB(t, testDSN(t))
	db.SetMaxOpenConns(1)
	d, _ := testDeduperOn(t, db)
	pids := make([]int, 0, 3)
	for i, fault := range []error{errors.New("stock service down"), nil} {
		_, err := fulfilPgxOnce(d, "INV-1", func(ctx context.Context, tx pgx.Tx, _ *paygate.Callback) error {
			var pid int
			if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return err
			}
			pids = append(pids, pid)
			return fault
		})
		if i == 0 {
			require.ErrorIs(t, err, fault)
		} else {
			require.NoError(t, err)
		}
	}
	require.Len(t, pids, 2)
	require.Equal(t, pids[0], pids[1], "the backend after a failed fulfilment")
}

// An fn that outlives the handler's time limit (its ctx done before it
// returns, so no ROLLBACK can be sent on ctx) leaves no transaction open
// to hold the event: the connection is closed, PostgreSQL rolls back, and
// the next delivery, at another replica, runs fn, not 503 for as long as
// the first replica's connection idles in its pool.
func TestFulfilPgxTimedOutFnHoldsNothing(t *testing.T) {
	db := openDB(t, testDSN(t))
	first, _ := testDeduperOn(t, db)
	d, err := New(openDB(t, testDSN(t)), WithTable(first.table)) // another replica's pool
	require.NoError(t, err)
	cb := &paygate.Callback{Status: paygate.StatusSuccess, RefNo: "INV-1", OrderNo: "GW-INV-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = first.FulfilPgx(func(ctx context.Context, tx pgx.Tx, _ *paygate.Callback) error {
		<-ctx.Done() // a call to another service, past the time limit
		return ctx.Err()
	}).FulfilOnce(ctx, paygate.HookClaim{Key: "fulfil|INV-1", Result: cb.OrderNo, Deduper: first}, cb)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	claim := paygate.HookClaim{Key: "fulfil|INV-1", Result: cb.OrderNo, Deduper: d}
	ran := false
	deadline := time.Now().Add(2 * time.Second) // the bound after a crash: PostgreSQL sees the connection closed
	for {
		res, err := d.FulfilPgx(func(context.Context, pgx.Tx, *paygate.Callback) error { ran = true; return nil }).
			FulfilOnce(context.Background(), claim, cb)
		require.NoError(t, err)
		if res.State == paygate.ClaimAcquired || time.Now().After(deadline) {
			require.Equal(t, paygate.ClaimAcquired, res.State, "the next delivery, within 2 s")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, ran)
}
