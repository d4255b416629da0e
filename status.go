package paygate

// Status is a payment status (docs/protocol.md "States"): the callback
// `status` field (A2) and a report row's.
type Status string

// The payment status values docs/protocol.md "States" lists.
const (
	// StatusSuccess: approved; the receiver may fulfil (A2 table).
	StatusSuccess Status = "success"
	// StatusPending: outcome unknown; wait for a follow-up callback.
	StatusPending Status = "pending"
	// StatusFailed: declined or cancelled; do not fulfil.
	StatusFailed Status = "failed"
)

// Valid reports whether s is one of the three listed values.
func (s Status) Valid() bool {
	return s == StatusSuccess || s == StatusPending || s == StatusFailed
}
