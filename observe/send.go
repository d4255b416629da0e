package observe

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
