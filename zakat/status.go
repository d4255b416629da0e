package zakat

// Status is a transaction's `status` (docs/protocol.md B2): success,
// pending or failed.
type Status string

// The statuses a transaction may carry.
const (
	StatusSuccess Status = "success"
	StatusPending Status = "pending"
	StatusFailed  Status = "failed"
)

// Valid reports whether s is one of the three statuses.
func (s Status) Valid() bool {
	return s == StatusSuccess || s == StatusPending || s == StatusFailed
}
