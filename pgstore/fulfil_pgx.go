package pgstore

// FulfilPgx is FulfilTx on pgx's own connection, which lets the claim
// share a round trip with BEGIN: the two go in one pipeline (one Sync), a
// pgx.Batch begun with Batch.BeginTx, so that fn gets pgx's own Tx, and
// the claim queued after it. database/sql cannot do this: its BeginTx
// sends BEGIN and waits for the answer before any statement of the
// transaction can be sent. So a new payment costs exactly the round trips
// of the merchant's own transaction (BEGIN with the claim, fn's
// statements, COMMIT), and one statement more than it: the claim, the same
// INSERT as FulfilTx's (fulfil_tx.go), with the same advisory lock tried
// for duplicates in flight. pgx's Tx also ends the transaction safely
// after a failure: a Rollback or Commit that cannot be sent (ctx done, the
// connection lost) closes the connection, so no transaction is left open
// to hold the event while the connection idles in its pool.
//
// A duplicate costs two round trips: BEGIN with the claim, which writes
// nothing (ON CONFLICT DO NOTHING: no row lock, no transaction id), then
// the read of the key's row with ROLLBACK, again in one pipeline. Only a
// lapsed lease claim costs a third: BEGIN with the takeover's UPDATE, in
// a new transaction. One round trip would need the claim to stop the
// pipeline before BEGIN, which only an error does, and an error costs more than the
// round trip it saves: pgx forgets the prepared statements of a batch that
// failed (a duplicate measured 0.15-0.21x of a one-statement upsert), and
// PostgreSQL logs one ERROR line per duplicate. Nor is there a read before
// BEGIN: with the pipeline, a new payment is one round trip short of the
// hand-written floor (BEGIN, INSERT ... ON CONFLICT DO NOTHING, the
// merchant's statements, COMMIT), and a read before it measured
// 0.76-0.88x of that floor, the pipeline without it 0.98-1.04x.
//
// The connection comes from NewPgx's pool, or else from d's *sql.DB
// ((*sql.Conn).Raw). The pool is the fast way: a read through database/sql's
// connection handling (on stdlib.OpenDBFromPool) measured 0.80-0.88x of the
// same read on a connection of pgxpool.Pool.Acquire, and database/sql's own
// pool hands a freed connection to a random waiter, which measured a p99
// 1.6x the pgxpool's at 64 callers on 32 connections.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate-go/paygate"
)

// FulfilPgx is FulfilTx for fn written with pgx, with FulfilTx's
// guarantee: tx is pgx's own Tx (for sqlc's New, tx.Exec, tx.Query), its
// BEGIN sent with the claim, so a new payment costs no round trip beyond
// the merchant's own transaction. Make d with NewPgx; a d of New works
// only when its *sql.DB is pgx's. fn must not end tx and must return the
// error of any statement that failed: a transaction ended or aborted is
// answered 500, never committed as a fulfilment. Example:
// docs/receiving-callbacks.md; misuse and round trips: docs/postgres.md.
func (d *Deduper) FulfilPgx(fn func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error) paygate.TxFulfiller {
	return pgxFulfiller{d: d, fn: fn}
}

// pgxFulfiller is what FulfilPgx makes.
type pgxFulfiller struct {
	d  *Deduper
	fn func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error
}

// Check implements paygate.TxFulfiller.
func (f pgxFulfiller) Check(d paygate.Deduper) error {
	if f.fn == nil {
		return errors.New("pgstore: FulfilPgx with a nil fn; nothing written")
	}
	return f.d.checkDeduper(d)
}

// Fulfil runs fn under the lease claim of a handler that does not see
// FulfilOnce (a wrapper hides it): as HookTx does, on a pgx transaction,
// fenced on the claim.
func (f pgxFulfiller) Fulfil(ctx context.Context, cb *paygate.Callback) error {
	d := f.d
	claim, ok := paygate.HookClaimFrom(ctx)
	switch {
	case !ok:
		return ErrNoHookClaim
	case f.fn == nil:
		return errors.New("pgstore: FulfilPgx with a nil fn; nothing written")
	case !d.mayBe(claim.Deduper):
		return d.otherDeduper(claim.Deduper)
	}
	var ferr error
	native, err := d.onPgx(ctx, func(c *pgx.Conn) error {
		ferr = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if err := f.fn(ctx, tx, cb); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, d.completeSQL, claim.Key, claim.Token, claim.Result, d.retention.Microseconds())
			if err != nil {
				return fmt.Errorf("pgstore: fulfil: complete %s: %w", claim.Key, err)
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("pgstore: fulfil: %s is no longer claimed under this hook's token in %s: rolled back: %w", claim.Key, d.table, paygate.ErrClaimLost)
			}
			return nil
		})
		return nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("pgstore: fulfil: %w", err)
	case !native:
		return fmt.Errorf("pgstore: FulfilPgx needs a Deduper of NewPgx, or a *sql.DB of pgx's driver; this one's driver is %T; nothing written", d.db.Driver())
	case ferr != nil:
		return ferr
	}
	claim.Completed()
	return nil
}

// FulfilOnce implements paygate.TxFulfiller.
func (f pgxFulfiller) FulfilOnce(ctx context.Context, claim paygate.HookClaim, cb *paygate.Callback) (paygate.ClaimResult, error) {
	d := f.d
	if f.fn == nil {
		return paygate.ClaimResult{}, errors.New("pgstore: FulfilPgx with a nil fn; nothing written")
	}
	if !d.mayBe(claim.Deduper) {
		return paygate.ClaimResult{}, d.otherDeduper(claim.Deduper)
	}
	var res paygate.ClaimResult
	var ferr error
	native, err := d.onPgx(ctx, func(c *pgx.Conn) error {
		res, ferr = f.fulfil(ctx, c, claim, cb)
		return nil
	})
	switch {
	case err != nil: // no connection
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: %w: %w", paygate.ErrStoreUnavailable, err)
	case !native:
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: FulfilPgx needs a Deduper of NewPgx, or a *sql.DB of pgx's driver (stdlib.OpenDBFromPool, or sql.Open(\"pgx\", ...)); this one's driver is %T; nothing written", d.db.Driver())
	}
	return res, ferr
}

// fulfil claims the event on c together with BEGIN, runs fn and commits.
func (f pgxFulfiller) fulfil(ctx context.Context, c *pgx.Conn, claim paygate.HookClaim, cb *paygate.Callback) (paygate.ClaimResult, error) {
	d := f.d
	var tx pgx.Tx
	// After an error or a panic: pgx's Rollback closes the connection when
	// the ROLLBACK fails (ctx done, the connection lost), and the pool
	// drops a closed connection. A no-op once committed, or rolled back by
	// notClaimedPgx.
	defer func() {
		if tx != nil && c.PgConn().TxStatus() != 'I' {
			_ = tx.Rollback(ctx)
		}
	}()
	if res, claimed, err := d.claimPgx(ctx, c, &tx, claim); !claimed || err != nil {
		return res, err
	}
	if err := f.fn(ctx, tx, cb); err != nil {
		return paygate.ClaimResult{}, err
	}
	if c.PgConn().TxStatus() == 'I' { // COMMIT would succeed, with a warning, and commit nothing
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: fn ended the transaction of %s itself (committed, the event is done; rolled back, the next delivery runs fn again)", claim.Key)
	}
	settled, err := d.settlePgx(ctx, tx, claim, cb) // watch_settle.go
	if err != nil {
		return paygate.ClaimResult{}, err
	}
	switch err := tx.Commit(ctx); {
	case errors.Is(err, pgx.ErrTxCommitRollback): // a statement of fn failed and fn returned nil
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: commit of %s answered ROLLBACK (a statement of fn failed): rolled back, the next delivery runs fn again", claim.Key)
	case errors.Is(err, pgx.ErrTxClosed):
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: fn ended the transaction of %s itself (committed, the event is done; rolled back, the next delivery runs fn again): %w", claim.Key, err)
	case err != nil:
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: commit of %s (its outcome unknown: the next delivery finds the event done, or runs fn again): %w", claim.Key, err)
	}
	if settled {
		claim.Settled()
	}
	return paygate.ClaimResult{State: paygate.ClaimAcquired}, nil
}

// claimPgx begins *tx on c with claim's key claimed: claimed when the
// transaction holds it (a new row, or a lapsed lease claim taken over in
// a transaction of its own); otherwise res says what held it off.
func (d *Deduper) claimPgx(ctx context.Context, c *pgx.Conn, tx *pgx.Tx, claim paygate.HookClaim) (res paygate.ClaimResult, claimed bool, _ error) {
	n, err := d.beginPgx(ctx, c, tx, d.txClaimSQL, claim)
	if err != nil {
		return paygate.ClaimResult{}, false, fmt.Errorf("pgstore: fulfil: claim %s: %w: %w", claim.Key, paygate.ErrStoreUnavailable, err)
	}
	if n == 1 {
		return paygate.ClaimResult{}, true, nil
	}
	if res, lapsed, err := d.notClaimedPgx(ctx, c, claim.Key); !lapsed || err != nil {
		return res, false, err
	}
	// A lapsed lease claim to take over, in a transaction of its own
	// (notClaimedPgx ended the first).
	if n, err = d.beginPgx(ctx, c, tx, d.txTakeoverSQL, claim); err != nil {
		return paygate.ClaimResult{}, false, fmt.Errorf("pgstore: fulfil: take over %s: %w: %w", claim.Key, paygate.ErrStoreUnavailable, err)
	}
	if n != 1 {
		return paygate.ClaimResult{State: paygate.ClaimBusy}, false, nil
	}
	return paygate.ClaimResult{}, true, nil
}

// beginPgx sends BEGIN and the claim statement query (txClaimSQL or
// txTakeoverSQL) of claim in one pipeline on c, sets *tx to the
// transaction and returns the rows the statement affected. After an error
// fn must not run.
func (d *Deduper) beginPgx(ctx context.Context, c *pgx.Conn, tx *pgx.Tx, query string, claim paygate.HookClaim) (int64, error) {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue(query, claim.Key, claim.Result, d.retention.Microseconds())
	br := c.SendBatch(ctx, b)
	*tx = br.Tx()
	_, err := br.Exec() // BEGIN
	var claimed pgconn.CommandTag
	if err == nil {
		claimed, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr // the pipeline's end not read: fn must not run
	}
	return claimed.RowsAffected(), err
}

// notClaimedPgx is notClaimed on c: the read of key's row and ROLLBACK,
// in one pipeline. A ROLLBACK that fails changes no answer: the deferred
// Rollback of fulfil ends the transaction, or closes the connection.
func (d *Deduper) notClaimedPgx(ctx context.Context, c *pgx.Conn, key string) (res paygate.ClaimResult, lapsed bool, _ error) {
	b := &pgx.Batch{}
	b.Queue(d.txReadSQL, key)
	b.Queue("rollback")
	br := c.SendBatch(ctx, b)
	defer br.Close()
	var state string
	switch err := br.QueryRow().Scan(&state); {
	case errors.Is(err, pgx.ErrNoRows):
		return paygate.ClaimResult{State: paygate.ClaimBusy}, false, nil
	case err != nil:
		return paygate.ClaimResult{}, false, fmt.Errorf("pgstore: fulfil: read %s: %w", key, err)
	}
	return claimResult(state, ""), state == "L", nil
}
