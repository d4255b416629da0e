// Expiry is per record: each record carries its own deadline, and the heap
// orders the records by it, so that the earliest to lapse is always at the
// top whatever mix of leases and retentions made them. Every record is in
// the heap exactly once (a renewal or completion moves it in place, a
// release takes it out), so the heap never holds outdated entries and its
// size is the Store's.
//
// A completed record keeps its deadline only to be forgotten at the end
// of its retention: Claim answers Done for any completed record still in
// the map, past its deadline or not, so a completed key is never taken
// over (docs/assumptions.md A-replay-bound); the retention itself is the
// caller's (MemoryDeduper's Retention, 400 days by default).

package memstore

// record is one key's state: held under token until deadline, or, with
// an empty token, done with result until deadline.
type record struct {
	key      string
	token    string // the holder's; "" once done
	result   string
	deadline int64 // in the Store's clock (see Store.at); lapsed at or after it
	slot     int   // the record's index in the expiry heap
}

// expiryHeap is the records ordered by deadline, the earliest first: a
// binary heap in a slice, written for *record (container/heap's interface
// calls measured a tenth of a new key's Claim and Complete). Each record
// knows its slot so that it can be moved or removed in place.
type expiryHeap []*record

// push adds r.
func (h *expiryHeap) push(r *record) {
	r.slot = len(*h)
	*h = append(*h, r)
	h.up(r.slot)
}

// remove takes out the record at slot i.
func (h *expiryHeap) remove(i int) {
	old := *h
	last := len(old) - 1
	if i != last {
		h.swap(i, last)
	}
	old[last] = nil // no hold on a dropped record
	*h = old[:last]
	if i != last {
		h.fix(i)
	}
}

// fix restores the order after the deadline at slot i changed.
func (h expiryHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// up moves the record at i towards the top while it is due before its
// parent.
func (h expiryHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].deadline <= h[i].deadline {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down moves the record at i towards the bottom while a child is due
// before it, and reports whether it moved.
func (h expiryHeap) down(i int) bool {
	start := i
	for {
		child := 2*i + 1
		if child >= len(h) {
			break
		}
		if right := child + 1; right < len(h) && h[right].deadline < h[child].deadline {
			child = right
		}
		if h[i].deadline <= h[child].deadline {
			break
		}
		h.swap(i, child)
		i = child
	}
	return i > start
}

func (h expiryHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}

// setDeadline moves r, in the heap, to deadline.
func (s *Store) setDeadline(r *record, deadline int64) {
	r.deadline = deadline
	s.expiry.fix(r.slot)
}
