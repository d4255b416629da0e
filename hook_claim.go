package paygate

import (
	"context"
	"sync/atomic"
)

// HookClaim is the Deduper claim a CallbackHandler hook runs under (the
// receiver rule "fulfil once per refNo", docs/protocol.md "Receiver rules"):
// the event's Deduper key, the claim's fencing token and what the event's
// completion records. The handler puts it in every hook's context (a
// TxFulfiller gets it without a Token: its claim is its transaction).
//
// A hook that records the completion in its effect's own transaction
// (sqldedup.Deduper.HookTx) fences it on Token, so that a claim taken over
// can never commit, and calls Completed once it has committed.
type HookClaim struct {
	// Key is the event's Deduper key ("fulfil|<refNo>" for a fulfilment).
	Key string
	// Token is the claim's fencing token (ClaimResult.Token).
	Token string
	// Result is what the completion records (a fulfilment's orderNo).
	Result string
	// Deduper is the Deduper the claim was taken in: the handler's. A hook
	// that records the completion itself must be that Deduper's.
	Deduper Deduper

	completed *atomic.Bool
}

// Completed tells the handler that the hook recorded the event's completion
// itself, under Token, in a transaction that has committed. Call it only
// then: the handler skips Deduper.Complete for this claim.
func (c HookClaim) Completed() {
	if c.completed != nil {
		c.completed.Store(true)
	}
}

// hookClaimKey is the context key of the claim a hook runs under: its
// value is the *claim (callback_lease.go).
type hookClaimKey struct{}

// HookClaimFrom returns the claim the hook's ctx runs under; ok is false
// outside a CallbackHandler hook.
func HookClaimFrom(ctx context.Context) (hc HookClaim, ok bool) {
	c, ok := ctx.Value(hookClaimKey{}).(*claim)
	if !ok {
		return HookClaim{}, false
	}
	return HookClaim{Key: c.key, Token: c.token, Result: c.result, Deduper: c.ev.d, completed: &c.completed}, true
}

// TxFulfiller fulfils a paid order in one database transaction that also
// claims the event and records its completion: one commit per payment, and
// a crash at any instant leaves the event free for the next delivery, with
// no lease to wait out. sqldedup.Deduper.FulfilTx makes one; set it as
// CallbackHandler.FulfilTx, in place of Fulfil.
type TxFulfiller interface {
	// FulfilOnce fulfils cb under claim (Key, Result, and the handler's
	// Deduper, which must be the one it records in; no Token): ClaimAcquired
	// once committed; ClaimDone, with the recorded Result, or ClaimBusy
	// when nothing ran. An error: nothing committed, or the commit's outcome
	// is unknown (the handler answers 500; the retry finds out).
	FulfilOnce(ctx context.Context, claim HookClaim, cb *Callback) (ClaimResult, error)
}
