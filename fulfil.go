package paygate

// How a paid order is fulfilled: the one interface a CallbackHandler calls
// (Fulfiller), its func adapter (FulfilFunc), the upgrade of a fulfiler
// that claims the event in its own database transaction (TxFulfiller), and
// the claim a hook runs under (HookClaim).

import (
	"context"
	"sync/atomic"
)

// Fulfiller fulfils a verified paid order: CallbackHandler.Fulfil. The
// handler calls Fulfil for a verified success, at most once per base refNo
// while its Deduper keeps the completed event; an error or panic answers
// 500, and the gateway's retry calls it again. The handler keeps no record
// of orders: Fulfil compares cb.Amount with the order it stored
// (docs/assumptions.md A-unsigned-orders).
type Fulfiller interface {
	Fulfil(ctx context.Context, cb *Callback) error
}

// FulfilFunc adapts a function to a Fulfiller, as http.HandlerFunc adapts
// one to an http.Handler.
type FulfilFunc func(ctx context.Context, cb *Callback) error

// Fulfil calls f(ctx, cb).
func (f FulfilFunc) Fulfil(ctx context.Context, cb *Callback) error { return f(ctx, cb) }

// TxFulfiller is a Fulfiller that claims the event, writes the merchant's
// effect and records the completion in one database transaction
// (pgstore.Deduper.FulfilTx and FulfilPgx): the handler then calls
// FulfilOnce in place of its lease claim and Fulfil. A wrapper that hides
// FulfilOnce leaves the handler on the lease path, which calls Fulfil.
type TxFulfiller interface {
	Fulfiller
	// FulfilOnce fulfils cb under claim (Key, Result and the handler's
	// Deduper; no Token): ClaimAcquired once committed; ClaimDone with
	// the recorded Result, or ClaimBusy, when nothing ran. An error:
	// nothing committed, or the commit's outcome is unknown; one that
	// wraps ErrStoreUnavailable: the store was not reached, nothing ran.
	FulfilOnce(ctx context.Context, claim HookClaim, cb *Callback) (ClaimResult, error)
	// Check returns an error saying what to change when it cannot fulfil
	// on a handler whose Deduper is d (it records completions elsewhere,
	// or lacks its function). The handler asks once, at its first event,
	// and handles no event on an error.
	Check(d Deduper) error
}

// HookClaim is the Deduper claim a CallbackHandler hook runs under: the
// event's key, the claim's fencing token and what its completion records.
// The handler puts it in every hook's context (HookClaimFrom); a
// TxFulfiller gets it without a Token, its claim being its transaction.
type HookClaim struct {
	// Key is the event's Deduper key ("fulfil|<refNo>" for a fulfilment).
	Key string
	// Token is the claim's fencing token (ClaimResult.Token).
	Token string
	// Result is what the completion records (a fulfilment's orderNo).
	Result string
	// Deduper is the handler's Deduper, in which the claim was taken.
	Deduper Deduper
	// Settler is the handler's Settler (nil: none), given to a
	// TxFulfiller so that it may settle the order in its transaction.
	Settler Settler

	completed *atomic.Bool
	settled   *atomic.Bool
}

// Completed tells the handler that the hook recorded the event's completion
// itself, under Token, in a transaction that has committed: the handler
// then skips Deduper.Complete. Call it only then.
func (c HookClaim) Completed() {
	if c.completed != nil {
		c.completed.Store(true)
	}
}

// Settled tells the handler that a TxFulfiller settled the order with the
// claim's Settler in the fulfilment's transaction, which has committed:
// the handler then does not tell the Settler again. Call it only then.
func (c HookClaim) Settled() {
	if c.settled != nil {
		c.settled.Store(true)
	}
}
