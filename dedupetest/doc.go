// Package dedupetest checks that a paygate.Deduper keeps the contract
// CallbackHandler relies on for exactly-once fulfilment: one claimant at a
// time, leases that lapse and can be renewed, tokens that fence out a
// lapsed claimant, and completions that record their result.
//
// Run it from a test of your own Deduper (a Redis one, say):
//
//	func TestMyDeduper(t *testing.T) {
//		dedupetest.Run(t, func(t *testing.T) paygate.Deduper { return newMyDeduper(t) })
//	}
//
// MemoryDeduper and sqldedup.Deduper pass it. The lease checks sleep for a
// few hundred milliseconds in all, on the deduper's own clock.
package dedupetest
