package paygate

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"time"
)

// dedupeStore is MemoryDeduper's table of keys. It holds no pointer per
// key, so that the garbage collector has nothing to scan in it however many
// keys it holds: each key is one chunk of an arena of byte pages (chunk), found
// through a hash index of 8-byte slots (dedupeIndex), and expired through
// queues of (expiry, chunk, hash) records (expiryQueue). The lock of its
// MemoryDeduper is held for every call.
type dedupeStore struct {
	seed   maphash.Seed
	arena  dedupeArena
	index  dedupeIndex
	queues map[time.Duration]*expiryQueue
	order  []*expiryQueue // the queues, for expire to range over
}

func newDedupeStore() *dedupeStore {
	return &dedupeStore{
		seed:   maphash.MakeSeed(),
		arena:  dedupeArena{maxPages: arenaMaxPages},
		index:  dedupeIndex{dir: []*indexTable{newIndexTable(sizeFor(0), 0)}},
		queues: make(map[time.Duration]*expiryQueue),
	}
}

// errDedupeFull is the error of a claim that finds no room left for its
// key: a store of about 250 million keys (16 GiB of chunks).
var errDedupeFull = errors.New("paygate: MemoryDeduper is full (16 GiB of keys): use a Deduper on a database")

// maxDedupeField is the longest key or result a MemoryDeduper stores, in
// bytes: a chunk fits in one arena page.
const maxDedupeField = 1<<16 - 1

// A chunk is one key's state in the arena: a header (its expiry, its
// claim's token number, the lengths of its key and result), the key, and
// room for the result. Its size is chunkSize of its key's and result's
// lengths, so it is known without being stored.
type chunk []byte

const (
	chunkHeader = 20 // expires int64, token uint64, key length uint16, result length uint16
	// resultReserve is the room for the result that a claim's chunk keeps,
	// so that completing a claim with a result up to an orderNo's length
	// writes it in place.
	resultReserve = 16
)

// chunkSize is the size of the chunk of a key and result of these lengths,
// a multiple of 4.
func chunkSize(keyLen, resultLen int) int {
	return (chunkHeader + keyLen + max(resultLen, resultReserve) + 3) &^ 3
}

// expires is the key's expiry (see MemoryDeduper.at), entryGone once the
// chunk is free.
func (c chunk) expires() int64     { return int64(binary.LittleEndian.Uint64(c)) }
func (c chunk) setExpires(e int64) { binary.LittleEndian.PutUint64(c, uint64(e)) }

// token is the number of the claim's token, 0 once done.
func (c chunk) token() uint64     { return binary.LittleEndian.Uint64(c[8:]) }
func (c chunk) setToken(n uint64) { binary.LittleEndian.PutUint64(c[8:], n) }
func (c chunk) keyLen() int       { return int(binary.LittleEndian.Uint16(c[16:])) }
func (c chunk) resultLen() int    { return int(binary.LittleEndian.Uint16(c[18:])) }
func (c chunk) key() []byte       { return c[chunkHeader : chunkHeader+c.keyLen()] }
func (c chunk) size() int         { return chunkSize(c.keyLen(), c.resultLen()) }
func (c chunk) result() []byte    { return c[chunkHeader+c.keyLen():][:c.resultLen()] }
func (c chunk) setKey(key string) {
	binary.LittleEndian.PutUint16(c[16:], uint16(copy(c[chunkHeader:], key)))
}
func (c chunk) setResult(r string) {
	binary.LittleEndian.PutUint16(c[18:], uint16(copy(c[chunkHeader+c.keyLen():], r)))
}
func (c chunk) nextFree() uint32     { return binary.LittleEndian.Uint32(c[8:]) }
func (c chunk) setNextFree(r uint32) { binary.LittleEndian.PutUint32(c[8:], r) }

// Arena geometry: a chunk's reference is its page's number and its offset
// in the page in units of 4 bytes; 0 is no chunk (the first 4 bytes of the
// first page are never handed out).
const (
	pageShift     = 18 // pages of 256 KiB: the largest chunk fits
	pageSize      = 1 << pageShift
	refPageShift  = pageShift - 2
	refOffsetMask = 1<<refPageShift - 1
	arenaMaxPages = 1 << (32 - refPageShift)
)

// dedupeArena hands out chunks from pages of bytes. A freed chunk goes on
// the free list of its size and is only ever reused at that size, so a
// reference always points at the start of a chunk, free or not.
type dedupeArena struct {
	pages    [][]byte
	used     int      // bytes handed out from the last page
	free     []uint32 // free[size/4]: the first free chunk of size, 0 none
	maxPages int
}

// chunk is the chunk at ref (sliced to the end of its page).
func (a *dedupeArena) chunk(ref uint32) chunk {
	return a.pages[ref>>refPageShift][(ref&refOffsetMask)<<2:]
}

// alloc returns a chunk of size bytes (a multiple of 4, at most a page), or
// 0 when the arena is full.
func (a *dedupeArena) alloc(size int) uint32 {
	if class := size >> 2; class < len(a.free) && a.free[class] != 0 {
		ref := a.free[class]
		a.free[class] = a.chunk(ref).nextFree()
		return ref
	}
	if len(a.pages) == 0 || a.used+size > pageSize {
		if len(a.pages) == a.maxPages {
			return 0
		}
		a.pages = append(a.pages, make([]byte, pageSize))
		a.used = 0
		if len(a.pages) == 1 {
			a.used = 4 // ref 0 is no chunk
		}
	}
	ref := uint32(len(a.pages)-1)<<refPageShift | uint32(a.used>>2)
	a.used += size
	return ref
}

// release frees the chunk at ref, of size bytes: its expiry becomes
// entryGone, which no expiry record holds.
func (a *dedupeArena) release(ref uint32, size int) {
	class := size >> 2
	if class >= len(a.free) {
		a.free = append(a.free, make([]uint32, class+1-len(a.free))...)
	}
	c := a.chunk(ref)
	c.setExpires(entryGone)
	c.setNextFree(a.free[class])
	a.free[class] = ref
}

// Index geometry: extendible hashing over tables of linear-probed slots, so
// that growing rebuilds one table (a bounded amount of work) and never
// rehashes the whole index.
const (
	// tableBits is how many low bits of a tag place it in its table (see
	// home).
	tableBits = 10
	tableMask = 1<<tableBits - 1
	// tableSlots is the most slots a table has: the last of tableSizes.
	tableSlots = 1024
	// maxDepth leaves the low tableBits of a tag to the slot position.
	maxDepth = 32 - tableBits
)

// tableSizes are the sizes a table takes, in slots. A table 7/8 full grows
// to the next size, or at the last splits into two of the size their keys
// take (about 2/3 full), so that every table is between about 2/3 and 7/8
// full however many keys the store holds. With one size, every table split
// at once as the store doubled, leaving them all under half full: 16.7
// bytes of index per key at a million keys, against 11 this way, and a
// larger working set for the index probes that miss the caches there.
// Each size is, at 8 bytes a slot, one of the allocator's size classes
// exactly (5,376, 6,784 and 8,192 bytes).
func tableSizes() [3]int { return [...]int{672, 848, tableSlots} }

// sizeFor is the smallest table size with room for a key beyond n.
func sizeFor(n int) int {
	for _, size := range tableSizes() {
		if n < size*7/8 {
			return size
		}
	}
	return tableSlots
}

// dedupeIndex maps a key's 32-bit hash, its tag, to its chunk. The top
// depth bits of a tag choose a table through dir; its low tableBits the
// first slot to probe (home).
type dedupeIndex struct {
	dir   []*indexTable
	depth uint // len(dir) == 1<<depth
	n     int
	hint  uint64 // see prefetch
}

// indexTable holds slots tag<<32 | ref, 0 for empty, for the keys whose
// tags share their top depth bits; one of tableSizes of them.
type indexTable struct {
	slots []uint64
	n     int
	depth uint
}

func newIndexTable(size int, depth uint) *indexTable {
	return &indexTable{slots: make([]uint64, size), depth: depth}
}

func (x *dedupeIndex) table(tag uint32) *indexTable { return x.dir[uint64(tag)>>(32-x.depth)] }

// home is the first slot a lookup of tag probes: its low tableBits scaled
// to the table's size, so that keys sharing them share it at every size.
func (t *indexTable) home(tag uint32) uint32 {
	return uint32(uint64(tag&tableMask) * uint64(len(t.slots)) >> tableBits)
}

// next is the slot probed after pos.
func (t *indexTable) next(pos uint32) uint32 {
	if pos++; int(pos) == len(t.slots) {
		return 0
	}
	return pos
}

// full reports whether t holds as many keys as its size allows.
func (t *indexTable) full() bool { return t.n >= len(t.slots)*7/8 }

// prefetch reads (into the index's hint, so that the reads are not
// optimised away) the slot where a lookup of tag starts, and the slot and
// chunk of each queue's next record to expire: a claim does so before
// expire and its lookup, so that their cache misses at a million keys
// overlap. Its own lookup's miss then overlaps the expiry's; and a claim
// of a stored key (a duplicate), which drops nothing but waits for its
// slot and then its chunk, brings in the next lapsing key's slot and chunk
// meanwhile, for the claim that drops it.
func (s *dedupeStore) prefetch(tag uint32) {
	t := s.index.table(tag)
	hint := t.slots[t.home(tag)]
	for _, q := range s.order {
		if r, ok := q.peek(); ok {
			t = s.index.table(r.tag)
			hint += t.slots[t.home(r.tag)] + uint64(s.arena.chunk(r.ref).expires())
		}
	}
	s.index.hint = hint
}

// tag is key's hash.
func (s *dedupeStore) tag(key string) uint32 { return uint32(maphash.String(s.seed, key)) }

// lookup finds key of tag: its table, its slot and its chunk, or, when it
// is not stored, the empty slot where it would go and a zero ref.
func (s *dedupeStore) lookup(key string, tag uint32) (t *indexTable, pos uint32, ref uint32) {
	t = s.index.table(tag)
	for pos = t.home(tag); ; pos = t.next(pos) {
		slot := t.slots[pos]
		if slot == 0 {
			return t, pos, 0
		}
		if uint32(slot>>32) == tag && string(s.arena.chunk(uint32(slot)).key()) == key {
			return t, pos, uint32(slot)
		}
	}
}

// slotOf finds the slot of the chunk at ref (not 0) on tag's probe path;
// ok is false when it is not there.
func (x *dedupeIndex) slotOf(tag, ref uint32) (t *indexTable, pos uint32, ok bool) {
	t = x.table(tag)
	for pos = t.home(tag); t.slots[pos] != 0; pos = t.next(pos) {
		if uint32(t.slots[pos]) == ref {
			return t, pos, true
		}
	}
	return t, pos, false
}

// tag is the tag of the key in slot pos.
func (t *indexTable) tag(pos uint32) uint32 { return uint32(t.slots[pos] >> 32) }

// add stores key, not stored yet, whose lookup ended at t's empty slot
// pos, in a new chunk: its ref, or 0 when the store is full.
func (s *dedupeStore) add(key string, tag uint32, t *indexTable, pos uint32) uint32 {
	if t.full() {
		if !s.index.grow(t, tag) {
			return 0
		}
		t = s.index.table(tag)
		pos = t.free(tag)
	}
	ref := s.arena.alloc(chunkSize(len(key), 0))
	if ref == 0 {
		return 0
	}
	c := s.arena.chunk(ref)
	c.setKey(key)
	c.setResult("")
	t.slots[pos] = uint64(tag)<<32 | uint64(ref)
	t.n++
	s.index.n++
	return ref
}

// free returns the first empty slot on tag's probe path.
func (t *indexTable) free(tag uint32) uint32 {
	pos := t.home(tag)
	for t.slots[pos] != 0 {
		pos = t.next(pos)
	}
	return pos
}

// refill puts the filled ones of slots into t (emptied, sized for them).
func (t *indexTable) refill(slots []uint64) {
	for _, slot := range slots {
		if slot != 0 {
			t.slots[t.free(uint32(slot>>32))] = slot
		}
	}
}

// grow makes room in t for tag: t takes the next of tableSizes, or, at the
// last, its keys are shared between t and a new table by one more bit of
// their tags, as often as it takes. It reports false when tag's table is
// full and cannot split (beyond maxDepth), which only a store far past its
// arena's limit reaches.
func (x *dedupeIndex) grow(t *indexTable, tag uint32) bool {
	for t.full() {
		switch {
		case len(t.slots) < tableSlots:
			old := t.slots
			t.slots = make([]uint64, sizeFor(t.n))
			t.refill(old)
		case t.depth == maxDepth:
			return t.n < len(t.slots)-1
		default:
			x.split(t, tag)
		}
		t = x.table(tag)
	}
	return true
}

// split shares t's keys between t and a new table by one more bit of their
// tags, each table sized for its share.
func (x *dedupeIndex) split(t *indexTable, tag uint32) {
	if t.depth == x.depth {
		dir := make([]*indexTable, 2*len(x.dir))
		for i := range dir {
			dir[i] = x.dir[i>>1]
		}
		x.dir, x.depth = dir, x.depth+1
	}
	old, bit := t.slots, uint32(1)<<(31-t.depth)
	high := 0
	for _, slot := range old {
		if uint32(slot>>32)&bit != 0 {
			high++
		}
	}
	t.depth++
	up := newIndexTable(sizeFor(high), t.depth)
	up.n, t.n = high, t.n-high
	t.slots = make([]uint64, sizeFor(t.n))
	for _, slot := range old {
		if to := t; slot != 0 {
			if uint32(slot>>32)&bit != 0 {
				to = up
			}
			to.slots[to.free(uint32(slot>>32))] = slot
		}
	}
	// t's dir entries: those of tag's top t.depth-1 bits; the upper
	// half of them, with the new bit set, now go to up.
	span := 1 << (x.depth - t.depth)
	first := int(uint64(tag)>>(32-t.depth+1)) << (x.depth - t.depth + 1)
	for i := first + span; i < first+2*span; i++ {
		x.dir[i] = up
	}
}

// dist is how many slots from lies before to on a probe path.
func (t *indexTable) dist(from, to uint32) uint32 {
	if to >= from {
		return to - from
	}
	return to + uint32(len(t.slots)) - from
}

// remove deletes t's slot pos, shifting back the slots after it on their
// probe paths, so that no tombstone is left.
func (x *dedupeIndex) remove(t *indexTable, pos uint32) {
	for next := t.next(pos); t.slots[next] != 0; next = t.next(next) {
		home := t.home(t.tag(next))
		// The slot at next may fill the hole at pos unless its home lies
		// cyclically in (pos, next].
		if t.dist(home, next) >= t.dist(pos, next) {
			t.slots[pos] = t.slots[next]
			pos = next
		}
	}
	t.slots[pos] = 0
	t.n--
	x.n--
}

// drop deletes the key at t's slot pos, whose chunk is ref.
func (s *dedupeStore) drop(t *indexTable, pos, ref uint32) {
	s.index.remove(t, pos)
	s.release(ref)
}

// release frees the chunk at ref, taking back its last record.
func (s *dedupeStore) release(ref uint32) {
	c := s.arena.chunk(ref)
	s.untrack(ref, c.expires())
	s.arena.release(ref, c.size())
}

// retrack records that the chunk at ref, whose key has tag, expires at
// expires, d from now, instead of when it did.
func (s *dedupeStore) retrack(ref, tag uint32, expires int64, d time.Duration) {
	c := s.arena.chunk(ref)
	s.untrack(ref, c.expires())
	c.setExpires(expires)
	s.track(ref, tag, expires, d)
}

// expiryRecord says that the chunk at ref, whose key had tag, expires at
// expires (see MemoryDeduper.at), unless it has changed since. The tag lets
// expire find the key's slot without waiting for the chunk.
type expiryRecord struct {
	expires  int64
	ref, tag uint32
}

// stale reports whether r no longer describes its chunk's key. A freed
// chunk's expiry is entryGone, which no record holds; a chunk reused for
// another key with the very same expiry is described by r just as well:
// that key lapses at r.expires too.
func (s *dedupeStore) stale(r expiryRecord) bool {
	return s.arena.chunk(r.ref).expires() != r.expires
}

// untrack takes back the record that the chunk at ref expires at expires
// when it is the last of its queue, as the record of a claim completed,
// renewed or released before the next claim is: the queue then holds no
// record of it, and expire never reads its chunk for it. A record not
// taken back is found stale when it comes due.
func (s *dedupeStore) untrack(ref uint32, expires int64) {
	for _, q := range s.order {
		b := q.tail
		if b == nil || b.n == 0 || (b == q.head && b.n == q.first) {
			continue // empty, or its last record already popped
		}
		if b.refs[b.n-1] == ref && b.expires[b.n-1] == expires {
			b.n--
			return
		}
	}
}

// expiryQueue is a FIFO of records, all made with one duration: a linked
// list of fixed-size blocks, so that no push or pop ever moves more than
// one record.
type expiryQueue struct {
	head, tail *expiryBlock
	first      int // next record to pop in head
}

// expiryBlock holds queued records; n of them are filled. 511 records
// and the block's n and next take exactly 8 KiB.
type expiryBlock struct {
	expires [511]int64
	refs    [511]uint32
	tags    [511]uint32
	n       int
	next    *expiryBlock
}

func (q *expiryQueue) push(r expiryRecord) {
	if q.tail == nil || q.tail.n == len(q.tail.refs) {
		b := &expiryBlock{}
		if q.tail == nil {
			q.head, q.first = b, 0
		} else {
			q.tail.next = b
		}
		q.tail = b
	}
	q.tail.expires[q.tail.n], q.tail.refs[q.tail.n], q.tail.tags[q.tail.n] = r.expires, r.ref, r.tag
	q.tail.n++
}

func (q *expiryQueue) peek() (expiryRecord, bool) {
	if q.head == nil || q.first == q.head.n {
		return expiryRecord{}, false
	}
	return expiryRecord{q.head.expires[q.first], q.head.refs[q.first], q.head.tags[q.first]}, true
}

func (q *expiryQueue) pop() {
	if q.first++; q.first == len(q.head.refs) {
		q.head, q.first = q.head.next, 0
		if q.head == nil {
			q.tail = nil
		}
	}
}

// each calls f for every queued record, oldest first (for tests).
func (q *expiryQueue) each(f func(expiryRecord)) {
	for b, i := q.head, q.first; b != nil; b, i = b.next, 0 {
		for ; i < b.n; i++ {
			f(expiryRecord{b.expires[i], b.refs[i], b.tags[i]})
		}
	}
}

// Bounds of the incremental expiry.
const (
	// expirePerCall is how many lapsed keys one call drops at most. A
	// Claim adds at most one key, so two keep the store from growing with
	// lapsed keys while bounding every call's work.
	expirePerCall = 2
	// stalePerCall is how many outdated records (of renewed, completed or
	// released claims) one call discards at most. A call leaves at most one
	// outdated record, so eight keep them from piling up.
	stalePerCall = 8
	// maxExpiryQueues bounds the queues; further durations share one.
	maxExpiryQueues = 8
	// overflowQueue keys the shared queue.
	overflowQueue = time.Duration(-1)
)

// track records that the chunk at ref, whose key has tag, expires at
// expires, d from now.
func (s *dedupeStore) track(ref, tag uint32, expires int64, d time.Duration) {
	q := s.queues[d]
	if q == nil {
		if len(s.queues) >= maxExpiryQueues {
			d = overflowQueue
		}
		if q = s.queues[d]; q == nil {
			q = &expiryQueue{}
			s.queues[d] = q
			s.order = append(s.order, q)
		}
	}
	q.push(expiryRecord{expires: expires, ref: ref, tag: tag})
}

// expire drops up to expirePerCall lapsed keys, earliest first, and
// discards up to stalePerCall outdated records on the way.
func (s *dedupeStore) expire(now int64) {
	dropped, discarded := 0, 0
	for dropped < expirePerCall && discarded < stalePerCall {
		var first *expiryQueue
		var rec expiryRecord
		for _, q := range s.order {
			if r, ok := q.peek(); ok && (first == nil || r.expires < rec.expires) {
				first, rec = q, r
			}
		}
		if first == nil || now < rec.expires {
			return
		}
		first.pop()
		// The slot is looked up by the record's tag, not the chunk's key,
		// so that the two reads (cache misses at a million keys) overlap.
		// A chunk whose expiry is the record's has lapsed, whichever key it
		// now holds; one not on the tag's probe path is left to its own
		// record.
		t, pos, ok := s.index.slotOf(rec.tag, rec.ref)
		if s.stale(rec) || !ok {
			discarded++
			continue
		}
		s.drop(t, pos, rec.ref)
		dropped++
	}
}
