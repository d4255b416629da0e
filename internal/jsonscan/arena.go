package jsonscan

import "strings"

// stringArena copies the strings a caller keeps (Scanner.Keep) into
// blocks shared by many strings: one allocation per arenaChunk bytes of
// them, and nothing for the garbage collector to scan. The strings stay
// valid for as long as any of them is referenced.
type stringArena struct {
	b *strings.Builder // the block being filled; never grown past its first capacity
}

// arenaChunk is the size of a stringArena block; a string longer than
// an eighth of it gets its own allocation.
const arenaChunk = 32 << 10

// str returns a copy of b.
func (a *stringArena) str(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case len(b) > arenaChunk/8:
		return string(b)
	case a.b == nil || a.b.Cap()-a.b.Len() < len(b):
		a.b = new(strings.Builder)
		a.b.Grow(arenaChunk)
	}
	n := a.b.Len()
	a.b.Write(b) // within the capacity: the bytes already written never move
	return a.b.String()[n:]
}
