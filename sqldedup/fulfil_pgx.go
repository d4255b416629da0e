package sqldedup

// FulfilPgx is FulfilTx on pgx's own connection, which lets the claim share
// a round trip with BEGIN: the two go in one pipeline (a pgx.Batch of
// "begin" and the claim, one Sync). database/sql cannot do this, since its
// BeginTx sends BEGIN and waits for the answer before any statement of the
// transaction can be sent. So a new payment costs exactly the round trips
// of the merchant's own transaction (BEGIN with the claim, fn's statements,
// COMMIT), and one statement more than it: the claim, the same INSERT as
// FulfilTx's (fulfil_tx.go), with the same advisory lock tried for
// duplicates in flight.
//
// A duplicate costs two round trips: BEGIN with the claim, which writes
// nothing, then the read of the key's row with ROLLBACK, again in one
// pipeline. One round trip would need the claim to stop the pipeline
// before BEGIN, which only an error does, and an error costs more than the
// round trip it saves: pgx forgets the prepared statements of a batch that
// failed (a duplicate measured 0.15-0.21x of a one-statement upsert), and
// PostgreSQL logs one ERROR line per duplicate. Nor is there a read before
// BEGIN: with the pipeline, a new payment is one round trip short of the
// hand-written floor (BEGIN, INSERT ... ON CONFLICT DO NOTHING, the
// merchant's statements, COMMIT), and a read before it measured
// 0.76-0.88x of that floor, the pipeline without it 0.98-1.04x.
//
// The connection comes from d's *sql.DB ((*sql.Conn).Raw). On a *sql.DB
// made by stdlib.OpenDBFromPool every connection is acquired from, and
// released to, the merchant's pgxpool (database/sql keeps none idle), so
// callbacks queue in the pgxpool's order: database/sql's own pool hands a
// freed connection to a random waiter, which measured a p99 1.6x the
// pgxpool's at 64 callers on 32 connections.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate-go/paygate"
)

// PgxTx is the transaction FulfilPgx's fn writes through: pgx's statements
// on the connection whose transaction FulfilPgx began and will end. Both
// *pgx.Conn and pgx.Tx have these methods, and so does the DBTX interface
// sqlc generates for pgx/v5, so fn may hand tx to sqlc's New.
type PgxTx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
}

// FulfilPgx is FulfilTx for merchants whose code speaks pgx: it makes the
// TxFulfiller of a CallbackHandler (its FulfilTx field) that runs fn in one
// transaction on a pgx connection of d's *sql.DB, with FulfilTx's
// guarantee, word for word: exactly once for what fn writes through tx,
// across crashes, lost connections, database restarts and replicas, with
// nothing to wait out after one, and no idempotency needed in fn.
//
// d's *sql.DB must be pgx's: open it with stdlib.OpenDBFromPool(pool), so
// that fulfilments take their connections from the merchant's
// *pgxpool.Pool and wait for one in its order, or with sql.Open("pgx",
// dsn). On another driver FulfilOnce returns an error that says so, and
// writes nothing.
//
//	db := stdlib.OpenDBFromPool(pool)
//	d, err := sqldedup.New(db)
//	h := &paygate.CallbackHandler{Keys: keys, Deduper: d, FulfilTx: d.FulfilPgx(
//		func(ctx context.Context, tx sqldedup.PgxTx, cb *paygate.Callback) error {
//			_, err := tx.Exec(ctx, `UPDATE orders SET paid = true WHERE ref_no = $1`, cb.RefNo)
//			return err
//		})}
//
// Cost: the round trips of the merchant's own transaction and no more
// (BEGIN and the claim go to PostgreSQL together), one statement beyond
// fn's (the claim), one commit. A duplicate, of a completed event or of
// one in flight, costs two round trips and commits nothing; one in flight
// is answered 503 at once and holds no connection meanwhile.
//
// fn must not end tx (COMMIT, ROLLBACK, or a pgx.Tx begun on it) and must
// return the error of any statement that failed. Either mistake is found
// before COMMIT and answered with an error (500): the gateway's retry then
// finds the event done (fn committed) or runs fn again (fn rolled back, or
// a failed statement aborted the transaction); never twice.
//
// A COMMIT whose outcome is unknown (the connection dropped while it was in
// flight) is returned as an error: the handler answers 500, and the
// gateway's retry finds the event done, or free to run fn again.
//
// On a handler whose Deduper is not d, FulfilOnce returns ErrOtherDeduper
// and writes nothing; a nil fn is refused the same way.
func (d *Deduper) FulfilPgx(fn func(ctx context.Context, tx PgxTx, cb *paygate.Callback) error) paygate.TxFulfiller {
	return pgxFulfiller{d: d, fn: fn}
}

// pgxFulfiller is what FulfilPgx makes.
type pgxFulfiller struct {
	d  *Deduper
	fn func(ctx context.Context, tx PgxTx, cb *paygate.Callback) error
}

// FulfilOnce implements paygate.TxFulfiller.
func (f pgxFulfiller) FulfilOnce(ctx context.Context, claim paygate.HookClaim, cb *paygate.Callback) (paygate.ClaimResult, error) {
	d := f.d
	if f.fn == nil {
		return paygate.ClaimResult{}, errors.New("sqldedup: FulfilPgx with a nil fn; nothing written")
	}
	if !d.mayBe(claim.Deduper) {
		return paygate.ClaimResult{}, d.otherDeduper(claim)
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: fulfil: %w", err)
	}
	defer conn.Close()
	var res paygate.ClaimResult
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(pgxConn)
		if !ok {
			return fmt.Errorf("sqldedup: FulfilPgx needs a *sql.DB of pgx's driver (stdlib.OpenDBFromPool, or sql.Open(\"pgx\", ...)); this one's connections are %T; nothing written", dc)
		}
		c := pc.Conn()
		defer rollbackOpen(ctx, c) // after an error or a panic in fn; a no-op once ended
		res, err = f.fulfil(ctx, c, claim, cb)
		return err
	})
	return res, err
}

// fulfil claims the event on c together with BEGIN, runs fn and commits.
func (f pgxFulfiller) fulfil(ctx context.Context, c *pgx.Conn, claim paygate.HookClaim, cb *paygate.Callback) (paygate.ClaimResult, error) {
	d := f.d
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(d.txClaimSQL, claim.Key, claim.Result, d.retention.Microseconds())
	tags, err := batchExec(ctx, c, b)
	if err != nil {
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: fulfil: claim %s: %w", claim.Key, err)
	}
	if tags[1].RowsAffected() != 1 {
		return d.notClaimedPgx(ctx, c, claim.Key)
	}
	if err := f.fn(ctx, c, cb); err != nil {
		return paygate.ClaimResult{}, err
	}
	if c.PgConn().TxStatus() == 'I' { // COMMIT would succeed, with a warning, and commit nothing
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: fulfil: fn ended the transaction of %s itself (committed, the event is done; rolled back, the next delivery runs fn again)", claim.Key)
	}
	tag, err := c.Exec(ctx, "commit")
	if err != nil {
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: fulfil: commit of %s (its outcome unknown: the next delivery finds the event done, or runs fn again): %w", claim.Key, err)
	}
	if tag.String() != "COMMIT" { // a statement of fn failed and fn returned nil
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: fulfil: commit of %s answered %q (a statement of fn failed): rolled back, the next delivery runs fn again", claim.Key, tag.String())
	}
	return paygate.ClaimResult{State: paygate.ClaimAcquired}, nil
}

// notClaimedPgx is notClaimed on c: the read of key's row and ROLLBACK,
// in one pipeline. A ROLLBACK that fails changes no answer: rollbackOpen
// ends the transaction, or the pool drops the connection.
func (d *Deduper) notClaimedPgx(ctx context.Context, c *pgx.Conn, key string) (paygate.ClaimResult, error) {
	b := &pgx.Batch{}
	b.Queue(d.lookupSQL, key)
	b.Queue("rollback")
	br := c.SendBatch(ctx, b)
	defer br.Close()
	var state string
	switch err := br.QueryRow().Scan(&state); {
	case errors.Is(err, pgx.ErrNoRows):
		return paygate.ClaimResult{State: paygate.ClaimBusy}, nil
	case err != nil:
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: fulfil: read %s: %w", key, err)
	}
	return claimResult(state, ""), nil
}

// batchExec sends b in one pipeline and returns each statement's tag, or
// the error of the first that failed. (Once every statement answered,
// closing the batch only reads the end of the pipeline: a connection lost
// there fails the next statement.)
func batchExec(ctx context.Context, c *pgx.Conn, b *pgx.Batch) ([]pgconn.CommandTag, error) {
	br := c.SendBatch(ctx, b)
	defer br.Close()
	tags := make([]pgconn.CommandTag, b.Len())
	for i := range tags {
		var err error
		if tags[i], err = br.Exec(); err != nil {
			return nil, err
		}
	}
	return tags, nil
}

// rollbackOpen rolls back a transaction left open on c (after an error or
// a panic in fn, or a claim that failed). Should that fail too (ctx is
// done, or the connection is lost), the pool drops c: pgxpool and pgx's
// database/sql driver both discard a connection left in a transaction.
func rollbackOpen(ctx context.Context, c *pgx.Conn) {
	if c.PgConn().TxStatus() != 'I' {
		_, _ = c.Exec(ctx, "rollback")
	}
}
