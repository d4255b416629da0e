//go:build !purego && unix

package paygate

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestEscapeVectorLayout holds escapeVectors to the offsets escape_amd64.s
// reads.
func TestEscapeVectorLayout(t *testing.T) {
	var v escapeVectors
	for _, c := range []struct {
		name        string
		got, offset uintptr
	}{
		{"lutLo", unsafe.Offsetof(v.lutLo), 0}, {"lutHi", unsafe.Offsetof(v.lutHi), 16},
		{"hex", unsafe.Offsetof(v.hex), 32}, {"nibble", unsafe.Offsetof(v.nibble), 48},
		{"percent", unsafe.Offsetof(v.percent), 64}, {"space", unsafe.Offsetof(v.space), 80},
		{"spaceToPlus", unsafe.Offsetof(v.spaceToPlus), 96}, {"formMask", unsafe.Offsetof(v.formMask), 112},
		{"shuffles", unsafe.Offsetof(v.shuffles), 128}, {"words", unsafe.Offsetof(v.words), 384},
		{"raw", unsafe.Offsetof(v.raw), 392}, {"lowCtl", unsafe.Offsetof(v.lowCtl), 400},
		{"del", unsafe.Offsetof(v.del), 416}, {"semi", unsafe.Offsetof(v.semi), 432},
		{"hash", unsafe.Offsetof(v.hash), 448}, {"hexUpper", unsafe.Offsetof(v.hexUpper), 464},
		{"kept", unsafe.Offsetof(v.kept), 720},
	} {
		require.Equal(t, c.offset, c.got, c.name)
	}
}

// TestEscapeVectorRuns makes sure the vector path is the one the tests of
// appendEscaped and appendQuery exercise on a CPU with SSSE3.
func TestEscapeVectorRuns(t *testing.T) {
	if !haveSSSE3 {
		t.Skip("no SSSE3: appendEscaped escapes a byte at a time")
	}
	s := strings.Repeat(`{"a":"b c"}~`, 3) // two blocks and a tail
	out, ok := appendEscapedVector([]byte("pre"), s, encFormGo)
	require.True(t, ok)
	require.Equal(t, "pre"+referenceEscape(s, encFormGo), string(out))
}

// TestEscapeVectorPageEdge puts every string of 1 to 40 bytes at the very
// end of a page whose next page is unmapped (PROT_NONE), and at every
// offset before it: a load past the string's page would crash the test.
// The bytes written must be appendEscapedWords's, keys and values alike.
func TestEscapeVectorPageEdge(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(mem)
	require.NoError(t, syscall.Mprotect(mem[page:], syscall.PROT_NONE))
	// Every byte class, and plain bytes alone (a plain key is copied,
	// not escaped).
	for _, src := range []string{"a~ *é\x00Zz09-._+%&=", "aZ9-._"} {
		requirePageEdge(t, mem[:page], src)
	}
}

// requirePageEdge runs TestEscapeVectorPageEdge's checks on strings of
// bytes from src that end at the end of page or up to 19 bytes before it.
func requirePageEdge(t *testing.T, page []byte, src string) {
	for n := 1; n <= 40; n++ {
		for back := 0; back < 20; back++ {
			end := len(page) - back
			buf := page[end-n : end]
			for i := range buf {
				buf[i] = src[(i*7+n)%len(src)]
			}
			s := unsafe.String(&buf[0], n) // the page's bytes, not a copy
			for enc := range queryEncoding(4) {
				want := appendEscapedWords([]byte("p"), s, enc)
				require.Equal(t, string(want), string(appendEscaped([]byte("p"), s, enc)), "%d bytes %d before the page's end", n, back)
				wantRaw, flags := appendRawEscapedWords([]byte("p"), s)
				gotRaw, ok := appendRawVector([]byte("p"), s)
				if ok {
					require.Zero(t, flags)
					require.Equal(t, string(wantRaw), string(gotRaw))
				}
				var c canonicaliser
				c.fields = []field{{key: s, value: s}, {key: "k", value: s}}
				c.plain = plainMask(c.fields) // a plain key is copied
				got := c.appendQuery([]byte("p"), enc)
				wantQ := "p" + string(want[1:]) + "=" + string(want[1:]) + "&k=" + string(want[1:])
				require.Equal(t, wantQ, string(got))
			}
		}
	}
}

// TestAppendQueryVectorMatchesWords compares appendQuery's vector path with
// the word path, bytes and ends, on random field sets.
func TestAppendQueryVectorMatchesWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("aZ9-._~* +%&=é\x00\xff{\"")
	str := func() string {
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 2000 {
		var c canonicaliser
		n := rng.IntN(14)
		if rng.IntN(10) == 0 { // past the 32 keys plainMask marks, and past 64: no bit may come back
			n = 32 + rng.IntN(50)
		}
		for range n {
			key := str()
			if rng.IntN(2) == 0 { // a plain key, which the vector path copies
				key = strings.Repeat("aZ9-._", 5)[:rng.IntN(31)]
			}
			c.fields = append(c.fields, field{key: key, value: str()})
		}
		c.plain = plainMask(c.fields)
		for enc := range queryEncoding(4) {
			got := c.appendQuery([]byte("pre"), enc)
			gotEnds := append([]int(nil), c.ends...)
			want := []byte("pre")
			var wantEnds []int
			for i, f := range c.fields {
				if i > 0 {
					want = append(want, '&')
				}
				want = appendEscapedWords(want, f.key, enc)
				want = append(want, '=')
				want = appendEscapedWords(want, f.value, enc)
				wantEnds = append(wantEnds, len(want))
			}
			require.Equal(t, string(want), string(got))
			require.Equal(t, wantEnds, gotEnds[:len(wantEnds)])
			require.Len(t, gotEnds, len(wantEnds))
		}
	}
}

// TestRawVectorMatchesWords compares appendRawVector with the word path
// on random raw query values: where the vector path takes a value, it
// writes the same bytes, and the word path finds no flag; it leaves every
// value the word path flags (a stop byte, an escape cut short, in lower
// case or of a kept byte) to the exact way.
func TestRawVectorMatchesWords(t *testing.T) {
	if !haveSSSE3 {
		t.Skip("no SSSE3")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "9", "-", ".", "_", "~", "*", "+", "%20", "%E6", "%2B", "%2b", "%41", "%7E", "%", "%4", "%G1",
		";", "#", "\x00", "\x1f", "\x7f", "\xff", "é", " ", "&", "=", "!", "'", "(", "/", ":", "@"}
	taken := 0
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		want, flags := appendRawEscapedWords([]byte("x="), s)
		got, ok := appendRawVector([]byte("x="), s)
		if flags != 0 {
			require.False(t, ok, "%q has flags %#x", s, flags)
		}
		if !ok {
			continue
		}
		taken++
		require.Zero(t, flags, "%q", s)
		require.Equal(t, string(want), string(got), "%q", s)
	}
	require.Greater(t, taken, 100, "the vector path took too few values to test it")
	// An escape cut short by the value's end, where the bytes after the
	// value (read with the block) are hex digits: still the exact way.
	for _, whole := range []string{"ab%E6CD", "ab%E6%97", strings.Repeat("z", 20) + "%E6%97"} {
		for cut := 1; cut <= len(whole); cut++ {
			s := whole[:cut]
			want, flags := appendRawEscapedWords(nil, s)
			got, ok := appendRawVector(nil, s)
			if flags != 0 {
				require.False(t, ok, "%q", s)
			} else if ok {
				require.Equal(t, string(want), string(got), "%q", s)
			}
		}
	}
}

// TestSortedQueryVectorTakesAnOrder makes sure the vector path of
// SignURL's sorted query is the one TestSignURLSortedPath and
// FuzzSignReference exercise on a CPU with SSSE3, for an order as
// url.Values.Encode writes it and for one whose '&' and '=' fall on the
// blocks' edges.
func TestSortedQueryVectorTakesAnOrder(t *testing.T) {
	if !haveSSSE3 {
		t.Skip("no SSSE3")
	}
	for _, q := range []string{benchOrder().Encode(), strings.Repeat("x", 15) + "=" + strings.Repeat("y", 15) + "&z=1"} {
		var s signState
		_, ok := s.appendSortedQueryVector(nil, q, "1800000060")
		require.True(t, ok, q)
	}
}
