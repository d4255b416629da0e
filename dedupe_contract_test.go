package paygate_test

import (
	"time"

	"testing"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/dedupetest"
)

// MemoryDeduper keeps the contract CallbackHandler relies on, its leases
// on synctest's clock.
func TestMemoryDeduperContract(t *testing.T) {
	dedupetest.RunInBubble(t, func(*testing.T) paygate.Deduper { return &paygate.MemoryDeduper{} })
}

// A completed key of MemoryDeduper is never acquired again within its
// retention, however late it is replayed.
func TestMemoryDeduperReplay(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	d := &paygate.MemoryDeduper{Now: func() time.Time { return now }}
	dedupetest.Replay(t, d, dedupetest.Aging{Age: func(_ *testing.T, by time.Duration) { now = now.Add(by) }})
}
