package observe

import "time"

// Send is a WebhookSender's Send.
type Send struct {
	// Transactions is how many transactions were given.
	Transactions int
}

// SendEnd is what a Send did: how many transactions ended in each state
// of paygate.TxState, and how many requests it made.
type SendEnd struct {
	// Requests is how many requests (batches) the transactions were cut
	// into.
	Requests int
	// Accepted, Invalid, Rejected, Unconfirmed and NotSent count the
	// transactions by their state.
	Accepted, Invalid, Rejected, Unconfirmed, NotSent int
	// Failed is set when Send returned an error.
	Failed bool
}

// OutboxRound is one round of the bank's outbox relay (package
// zakat/outbox): the transactions it took and what became of them.
type OutboxRound struct {
	// Taken counts the transactions taken; Accepted, Dead and Retried
	// count them by what was recorded: done, dead (refused, invalid or
	// past the maximum age) or to be retried.
	Taken, Accepted, Dead, Retried int
	// Failed is set when the outcomes could not be recorded (the rows
	// come back after their lease).
	Failed bool
}

// OutboxStats is the state of the outbox's table as a relay read it.
type OutboxStats struct {
	// Depth counts the transactions not yet accepted nor dead; Dead the
	// dead ones.
	Depth, Dead int
	// OldestAge is the age of the oldest queued transaction.
	OldestAge time.Duration
}
