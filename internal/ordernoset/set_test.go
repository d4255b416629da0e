package ordernoset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// check adds nos to a Set made from cfg (with hash, when not nil) and
// returns every repeat it reports, at Add or at Finish, as index: first,
// and how many Finish left out.
func check(t *testing.T, cfg Config, hash func(string) uint64, nos []string, limit int) (map[int]int, int) {
	t.Helper()
	s := New(cfg)
	if hash != nil {
		s.hash = hash
	}
	defer func() { require.NoError(t, s.Close()) }()
	got := map[int]int{}
	for i, no := range nos {
		if first, dup := s.Add(no, i); dup {
			got[i] = first
		}
	}
	dups, more, err := s.Finish(limit)
	require.NoError(t, err)
	for k, d := range dups {
		require.NotContains(t, got, d.Index)
		require.Equal(t, nos[d.Index][:min(len(nos[d.Index]), max(cfg.ValueBytes, 1))], d.Value)
		if k > 0 {
			require.Less(t, dups[k-1].Index, d.Index, "in index order")
		}
		got[d.Index] = d.First
	}
	return got, more
}

// reference is what a plain map says: each repeat and its first index.
func reference(nos []string) map[int]int {
	firsts, want := map[string]int{}, map[int]int{}
	for i, no := range nos {
		if f, ok := firsts[no]; ok {
			want[i] = f
		} else {
			firsts[no] = i
		}
	}
	return want
}

// numbered makes n ordernos INV-0..INV-n-1, then repeats.
func numbered(n int, repeats ...[2]int) []string {
	nos := make([]string, n)
	for i := range nos {
		nos[i] = fmt.Sprintf("INV-%d", i)
	}
	for _, r := range repeats {
		nos[r[0]] = nos[r[1]]
	}
	return nos
}

// weak is a hash under which every orderno collides.
func weak(string) uint64 { return 7 }

func TestSetFindsExactRepeats(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int
		hash   func(string) uint64
		nos    []string
	}{
		{name: "in memory", budget: 0, nos: numbered(1000, [2]int{999, 3}, [2]int{500, 3}, [2]int{10, 9})},
		{name: "in memory, weak hash", budget: 0, hash: weak, nos: numbered(300, [2]int{299, 3}, [2]int{7, 6})},
		{name: "spilled", budget: 4 << 10, nos: numbered(5000, [2]int{4999, 3}, [2]int{20, 3}, [2]int{2500, 2499})},
		{name: "spilled, weak hash", budget: 1 << 10, hash: weak, nos: numbered(3000, [2]int{2999, 3}, [2]int{1500, 1499})},
		{name: "many runs, merged in passes", budget: 300, nos: numbered(20000, [2]int{19999, 3}, [2]int{19998, 3}, [2]int{4, 3})},
		{name: "empty and long ordernos", budget: 200, nos: []string{"", "a", "", string(bytes.Repeat([]byte("x"), 5000)), "a", string(bytes.Repeat([]byte("x"), 5000))}},
		{name: "none", budget: 100, nos: numbered(2000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, more := check(t, Config{Budget: tc.budget, Spill: Memory(), ValueBytes: 8}, tc.hash, tc.nos, -1)
			require.Equal(t, reference(tc.nos), got)
			require.Zero(t, more)
		})
	}
}

// Finish keeps the limit repeats of the smallest indexes and counts the
// rest; the temporary file it spilled to is gone after Close.
func TestSetFinishLimitAndTempFile(t *testing.T) {
	dir := t.TempDir()
	nos := numbered(4000)
	for i := 100; i < 4000; i += 2 {
		nos[i] = nos[0]
	}
	s := New(Config{Budget: 2 << 10, Spill: TempFile(dir), ValueBytes: 3})
	for i, no := range nos {
		if _, dup := s.Add(no, i); dup {
			require.Less(t, i, 100, "after the spill repeats wait for Finish")
		}
	}
	dups, more, err := s.Finish(5)
	require.NoError(t, err)
	require.Len(t, dups, 5)
	require.Equal(t, Dup{Index: 100, First: 0, Value: "INV"}, dups[0])
	require.Equal(t, 108, dups[4].Index)
	require.Equal(t, 1950-5, more)
	none, more, err := New(Config{Budget: 1, Spill: Memory()}).addAll(nos).Finish(0)
	require.NoError(t, err)
	require.Empty(t, none)
	require.Equal(t, 1950, more, "limit 0 lists none and counts them all")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Len(t, files, 1)
	require.NoError(t, s.Close())
	_, err = os.Stat(files[0])
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A spill that cannot be made, or written, is an error of Finish: the
// ordernos were not all checked.
func TestSetSpillError(t *testing.T) {
	boom := errors.New("disk full")
	for _, spill := range []func() (Spill, error){
		func() (Spill, error) { return nil, boom },
		func() (Spill, error) { return failing{boom}, nil },
	} {
		s := New(Config{Budget: 100, Spill: spill})
		for i, no := range numbered(1000) {
			s.Add(no, i)
		}
		_, _, err := s.Finish(-1)
		require.ErrorIs(t, err, boom)
	}
}

// failing is a Spill whose writes fail.
type failing struct{ err error }

func (f failing) Write([]byte) (int, error)         { return 0, f.err }
func (f failing) ReadAt([]byte, int64) (int, error) { return 0, f.err }
func (f failing) Close() error                      { return nil }

// FuzzSetMatchesMap holds the Set to a map[string]int, in memory and
// spilled, with its own hash and a weak one.
func FuzzSetMatchesMap(f *testing.F) {
	f.Add([]byte("a,b,a,c,b,,"), uint16(0), false)
	f.Add([]byte("x,y,x,y,x,y,z,zz,z"), uint16(20), true)
	f.Fuzz(func(t *testing.T, data []byte, budget uint16, weakHash bool) {
		nos := []string{}
		for no := range bytes.SplitSeq(data, []byte{','}) {
			nos = append(nos, string(no))
		}
		var hash func(string) uint64
		if weakHash {
			hash = func(s string) uint64 { return uint64(len(s) % 3) }
		}
		got, _ := check(t, Config{Budget: int(budget), Spill: Memory(), ValueBytes: 4}, hash, nos, -1)
		require.Equal(t, reference(nos), got)
	})
}

// addAll adds nos in order.
func (s *Set) addAll(nos []string) *Set {
	for i, no := range nos {
		s.Add(no, i)
	}
	return s
}
