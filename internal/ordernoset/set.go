package ordernoset

// How it is built: while in memory, the ordernos are packed in one byte
// arena, and entries (hash, place in the arena, index) are found through
// an open-addressing table of entry numbers. When entries, table and
// arena pass the budget, the entries are sorted by (hash, orderno, index)
// and written as one run to the spill; from then on Add only appends (the
// table is dropped) and writes a run each time the budget is passed
// again, reusing the same memory. Finish merges the runs
// (merge.go): equal ordernos come out together, their first index first.

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"
)

// Config says how a Set may use memory.
type Config struct {
	// Budget is about how many bytes of memory the Set holds (the
	// garbage collector may need as much again): past it, the Set spills
	// to Spill. Zero or less: it never spills (for an input already in
	// memory, whose size bounds the Set's).
	Budget int
	// Spill makes the spill, once, when the Set first passes its Budget.
	Spill func() (Spill, error)
	// ValueBytes is how many bytes of a repeated orderno a Dup returned
	// by Finish keeps (at least 1).
	ValueBytes int
}

// Spill holds a Set's sorted runs: what is written is read back with
// ReadAt. Close releases it (a temporary file is removed).
type Spill interface {
	Write(p []byte) (int, error)
	ReadAt(p []byte, off int64) (int, error)
	Close() error
}

// Dup is an orderno repeated in a batch.
type Dup struct {
	Index int    // the transaction that repeats it
	First int    // the transaction that first carried it
	Value string // the orderno, cut at Config.ValueBytes
}

// Set finds repeated ordernos. It is not safe for concurrent use; Close
// releases its spill.
type Set struct {
	cfg  Config
	hash func(string) uint64 // tests set a weak one
	// The ordernos held in memory: entries point into arena; table holds
	// entry numbers plus one (0 is free), only until the first spill.
	entries []entry
	arena   []byte
	table   []int32
	// The runs written to spill, and where the next one starts.
	spill Spill
	out   *bufio.Writer
	runs  []run
	size  int64
	err   error // the first error of the spill, returned by Finish
}

// entry is one orderno held in memory.
type entry struct {
	hash   uint64
	index  int
	off, n int // in the arena
}

// entryBytes and slotBytes are what an entry and a table slot cost.
const entryBytes, slotBytes = 32, 4

// New makes a Set that uses memory as cfg says.
func New(cfg Config) *Set {
	seed := maphash.MakeSeed()
	cfg.ValueBytes = max(cfg.ValueBytes, 1)
	return &Set{cfg: cfg, hash: func(s string) uint64 { return maphash.String(seed, s) }}
}

// Add records that transaction index carries no. While the Set has not
// spilled it returns the index of the transaction that first carried no
// and true, or records no and returns false; after its first spill it
// always returns false and Finish reports the repeats. Indexes must grow
// from one call to the next.
func (s *Set) Add(no string, index int) (int, bool) {
	if s.err != nil {
		return 0, false
	}
	h := s.hash(no)
	if s.spill == nil {
		if first, ok := s.find(h, no); ok {
			return first, true
		}
	}
	s.entries = append(s.entries, entry{hash: h, index: index, off: len(s.arena), n: len(no)})
	s.arena = append(s.arena, no...)
	if s.spill == nil {
		s.insert(len(s.entries) - 1)
	}
	if s.cfg.Budget > 0 && s.used() > s.cfg.Budget {
		s.err = s.writeRun()
	}
	return 0, false
}

// used is the memory the Set holds, about.
func (s *Set) used() int {
	return len(s.entries)*entryBytes + len(s.table)*slotBytes + len(s.arena)
}

// bytesOf is the orderno of entry e.
func (s *Set) bytesOf(e *entry) []byte {
	return s.arena[e.off : e.off+e.n]
}

// find looks no up in the table: a slot matches only when its hash and
// its bytes are equal.
func (s *Set) find(h uint64, no string) (int, bool) {
	if len(s.table) == 0 {
		return 0, false
	}
	mask := uint64(len(s.table) - 1)
	for i := h & mask; s.table[i] != 0; i = (i + 1) & mask {
		e := &s.entries[s.table[i]-1]
		if e.hash == h && string(s.bytesOf(e)) == no {
			return e.index, true
		}
	}
	return 0, false
}

// insert puts entry k in the table, doubling it past half full.
func (s *Set) insert(k int) {
	if (k+1)*2 > len(s.table) {
		s.table = make([]int32, max(64, 2*len(s.table)))
		for j := range k {
			s.place(j)
		}
	}
	s.place(k)
}

// place puts entry k in the first free slot from its hash.
func (s *Set) place(k int) {
	mask := uint64(len(s.table) - 1)
	i := s.entries[k].hash & mask
	for s.table[i] != 0 {
		i = (i + 1) & mask
	}
	s.table[i] = int32(k + 1)
}

// writeRun sorts the entries held and writes them to the spill as one
// run, then empties the memory for the next (keeping its capacity).
func (s *Set) writeRun() error {
	if s.spill == nil {
		sp, err := s.cfg.Spill()
		if err != nil {
			return err
		}
		s.spill, s.out, s.table = sp, bufio.NewWriterSize(sp, 64<<10), nil
	}
	slices.SortFunc(s.entries, func(a, b entry) int {
		return compare(a.hash, s.bytesOf(&a), a.index, b.hash, s.bytesOf(&b), b.index)
	})
	start := s.size
	var rec []byte
	for i := range s.entries {
		e := &s.entries[i]
		rec = appendRecord(rec[:0], e.hash, e.index, s.bytesOf(e))
		n, _ := s.out.Write(rec)
		s.size += int64(n)
	}
	if err := s.out.Flush(); err != nil {
		return err
	}
	s.runs = append(s.runs, run{off: start, size: s.size - start})
	s.entries, s.arena = s.entries[:0], s.arena[:0]
	return nil
}

// compare orders records by hash, then orderno, then index.
func compare(ha uint64, a []byte, ia int, hb uint64, b []byte, ib int) int {
	if c := cmp.Compare(ha, hb); c != 0 {
		return c
	}
	if c := bytes.Compare(a, b); c != 0 {
		return c
	}
	return cmp.Compare(ia, ib)
}

// appendRecord appends one record of a run: the hash (8 bytes), the index
// and the orderno's length (uvarints), and the orderno.
func appendRecord(b []byte, h uint64, index int, no []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, h)
	b = binary.AppendUvarint(b, uint64(index))
	b = binary.AppendUvarint(b, uint64(len(no)))
	return append(b, no...)
}

// Close releases the spill, if the Set made one.
func (s *Set) Close() error {
	if s.spill == nil {
		return nil
	}
	sp := s.spill
	s.spill = nil
	return sp.Close()
}
