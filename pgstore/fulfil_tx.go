package pgstore

// FulfilTx's claim lives inside the merchant's transaction, as its first
// statement: an INSERT that takes a transaction-scoped advisory lock on the
// key (pg_try_advisory_xact_lock) and, holding it, inserts the key's row
// already done. So the claim, the merchant's effect and the completion
// commit together, in the merchant's one commit, or vanish together when
// the transaction rolls back, on an error, a crash of the replica, or the
// connection's loss: nothing is left to lapse, so nothing waits a lease.
// When the INSERT writes nothing (the lock is held, or the key has a row:
// ON CONFLICT DO NOTHING, so a duplicate locks no row and takes no
// transaction id), a read in the same transaction says which: done, with
// its result, or busy; the transaction is rolled back. Only when the read
// finds a lapsed lease claim (a status event's claim whose replica
// crashed) does an UPDATE try to take it over, under the same lock.
//
// No read comes before BEGIN. One would answer a duplicate of a completed
// event in one round trip instead of four (BEGIN, the claim, the read,
// ROLLBACK; none commits), but it adds a round trip to every new payment,
// which measured 0.63-0.71x of the hand-written floor. The gateway retries
// only what was not answered 2xx, so duplicates of completed events are the
// rare case (an answer lost, a replay) and new payments the common one.
// database/sql sends BEGIN on its own (fn takes a *sql.Tx), so the claim
// cannot share its round trip; on pgx's connection it can (FulfilPgx,
// fulfil_pgx.go).
//
// The advisory lock is what a duplicate in flight meets: it is tried, never
// waited for, so the duplicate gets 503 at once and holds no connection
// while the first delivery runs. Without it the duplicate's INSERT would
// wait on the uncommitted row for as long as fn runs. The lease path's
// claim function tries the same lock first, so a status event (which claims
// the refNo's fulfilment key on the lease path) is busy at once too. The
// lock's key is a 64-bit hash of the event's key, seeded by the table's
// name: a collision only makes two events take turns.
//
// A replica cut off mid-fn without a word (no FIN reaches PostgreSQL)
// holds its event until PostgreSQL drops the connection: set
// idle_in_transaction_session_timeout for the application's role (for
// example to the handler's HookTimeout) to bound that. It is not set per
// transaction, which measured 15-20% of a new payment's time.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/paygate-go/paygate"
)

// FulfilTx makes the TxFulfiller of a CallbackHandler (its Fulfil field):
// each verified success runs fn in one transaction on d's *sql.DB that
// claims the event, writes fn's effect and commits once. Exactly once for
// what fn writes through tx, across crashes, lost connections, database
// restarts and replicas, with no lease to wait out and no idempotency
// needed in fn; effects outside tx are not covered. fn must not end tx.
// On a handler whose Deduper is not d it returns ErrOtherDeduper (with a
// nil fn, an error), writing nothing. Example: docs/receiving-callbacks.md;
// misuse and round trips: docs/postgres.md.
func (d *Deduper) FulfilTx(fn func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error) paygate.TxFulfiller {
	return txFulfiller{d: d, fn: fn}
}

// txFulfiller is what FulfilTx makes.
type txFulfiller struct {
	d  *Deduper
	fn func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error
}

// Fulfil runs fn under the lease claim of a handler that does not see
// FulfilOnce (a wrapper hides it): as HookTx does, fenced on the claim.
func (f txFulfiller) Fulfil(ctx context.Context, cb *paygate.Callback) error {
	return f.d.HookTx(f.fn)(ctx, cb)
}

// Check implements paygate.TxFulfiller.
func (f txFulfiller) Check(d paygate.Deduper) error {
	if f.fn == nil {
		return errors.New("pgstore: FulfilTx with a nil fn; nothing written")
	}
	return f.d.checkDeduper(d)
}

// FulfilOnce implements paygate.TxFulfiller.
func (f txFulfiller) FulfilOnce(ctx context.Context, claim paygate.HookClaim, cb *paygate.Callback) (paygate.ClaimResult, error) {
	d := f.d
	if f.fn == nil {
		return paygate.ClaimResult{}, errors.New("pgstore: FulfilTx with a nil fn; nothing written")
	}
	if !d.mayBe(claim.Deduper) {
		return paygate.ClaimResult{}, d.otherDeduper(claim.Deduper)
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: begin: %w: %w", paygate.ErrStoreUnavailable, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed; runs on a panic in fn too
	if res, claimed, err := d.claimTx(ctx, tx, claim); !claimed || err != nil {
		return res, err // rolled back: nothing was written
	}
	if err := f.fn(ctx, tx, cb); err != nil {
		return paygate.ClaimResult{}, err
	}
	settled, err := d.settleTx(ctx, tx, claim, cb) // watch_settle.go
	if err != nil {
		return paygate.ClaimResult{}, err
	}
	if err := tx.Commit(); errors.Is(err, sql.ErrTxDone) {
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: fn ended the transaction of %s itself (committed, the event is done; rolled back, the next delivery runs fn again): %w", claim.Key, err)
	} else if err != nil {
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: fulfil: commit of %s (its outcome unknown: the next delivery finds the event done, or runs fn again): %w", claim.Key, err)
	}
	if settled {
		claim.Settled()
	}
	return paygate.ClaimResult{State: paygate.ClaimAcquired}, nil
}

// claimTx claims claim's key in tx: claimed when tx now holds it (a new
// row, or a lapsed lease claim taken over); otherwise res says what held
// it off (a done row, a live claim, another delivery's lock).
func (d *Deduper) claimTx(ctx context.Context, tx *sql.Tx, claim paygate.HookClaim) (res paygate.ClaimResult, claimed bool, _ error) {
	r, err := tx.ExecContext(ctx, d.txClaimSQL, claim.Key, claim.Result, d.retention.Microseconds())
	if err != nil {
		return paygate.ClaimResult{}, false, fmt.Errorf("pgstore: fulfil: claim %s: %w: %w", claim.Key, paygate.ErrStoreUnavailable, err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		if res, lapsed, err := d.notClaimed(ctx, tx, claim.Key, err); !lapsed || err != nil {
			return res, false, err
		}
		if took, err := d.tookOver(ctx, tx, claim); !took || err != nil {
			return paygate.ClaimResult{State: paygate.ClaimBusy}, false, err
		}
	}
	return paygate.ClaimResult{}, true, nil
}

// notClaimed says, in tx, what held key off FulfilTx's claim: a done row
// (ClaimDone with its result), a live lease claim, or, with no row,
// another delivery's transaction holding its lock (ClaimBusy). lapsed is
// true for a lapsed lease claim, to take over.
func (d *Deduper) notClaimed(ctx context.Context, tx *sql.Tx, key string, err error) (res paygate.ClaimResult, lapsed bool, _ error) {
	if err != nil {
		return paygate.ClaimResult{}, false, fmt.Errorf("pgstore: fulfil: claim %s: %w: %w", key, paygate.ErrStoreUnavailable, err)
	}
	var state string
	switch err := tx.QueryRowContext(ctx, d.txReadSQL, key).Scan(&state); {
	case errors.Is(err, sql.ErrNoRows):
		return paygate.ClaimResult{State: paygate.ClaimBusy}, false, nil
	case err != nil:
		return paygate.ClaimResult{}, false, fmt.Errorf("pgstore: fulfil: read %s: %w", key, err)
	}
	return claimResult(state, ""), state == "L", nil
}

// tookOver takes claim's key over in tx when its row is a lapsed lease
// claim and no other transaction holds its lock: the row made done, as
// txClaimSQL would have inserted it. False on any other row, or none.
func (d *Deduper) tookOver(ctx context.Context, tx *sql.Tx, claim paygate.HookClaim) (bool, error) {
	res, err := tx.ExecContext(ctx, d.txTakeoverSQL, claim.Key, claim.Result, d.retention.Microseconds())
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return false, fmt.Errorf("pgstore: fulfil: take over %s: %w: %w", claim.Key, paygate.ErrStoreUnavailable, err)
	}
	return n == 1, nil
}
