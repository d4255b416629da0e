package paygate_test

import (
	"testing"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/dedupetest"
)

// MemoryDeduper keeps the contract CallbackHandler relies on.
func TestMemoryDeduperContract(t *testing.T) {
	dedupetest.Run(t, func(*testing.T) paygate.Deduper { return &paygate.MemoryDeduper{} })
}
