package pgstore

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
var ErrOtherDeduper = errors.New("pgstore: FulfilTx or HookTx on a CallbackHandler whose Deduper is not this one; nothing written")

// ErrNoHookClaim is returned by the hook HookTx makes when its context
// carries no paygate.HookClaim: it was called outside a CallbackHandler, so
// there is no claim to complete. Nothing is written.
var ErrNoHookClaim = errors.New("pgstore: HookTx's hook called outside a paygate.CallbackHandler (no paygate.HookClaim in its context); nothing written")

// HookTx makes a CallbackHandler hook (OnStatus, OnDoublePayment) that runs
// fn in one transaction on d's *sql.DB and records the event's completion
// in it, fenced on the handler's lease claim: exactly once for what fn
// writes through tx. A claim taken over after its lease lapsed rolls back
// (the error wraps paygate.ErrClaimLost); a crash before COMMIT waits out
// the lease. fn must not end tx. Outside a CallbackHandler the hook
// returns ErrNoHookClaim, on a handler whose Deduper is not d
// ErrOtherDeduper, writing nothing. For Fulfil, use FulfilTx. The fence,
// misuse and round trips: docs/postgres.md.
func (d *Deduper) HookTx(fn func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error) func(ctx context.Context, cb *paygate.Callback) error {
	return func(ctx context.Context, cb *paygate.Callback) error {
		claim, ok := paygate.HookClaimFrom(ctx)
		if !ok {
			return ErrNoHookClaim
		}
		if fn == nil {
			return errors.New("pgstore: HookTx with a nil fn; nothing written")
		}
		if !d.mayBe(claim.Deduper) {
			return d.otherDeduper(claim.Deduper)
		}
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("pgstore: fulfil: begin: %w", err)
		}
		defer func() { _ = tx.Rollback() }() // a no-op once committed; runs on a panic in fn too
		if err := fn(ctx, tx, cb); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, d.completeSQL, claim.Key, claim.Token, claim.Result, d.retention.Microseconds())
		if errors.Is(err, sql.ErrTxDone) {
			return fmt.Errorf("pgstore: fulfil: fn ended the transaction itself; the completion of %s is not recorded: %w", claim.Key, err)
		}
		if err != nil {
			return fmt.Errorf("pgstore: fulfil: complete %s: %w", claim.Key, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("pgstore: fulfil: complete %s: %w", claim.Key, err)
		}
		if n != 1 {
			return d.notCompleted(ctx, tx, claim)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("pgstore: fulfil: commit of %s (its outcome unknown: the handler releases the claim, which leaves a committed completion alone): %w", claim.Key, err)
		}
		claim.Completed()
		return nil
	}
}

// mayBe reports whether a handler's Deduper can be d: d itself, or a type
// that may wrap it (a decorator that traces or counts). Another
// *pgstore.Deduper, or the in-memory one, cannot.
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
	return fmt.Errorf("%w: the handler's Deduper is %T, which does not claim events in %s; set CallbackHandler.Deduper to the *pgstore.Deduper whose FulfilTx or HookTx it uses",
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
	return fmt.Errorf("pgstore: fulfil: %s is no longer claimed under this hook's token in %s (taken over after its lease lapsed, released or purged): rolled back: %w",
		claim.Key, d.table, paygate.ErrClaimLost)
}
