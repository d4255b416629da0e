// Expiry is per record: each record carries its own deadline, and the heap
// orders the records by it, so that the earliest to lapse is always at the
// top whatever mix of leases and retentions made them. Every record is in
// the heap exactly once (a renewal or completion moves it with heap.Fix,
// a release takes it out with heap.Remove), so the heap never holds
// outdated entries and its size is the Store's.
//
// A completed record keeps its deadline only to be forgotten at the end
// of its retention: Claim answers Done for any completed record still in
// the map, past its deadline or not, so a completed key is never taken
// over (docs/assumptions.md A-replay-bound); the retention itself is the
// caller's (MemoryDeduper's Retention, 400 days by default).

package memstore

import "container/heap"

// record is one key's state: held under token until deadline, or, with
// an empty token, done with result until deadline.
type record struct {
	key      string
	token    string // the holder's; "" once done
	result   string
	deadline int64 // in the Store's clock (see Store.at); lapsed at or after it
	slot     int   // the record's index in the expiry heap
}

// expiryHeap is the records ordered by deadline, the earliest first, for
// container/heap; each record knows its slot so that it can be moved or
// removed in place.
type expiryHeap []*record

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}

func (h *expiryHeap) Push(x any) {
	r := x.(*record)
	r.slot = len(*h)
	*h = append(*h, r)
}

func (h *expiryHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil // no hold on a dropped record
	*h = old[:len(old)-1]
	return r
}

// setDeadline moves r, in the heap, to deadline.
func (s *Store) setDeadline(r *record, deadline int64) {
	r.deadline = deadline
	heap.Fix(&s.expiry, r.slot)
}
