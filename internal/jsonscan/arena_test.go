package jsonscan

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// A stringArena's strings are copies: they keep their bytes when the input
// they came from is overwritten, many share one block, and a long one gets
// its own.
func TestStringArena(t *testing.T) {
	var a stringArena
	in := []byte("orderno-0001")
	kept := make([]string, 100)
	for i := range kept {
		kept[i] = a.str(in)
	}
	bytes.NewBuffer(in[:0]).WriteString("XXXXXXXXXXXX") // overwrite the input in place
	for _, s := range kept {
		require.Equal(t, "orderno-0001", s)
	}
	require.Empty(t, a.str(nil))
	require.Zero(t, testing.AllocsPerRun(100, func() { a.str([]byte("a short string")) }), "a short string costs no allocation of its own")
	long := bytes.Repeat([]byte("x"), arenaChunk/8+1)
	got := a.str(long)
	long[0] = 'y'
	require.Equal(t, string(bytes.Repeat([]byte("x"), arenaChunk/8+1)), got)
	// A string that does not fit in what is left of a block starts a new
	// one; the old block's strings stay as they were.
	var b stringArena
	first := b.str(bytes.Repeat([]byte("a"), arenaChunk/8))
	for b.b.Cap()-b.b.Len() >= arenaChunk/8 {
		b.str(bytes.Repeat([]byte("b"), arenaChunk/8))
	}
	block := b.b
	next := b.str(bytes.Repeat([]byte("c"), arenaChunk/8))
	require.NotSame(t, block, b.b)
	require.Equal(t, string(bytes.Repeat([]byte("a"), arenaChunk/8)), first)
	require.Equal(t, string(bytes.Repeat([]byte("c"), arenaChunk/8)), next)
}
