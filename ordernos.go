package paygate

import (
	"encoding/binary"
	"hash/maphash"
)

// orderNoSet remembers each orderno of a batch with the index of the
// transaction that first carried it, for the rule "orderno is unique"
// (docs/protocol.md B2). It owns copies of the ordernos, packed in a byte
// arena of fixed-size blocks, and finds them through an open-addressing
// table of plain integers: about 30 bytes per orderno and nothing for the
// garbage collector to scan, so that a streamed 500 MB batch (a million
// transactions) fits in a few tens of megabytes. It holds at most
// maxOrderNos ordernos and maxArenaBlocks MiB of them (about 41 MB at
// most), whatever the input.
type orderNoSet struct {
	seed maphash.Seed
	// shards split the table by the hash's top byte, so that a shard
	// doubles on its own and growing never needs a second whole table.
	shards [256]orderNoShard
	blocks [][]byte // the arena: each orderno as a uvarint length and its bytes
	// full is set when the set reached maxOrderNos ordernos or
	// maxArenaBlocks blocks: later ordernos cannot be checked, which
	// firstOrAdd's caller reports.
	full  bool
	count int // ordernos held
	// maxCount and maxBlocks are maxOrderNos and maxArenaBlocks (tests set
	// small ones).
	maxCount, maxBlocks int
	// firstBlock is the first block's capacity: a small batch needs less
	// than a block, and the block grows as it fills (never past
	// arenaBlock bytes).
	firstBlock int
}

// maxOrderNos and maxArenaBlocks bound the set: a table of 256 shards of
// at most 8,192 slots (25 MB) and 16 MiB of arena, past a million
// transactions, so that memory stays bounded whatever the batch. An
// orderno beyond them cannot be checked for uniqueness, which is a
// problem of the batch, never a silent pass.
const (
	maxOrderNos    = 1 << 20
	maxArenaBlocks = 16
)

// orderNoShard is one part of the table.
type orderNoShard struct {
	slots []orderNoSlot // len is 0 or a power of two; hash 0 marks a free slot
	n     int
}

// orderNoSlot is one table entry.
type orderNoSlot struct {
	hash  uint32 // never 0 when used
	pos   uint32 // in the arena: block*arenaBlock + offset
	index uint32 // the first transaction's index
}

// arenaBlock is the size of one arena block.
const arenaBlock = 1 << 20

// orderNoGuess is the arena bytes newOrderNoSet expects per orderno.
const orderNoGuess = 16

// newOrderNoSet makes a set sized for about n ordernos.
func newOrderNoSet(n int) *orderNoSet {
	s := &orderNoSet{seed: maphash.MakeSeed(), maxCount: maxOrderNos, maxBlocks: maxArenaBlocks,
		firstBlock: min(arenaBlock, max(n, 256)*orderNoGuess)}
	if per := min(n, maxOrderNos) / len(s.shards); per > 0 {
		size := 16
		for size*3 < per*4 {
			size *= 2
		}
		for i := range s.shards {
			s.shards[i].slots = make([]orderNoSlot, size)
		}
	}
	return s
}

// firstOrAdd returns the index of the transaction that first carried no,
// and true; or records index for no and returns false (unless the set is
// full, when no is not recorded).
func (s *orderNoSet) firstOrAdd(no string, index int) (int, bool) {
	h := uint32(maphash.String(s.seed, no)) | 1
	sh := &s.shards[h>>24]
	if (sh.n+1)*4 > len(sh.slots)*3 {
		sh.grow()
	}
	mask := uint32(len(sh.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &sh.slots[i]
		if sl.hash == 0 {
			if s.count >= s.maxCount {
				s.full = true
				return 0, false
			}
			pos, ok := s.store(no)
			if !ok {
				s.full = true
				return 0, false
			}
			*sl = orderNoSlot{hash: h, pos: pos, index: uint32(index)}
			sh.n++
			s.count++
			return 0, false
		}
		if sl.hash == h && s.equal(sl, no) {
			return int(sl.index), true
		}
	}
}

// store copies no into the arena and returns its position. An orderno
// longer than a block gets a block of its own.
func (s *orderNoSet) store(no string) (uint32, bool) {
	need := binary.MaxVarintLen64 + len(no)
	if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1])+need > arenaBlock {
		if len(s.blocks) >= s.maxBlocks {
			return 0, false
		}
		size := arenaBlock
		if len(s.blocks) == 0 {
			size = s.firstBlock
		}
		s.blocks = append(s.blocks, make([]byte, 0, max(size, need)))
	}
	b := &s.blocks[len(s.blocks)-1]
	pos := uint32(len(s.blocks)-1)*arenaBlock + uint32(len(*b))
	*b = binary.AppendUvarint(*b, uint64(len(no)))
	*b = append(*b, no...)
	return pos, true
}

// equal reports whether the slot holds no.
func (s *orderNoSet) equal(sl *orderNoSlot, no string) bool {
	b := s.blocks[sl.pos/arenaBlock][sl.pos%arenaBlock:]
	n, k := binary.Uvarint(b)
	return string(b[k:k+int(n)]) == no // compared in place: no allocation
}

// grow doubles the shard (or makes its first 16 slots).
func (sh *orderNoShard) grow() {
	old := sh.slots
	sh.slots = make([]orderNoSlot, max(16, 2*len(old)))
	mask := uint32(len(sh.slots) - 1)
	for _, sl := range old {
		if sl.hash == 0 {
			continue
		}
		i := sl.hash & mask
		for sh.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		sh.slots[i] = sl
	}
}
