// Package dedupetest checks that a paygate.Deduper keeps the contract
// CallbackHandler relies on for exactly-once fulfilment: one claimant at a
// time, leases that lapse and can be renewed, tokens that fence out a
// lapsed claimant, and completions that record their result and are never
// taken over.
//
// Run it from a test of your own Deduper (a Redis one, say):
//
//	func TestMyDeduper(t *testing.T) {
//		dedupetest.Run(t, func(t *testing.T) paygate.Deduper { return newMyDeduper(t) })
//	}
//
// Replay checks, on a store a test can age (a fake clock, or rows
// backdated), that a completed key is never acquired again however late
// its callback is replayed within the store's retention, purges included,
// that a claim within its lease outlives a purge, and, for a store with a
// purge, that a completed key stays done past its retention until purged.
//
// MemoryDeduper and pgstore.Deduper pass both. Run's lease checks take
// about four seconds of real time; RunInBubble runs them on synctest's
// fake clock, for a Deduper that waits on nothing outside the process.
package dedupetest
