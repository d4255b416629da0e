package sqldedup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/paygate-go/paygate"
)

// ErrOtherDeduper is returned by FulfilTx's TxFulfiller and HookTx's hook,
// before either writes anything, when the CallbackHandler's Deduper is not
// the Deduper that made them: the completion must be recorded in the table
// the handler claims its other events in, so such a handler could never
// keep its promises. The error names the handler's Deduper; the fix is to
// give the handler this Deduper.
var ErrOtherDeduper = errors.New("sqldedup: FulfilTx or HookTx on a CallbackHandler whose Deduper is not this one; nothing written")

// ErrNoHookClaim is returned by the hook HookTx makes when its context
// carries no paygate.HookClaim: it was called outside a CallbackHandler, so
// there is no claim to complete. Nothing is written.
var ErrNoHookClaim = errors.New("sqldedup: HookTx's hook called outside a paygate.CallbackHandler (no paygate.HookClaim in its context); nothing written")

// HookTx makes a CallbackHandler hook (OnStatus, OnDoublePayment) that
// writes the merchant's effect and the event's completion in one database
// transaction; for Fulfil, use FulfilTx, which needs no lease:
//
//	h := &paygate.CallbackHandler{Keys: keys, Deduper: d, Fulfil: d.FulfilTx(fulfil),
//		OnStatus: d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
//			_, err := tx.ExecContext(ctx, `UPDATE orders SET status = $2 WHERE ref_no = $1`, cb.RefNo, cb.Status)
//			return err
//		})}
//
// The hook runs under the handler's lease claim (the lease path): it begins
// a transaction on d's *sql.DB with the hook's context, runs fn with it,
// then in the same transaction records the event's completion (the Deduper
// row of the handler's claim: done, with its result) fenced on the claim's
// token, and commits. When the row no longer carries that token (the claim
// was taken over by another delivery after its lease lapsed, released, or
// purged) the completion touches no row: the transaction is rolled back
// and the error wraps paygate.ErrClaimLost. Once committed, the hook calls
// HookClaim.Completed, so the handler does not complete the event again,
// and answers 200.
//
// The guarantee: exactly once for the effects fn writes through tx, across
// crashes at any instant, lease lapses, lost renewals and replicas; fn
// needs no idempotency of its own. The effect and the record of it commit
// together or not at all: a crash before COMMIT leaves neither, and the
// claim lapses (a lease later) and is taken over; a crash after it leaves
// both, and every later delivery gets 200 without calling fn, for as long
// as the row is kept (docs/assumptions.md A-replay-bound: a done row is
// never taken over, and Purge deletes it only after the retention). Effects
// outside tx (an e-mail, a call to another service) are not covered: they
// are at least once after a crash, as on the lease path.
//
// fn must not commit or roll back tx itself: a tx committed by fn commits
// its effect without the record of it, so every retry writes the effect
// again (the completion then fails with sql.ErrTxDone and the delivery is
// answered 500). Do every effect of the hook inside its one fn.
//
// The token fences the transaction, because the claim is the handler's
// lease row, taken before the transaction began: the completing UPDATE
// takes the row's lock, so a takeover either committed before it (the
// UPDATE then finds another token and the transaction rolls back) or waits
// for this COMMIT and then finds the event done. The row's lock is held
// only from that UPDATE, the last statement, to COMMIT. (FulfilTx instead
// claims inside the transaction, where its rollback is the fence.)
//
// A COMMIT whose outcome is unknown (the connection dropped while it was in
// flight) is returned as an error: the handler answers 500 and releases the
// claim. If the transaction did commit, the row is done and no longer
// carries the token, so the release touches nothing (a completed event is
// never undone) and the gateway's retry gets 200; if it did not, the release
// lets the retry run fn again, in a new transaction.
//
// Round trips beyond the merchant's own BEGIN, statements and COMMIT: two
// for a new event (the handler's claim, the fenced completion), and two
// commits, plus a renewal per third of the lease while fn runs; a
// duplicate of a completed event costs one (the claim), as does one in
// flight (503). The
// transaction holds one connection of d's pool while fn runs, and the
// handler renews on another: size the pool for both. Used outside a
// CallbackHandler (no paygate.HookClaim in the context), the hook returns
// ErrNoHookClaim, and on a handler whose Deduper is not d, ErrOtherDeduper;
// either writes nothing.
func (d *Deduper) HookTx(fn func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error) func(ctx context.Context, cb *paygate.Callback) error {
	return func(ctx context.Context, cb *paygate.Callback) error {
		claim, ok := paygate.HookClaimFrom(ctx)
		if !ok {
			return ErrNoHookClaim
		}
		if fn == nil {
			return errors.New("sqldedup: HookTx with a nil fn; nothing written")
		}
		if !d.mayBe(claim.Deduper) {
			return d.otherDeduper(claim.Deduper)
		}
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqldedup: fulfil: begin: %w", err)
		}
		defer func() { _ = tx.Rollback() }() // a no-op once committed; runs on a panic in fn too
		if err := fn(ctx, tx, cb); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, d.completeSQL, claim.Key, claim.Token, claim.Result, d.retention.Microseconds())
		if errors.Is(err, sql.ErrTxDone) {
			return fmt.Errorf("sqldedup: fulfil: fn ended the transaction itself; the completion of %s is not recorded: %w", claim.Key, err)
		}
		if err != nil {
			return fmt.Errorf("sqldedup: fulfil: complete %s: %w", claim.Key, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqldedup: fulfil: complete %s: %w", claim.Key, err)
		}
		if n != 1 {
			return d.notCompleted(ctx, tx, claim)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqldedup: fulfil: commit of %s (its outcome unknown: the handler releases the claim, which leaves a committed completion alone): %w", claim.Key, err)
		}
		claim.Completed()
		return nil
	}
}

// mayBe reports whether a handler's Deduper can be d: d itself, or a type
// that may wrap it (a decorator that traces or counts). Another
// *sqldedup.Deduper, or the in-memory one, cannot.
func (d *Deduper) mayBe(other paygate.Deduper) bool {
	switch o := other.(type) {
	case *Deduper:
		return o == d
	case *paygate.MemoryDeduper:
		return false
	}
	return true
}

// otherDeduper is the error of a hook on a handler whose Deduper, other,
// is not d.
func (d *Deduper) otherDeduper(other paygate.Deduper) error {
	return fmt.Errorf("%w: the handler's Deduper is %T, which does not claim events in %s; set CallbackHandler.Deduper to the *sqldedup.Deduper whose FulfilTx or HookTx it uses",
		ErrOtherDeduper, other, d.table)
}

// checkDeduper is Check of d's fulfilers: ErrOtherDeduper when the
// handler's Deduper cannot be d.
func (d *Deduper) checkDeduper(other paygate.Deduper) error {
	if !d.mayBe(other) {
		return d.otherDeduper(other)
	}
	return nil
}

// notCompleted says why the fenced completion touched no row, in tx,
// before it is rolled back: no row for the key at all is a handler whose
// Deduper (a wrapper of another one) does not claim in d's table; a row
// under another token, or done, is a claim lost.
func (d *Deduper) notCompleted(ctx context.Context, tx *sql.Tx, claim paygate.HookClaim) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM `+d.table+` WHERE key = $1`, claim.Key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return d.otherDeduper(claim.Deduper)
	}
	return fmt.Errorf("sqldedup: fulfil: %s is no longer claimed under this hook's token in %s (taken over after its lease lapsed, released or purged): rolled back: %w",
		claim.Key, d.table, paygate.ErrClaimLost)
}
