package ordernoset

// How it is built: runs are merged fanIn at a time, each merge reading
// every run through its own small buffer and writing one run at the end
// of the spill, until at most fanIn remain; the last merge reads those
// and, instead of writing, compares each record with the first of its
// group: same hash and same bytes is a repeat of that first one. The
// repeats kept are the limit smallest indexes (a max-heap), so memory stays
// bounded however many there are.

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// fanIn is how many runs one merge reads at once, each through a buffer
// of readBuffer bytes.
const fanIn, readBuffer = 16, 32 << 10

// run is one sorted run in the spill.
type run struct{ off, size int64 }

// record is one orderno read back from a run.
type record struct {
	hash  uint64
	index int
	no    []byte
}

// cursor reads the records of one run in order.
type cursor struct {
	r   *bufio.Reader
	rec record
	ok  bool // rec holds the next record
}

// Finish reports the repeats that Add did not (none unless the Set
// spilled): at most limit of them (all when limit < 0), those of the
// smallest indexes, in index order, and how many more there are. It
// returns the first error of the spill, if any: then the ordernos were not
// all checked.
func (s *Set) Finish(limit int) ([]Dup, int, error) {
	if s.err != nil || s.spill == nil {
		return nil, 0, s.err
	}
	if len(s.entries) > 0 {
		if err := s.writeRun(); err != nil {
			return nil, 0, err
		}
	}
	for len(s.runs) > fanIn {
		if err := s.mergeRuns(fanIn); err != nil {
			return nil, 0, err
		}
	}
	found := &dupHeap{limit: limit}
	err := s.merge(s.runs, func(r *record, first *record) {
		if first != nil {
			found.add(Dup{Index: r.index, First: first.index, Value: string(r.no[:min(len(r.no), s.cfg.ValueBytes)])})
		}
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(found.dups, func(a, b Dup) int { return a.Index - b.Index })
	return found.dups, found.more, nil
}

// mergeRuns merges the first n runs into one written at the spill's end.
func (s *Set) mergeRuns(n int) error {
	start := s.size
	var rec []byte
	err := s.merge(s.runs[:n], func(r *record, _ *record) {
		rec = appendRecord(rec[:0], r.hash, r.index, r.no)
		w, _ := s.out.Write(rec)
		s.size += int64(w)
	})
	if err == nil {
		err = s.out.Flush()
	}
	if err != nil {
		return err
	}
	s.runs = append(s.runs[n:], run{off: start, size: s.size - start})
	return nil
}

// merge reads runs in (hash, orderno, index) order and hands each record
// to emit, with the first record of its group when it repeats an orderno
// (nil otherwise). The records are reused after emit returns.
func (s *Set) merge(runs []run, emit func(r, first *record)) error {
	cs := make([]cursor, len(runs))
	for i, r := range runs {
		cs[i].r = bufio.NewReaderSize(io.NewSectionReader(s.spill, r.off, r.size), readBuffer)
		if err := cs[i].next(); err != nil {
			return err
		}
	}
	var first record
	have := false
	for {
		c := least(cs)
		if c == nil {
			return nil
		}
		r := &c.rec
		if have && sameOrderNo(&first, r) {
			emit(r, &first)
		} else {
			first = record{hash: r.hash, index: r.index, no: append(first.no[:0], r.no...)}
			have = true
			emit(r, nil)
		}
		if err := c.next(); err != nil {
			return err
		}
	}
}

// sameOrderNo reports whether two records carry the same orderno: equal
// hashes are not enough, the bytes must be equal too.
func sameOrderNo(a, b *record) bool {
	return a.hash == b.hash && bytes.Equal(a.no, b.no)
}

// least is the cursor of the smallest next record, or nil at the end.
func least(cs []cursor) *cursor {
	var best *cursor
	for i := range cs {
		c := &cs[i]
		if c.ok && (best == nil || compare(c.rec.hash, c.rec.no, c.rec.index, best.rec.hash, best.rec.no, best.rec.index) < 0) {
			best = c
		}
	}
	return best
}

// next reads the cursor's next record; at the run's end ok turns false.
func (c *cursor) next() error {
	var h [8]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		c.ok = false
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("ordernoset: reading a run: %w", err)
	}
	index, err := binary.ReadUvarint(c.r)
	if err != nil {
		return fmt.Errorf("ordernoset: reading a run: %w", err)
	}
	n, err := binary.ReadUvarint(c.r)
	if err != nil {
		return fmt.Errorf("ordernoset: reading a run: %w", err)
	}
	c.rec.hash, c.rec.index = binary.BigEndian.Uint64(h[:]), int(index)
	c.rec.no = slices.Grow(c.rec.no[:0], int(n))[:n]
	if _, err := io.ReadFull(c.r, c.rec.no); err != nil {
		return fmt.Errorf("ordernoset: reading a run: %w", err)
	}
	c.ok = true
	return nil
}

// dupHeap keeps the limit repeats of the smallest indexes (all when limit
// < 0) as a max-heap by index, and counts the others.
type dupHeap struct {
	dups  []Dup
	limit int
	more  int
}

// add keeps d if it is among the limit smallest so far.
func (h *dupHeap) add(d Dup) {
	switch {
	case h.limit < 0 || len(h.dups) < h.limit:
		heap.Push(h, d)
	case h.limit > 0 && d.Index < h.dups[0].Index:
		h.dups[0] = d
		heap.Fix(h, 0)
		h.more++
	default:
		h.more++
	}
}

func (h *dupHeap) Len() int           { return len(h.dups) }
func (h *dupHeap) Less(i, j int) bool { return h.dups[i].Index > h.dups[j].Index }
func (h *dupHeap) Swap(i, j int)      { h.dups[i], h.dups[j] = h.dups[j], h.dups[i] }
func (h *dupHeap) Push(x any)         { h.dups = append(h.dups, x.(Dup)) }
func (h *dupHeap) Pop() any {
	d := h.dups[len(h.dups)-1]
	h.dups = h.dups[:len(h.dups)-1]
	return d
}
