package paygate

import (
	"fmt"

	"github.com/paygate-go/paygate/internal/ordernoset"
)

// orderNoBudget is the memory the check "orderno is unique" (docs/protocol.md
// B2) of a batch body holds before it spills (ordernoset.Config.Budget):
// about 150,000 ordernos of 20 bytes. Past it, a repeat is reported once
// the whole body is read, after the problems found while reading.
const orderNoBudget = 8 << 20

// newOrderNoSet makes the orderno set of a batch body, spilling past
// orderNoBudget to a temporary file (streamed, so that memory stays
// bounded whatever the batch) or to memory (the body is in memory, and the
// problems are the same as the stream's).
func newOrderNoSet(stream bool) *ordernoset.Set {
	spill := ordernoset.Memory()
	if stream {
		spill = ordernoset.TempFile("")
	}
	return ordernoset.New(ordernoset.Config{Budget: orderNoBudget, Spill: spill, ValueBytes: maxErrorValue + 1})
}

// orderNoSet holds the ordernos of a batch: Add records that transaction
// i carries no, and returns the transaction that first carried it and
// true when it was seen before and the set can tell at once.
type orderNoSet interface {
	Add(no string, i int) (first int, dup bool)
}

// orderNoMap is the orderno set of transactions already in memory
// (ValidateTransactions): it always tells at once.
type orderNoMap map[string]int

// Add records no for transaction i, unless it was seen before.
func (m orderNoMap) Add(no string, i int) (int, bool) {
	if first, ok := m[no]; ok {
		return first, true
	}
	m[no] = i
	return i, false
}

// checkUnique reports an orderno seen before in the batch, when the set
// can tell at once (else reportLateRepeats does).
func checkUnique(v *ValidationError, i int, orderNo string, seen orderNoSet) {
	if first, dup := seen.Add(orderNo, i); dup {
		v.add(txPointer(i, "orderno"), uniqueRule(first), orderNo)
	}
}

// reportLateRepeats reports the repeated ordernos the set found only at
// the end, in index order, within v's limit (counting the rest; decodeBatch
// sets one). An error means the ordernos were not all checked: the batch is
// neither valid nor invalid.
func reportLateRepeats(v *ValidationError, seen *ordernoset.Set) error {
	dups, more, err := seen.Finish(max(0, v.limit-len(v.Problems)))
	if err != nil {
		return fmt.Errorf("paygate: checking that the ordernos are unique: %w", err)
	}
	for _, d := range dups {
		v.add(txPointer(d.Index, "orderno"), uniqueRule(d.First), d.Value)
	}
	v.dropped += more
	return nil
}

// uniqueRule is the problem of an orderno first carried by transaction
// first.
func uniqueRule(first int) string {
	return ruleUnique + " (also at " + txPointer(first, "orderno") + ")"
}
