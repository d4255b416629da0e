package paygate

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// scanOps is one scanner seen through the calls a walk makes, with what
// they return as strings, so that scanners of either input and the
// reference can be walked alike.
type scanOps struct {
	peek     func() byte
	members  func(f func(key string))
	elements func(f func(i int))
	str      func() (string, bool, bool) // the value, whether it was too long, and whether it was not UTF-8
	number   func() (string, bool)
	skip     func() string
	failed   func() bool  // a syntax error was found
	finish   func() error // checks that nothing follows, returns the syntax error
}

// opsOf walks a jsonScan.
func opsOf[T jsonText](p *jsonScan[T]) scanOps {
	return scanOps{
		peek:     p.peek,
		members:  func(f func(string)) { p.eachMember(func(k T) { f(string(k)) }) },
		elements: p.eachElement,
		str:      func() (string, bool, bool) { s := p.str(); return string(s), p.long, p.notUTF8 },
		number:   func() (string, bool) { s := p.number(); return string(s), p.long },
		skip:     func() string { return string(p.skip()) },
		failed:   func() bool { return p.err != nil },
		finish: func() error {
			p.end()
			return p.err
		},
	}
}

// refOps walks the reference scanner.
func refOps(p *refScanner) scanOps {
	return scanOps{
		peek:     p.peek,
		members:  p.eachMember,
		elements: p.eachElement,
		str: func() (string, bool, bool) {
			start := p.i + 1 // after the opening quote
			s := p.str()
			return s, p.long, p.err == nil && refNotUTF8(p.s[start:p.i-1])
		},
		number: func() (string, bool) { s := p.number(); return s, p.long },
		skip:   p.skip,
		failed: func() bool { return p.err != nil },
		finish: func() error {
			if p.ws(); p.err == nil && p.i < len(p.s) {
				p.fail("data after the top-level value")
			}
			return p.err
		},
	}
}

// refNotUTF8 is the reference for jsonScan's notUTF8, read from a valid
// string's JSON text (quotes excluded) apart from the scanner: the plain
// runs between escapes must be valid UTF-8 (an escape is ASCII, so no rune
// spans one), and in each run of \u escapes every surrogate must be a high
// one followed by a low one.
func refNotUTF8(text string) bool {
	var units []uint16 // the run of \u escapes being read
	bad := false
	unpaired := func() {
		for k := 0; k < len(units); k++ {
			if utf16.IsSurrogate(rune(units[k])) {
				if units[k] < 0xdc00 && k+1 < len(units) && units[k+1] >= 0xdc00 && units[k+1] < 0xe000 {
					k++
					continue
				}
				bad = true
			}
		}
		units = units[:0]
	}
	for i := 0; i < len(text); {
		switch {
		case text[i] != '\\':
			unpaired()
			j := strings.IndexByte(text[i:], '\\')
			if j < 0 {
				j = len(text) - i
			}
			bad = bad || !utf8.ValidString(text[i:i+j])
			i += j
		case text[i+1] == 'u':
			u, err := strconv.ParseUint(text[i+2:i+6], 16, 16)
			if err != nil {
				panic("refNotUTF8 of a string the scanner found valid: " + text)
			}
			units = append(units, uint16(u))
			i += 6
		default:
			unpaired()
			i += 2
		}
	}
	unpaired()
	return bad
}

// walkJSON reads the value at hand the way a caller does, descending into
// objects and arrays, reading strings and numbers, and skipping every
// other array element and anything deeper than three levels, and logs
// what it read (a skipped value's text cut to head bytes, all that a
// stream keeps of it; none when the value is broken, as its text then is
// only what was read of the input, which a stream reads a window at a
// time).
func walkJSON(o scanOps, depth, head int, log *[]string) {
	skip := func() {
		t := o.skip()
		if o.failed() {
			t = "(broken)"
		}
		*log = append(*log, "skip "+t[:min(len(t), head)])
	}
	if depth > 3 {
		skip()
		return
	}
	switch c := o.peek(); {
	case c == '{':
		o.members(func(key string) {
			*log = append(*log, "key "+key)
			walkJSON(o, depth+1, head, log)
		})
	case c == '[':
		o.elements(func(i int) {
			if i%2 == 1 {
				skip()
				return
			}
			walkJSON(o, depth+1, head, log)
		})
	case c == '"':
		s, long, notUTF8 := o.str()
		*log = append(*log, "str "+s+map[bool]string{true: " (long)"}[long])
		if notUTF8 && !long && !o.failed() { // what a caller that keeps the string reads
			*log = append(*log, "not UTF-8")
		}
	case c == '-' || '0' <= c && c <= '9':
		s, long := o.number()
		*log = append(*log, "num "+s+map[bool]string{true: " (long)"}[long])
	default:
		skip()
	}
}

// scanResult is what a walk saw: its log, the syntax error and the values
// reported too long.
type scanResult struct {
	log      []string
	err      string
	problems []FieldError
}

// walkAll walks a whole input and returns what it saw.
func walkAll(o scanOps, head int, v *ValidationError) scanResult {
	var r scanResult
	walkJSON(o, 0, head, &r.log)
	if err := o.finish(); err != nil {
		r.err = err.Error()
	}
	r.problems = v.Problems
	return r
}

// requireScansAgree walks body with the reference scanner and with jsonScan
// over a string, over bytes and (when maxValue > 0) over a stream in
// windows of several sizes, and requires the same walk of all.
func requireScansAgree(t *testing.T, body []byte, maxValue int) {
	t.Helper()
	const head = maxErrorValue + 1
	var rv ValidationError
	want := walkAll(refOps(&refScanner{s: string(body), maxValue: maxValue, problems: &rv}), head, &rv)

	var sv ValidationError
	ps := &jsonScanner{s: string(body), maxValue: maxValue, onLong: longValueProblem(&sv, maxValue)}
	require.Equal(t, want, walkAll(opsOf(ps), head, &sv), "string input, cap %d", maxValue)

	var bv ValidationError
	pb := &byteScanner{s: body, maxValue: maxValue, onLong: longValueProblem(&bv, maxValue)}
	require.Equal(t, want, walkAll(opsOf(pb), head, &bv), "byte input, cap %d", maxValue)

	if maxValue == 0 {
		return // a stream always has a cap: without one a window could not end inside a token
	}
	for _, chunk := range []int{1, 5, 64} {
		var wv ValidationError
		src := &windowReader{r: bytes.NewReader(body), chunk: chunk, keep: max(maxValue+1, minTokenKeep)}
		pw := &byteScanner{src: src, head: head, maxValue: maxValue, onLong: longValueProblem(&wv, maxValue)}
		require.Equal(t, want, walkAll(opsOf(pw), head, &wv), "stream in windows of %d, cap %d", chunk, maxValue)
	}
}

// scanCorpus are inputs for the scanner's tests: the webhook test files,
// the long values of the stream tests, and every kind of broken token.
func scanCorpus(tb testing.TB) [][]byte {
	files, err := filepath.Glob("testdata/webhook/*.json")
	require.NoError(tb, err)
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(tb, err)
		out = append(out, b)
	}
	out = append(out, longValueBodies()...)
	for _, s := range []string{
		``, ` `, `{}`, `[]`, `[1,"a",true,false,null,{"k":[-0.5e+3]}]`, ` {"a" : [ 1 , 2 ] } `,
		`"\u00e9\ud83d\ude00\ud83d\u0041\udc00\"\\\/\b\f\n\r\t"`, `"\ud83d"`, `"\ud83d\u12"`, `"\ud83d\uzzzz"`,
		"\"\xff\xfe a\"", "\"a\x01\"", `"\x"`, `"\`, `"abc`, `[1.]`, `[-]`, `[01]`, `[1e]`, `[1e+]`, `[.5]`,
		`[tru]`, `[nul`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `[1,]`, `{"a":1} x`, `{"a/b~c":["x"]}`,
		`{"k\u0065y":"v\u0061lue","k\ney":1}`,
		// Text that is not UTF-8 (notUTF8), and near misses that are.
		"\"\xc3\"", "\"abc\xe2\x82\"", "\"\x80\"", "\"\xc0\xaf\"", "\"\xe0\x80\xaf\"", "\"\xf0\x80\x80\xaf\"",
		"\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "[\"\\n\xff\",\"ok\",\"\xe9\"]", "{\"k\xff\":\"v\"}",
		`"\udc00"`, `"\ude00\ud83d"`, `"\ud83d\ud83d\ude00"`, `"\ud83d\n"`, `"x\ud83d"`, `["\ud800","a"]`,
		`"\ufffd\ud83d\ude00"`, "\"\xef\xbf\xbd \xc3\xa9 \xf0\x9f\x98\x80\"",
	} {
		out = append(out, []byte(s))
	}
	return out
}

// jsonScan over a string, over bytes and over a stream reads every input of
// the corpus exactly as the reference scanner does, with and without a
// value cap.
func TestScannerMatchesReference(t *testing.T) {
	for _, body := range scanCorpus(t) {
		for _, maxValue := range []int{0, 1, 3, 64} {
			requireScansAgree(t, body, maxValue)
		}
	}
}

// FuzzScannerMatchesReference: for any input, jsonScan (over a string,
// bytes, or a stream in small windows) reads what the reference scanner
// reads, reports the same syntax error and the same values too long; and
// it finds a syntax error exactly when encoding/json does.
func FuzzScannerMatchesReference(f *testing.F) {
	for _, b := range scanCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, maxValue := range []int{0, 3, 64} {
				requireScansAgree(t, body, maxValue)
			}
			p := &byteScanner{s: body}
			p.value(0)
			p.end()
			require.Equal(t, json.Valid(body), p.err == nil, "syntax error: %v", p.err)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("slow on %d bytes", len(body))
		}
	})
}

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

// Over bytes, str and number return views, and keep copies: a key and the
// values kept survive the input being overwritten, and a string with
// escapes is decoded.
func TestByteScannerKeep(t *testing.T) {
	in := []byte(`{"k\u0065y":"v\u00e9","n":-1.5e3,"s":"plain"}`)
	p := &byteScanner{s: in}
	var keys, kept []string
	var keyViews [][]byte
	p.eachMember(func(key []byte) {
		keyViews = append(keyViews, key)
		keys = append(keys, string(key))
		if p.peek() == '"' {
			kept = append(kept, p.keep(p.str()))
		} else {
			kept = append(kept, p.keep(p.number()))
		}
	})
	p.end()
	require.NoError(t, p.err)
	require.Equal(t, []string{"key", "n", "s"}, keys)
	for i := range in {
		in[i] = 'X'
	}
	require.Equal(t, []string{"v\u00e9", "-1.5e3", "plain"}, kept)
	require.Equal(t, "key", string(keyViews[0]), "a key with escapes is its own copy")
}

// specialBytes' lowest set bit is the first special byte of the word,
// whatever bytes come before it (plain) and after it (any): the borrows of
// its arithmetic run upwards only.
func TestSpecialBytesFirst(t *testing.T) {
	after := []byte{'a', '"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xff}
	plain := []byte{'a', ' ', '!', '~', 0x7f, '0'}
	for c := 0; c < 256; c++ {
		for k := 0; k < 8; k++ {
			for _, a := range after {
				for _, pl := range plain {
					w := bytes.Repeat([]byte{pl}, 8)
					w[k] = byte(c)
					for j := k + 1; j < 8; j++ {
						w[j] = a
					}
					first := 8
					for i, b := range w {
						if strSpecial[b] {
							first = i
							break
						}
					}
					m := specialBytes(load64(w, 0))
					require.Equal(t, first, bits.TrailingZeros64(m)/8, "%q", w)
				}
			}
		}
	}
}

// The eight-byte test agrees with the byte table on every word it is shown.
func TestHasSpecialByte(t *testing.T) {
	words := []string{"abcdefgh", `abc"efgh`, `abc\efgh`, "abc\x1fefgh", "abc\x80efgh", "\x00bcdefgh", "abcdefg\xff",
		"ABCDEFGH", "        ", "!#$%&'()", "~~~~~~~~", "\x20\x20\x20\x20\x20\x20\x20\x21"}
	for c := 0; c < 256; c++ {
		words = append(words, strings.Repeat("a", 7)+string(rune(0))[:0]+string([]byte{byte(c)}), string([]byte{byte(c)})+strings.Repeat("z", 7))
	}
	for _, w := range words {
		want := false
		for i := 0; i < 8; i++ {
			want = want || strSpecial[w[i]]
		}
		require.Equal(t, want, hasSpecialByte(load64(w, 0)), "%q", w)
	}
}

// A key a streamed byteScanner hands out is its own copy: reading the
// member's value moves the scanner through later windows, whose arrays are
// reused, and the key is still what it was. A value's view is valid until
// the next call.
func TestStreamedKeySurvivesItsValue(t *testing.T) {
	body := `{"orderno":"` + strings.Repeat("v", 40) + `","name":[1,2,{"x":"y"}],"email":"a@b.c"}`
	for _, chunk := range []int{1, 3, 8} {
		src := &windowReader{r: strings.NewReader(body), chunk: chunk, keep: minTokenKeep}
		p := &byteScanner{src: src, maxValue: 64}
		var keys, values []string
		p.eachMember(func(key []byte) {
			v := string(p.skip())
			keys = append(keys, string(key)) // after the value was read
			values = append(values, v)
		})
		p.end()
		require.NoError(t, p.err, "chunk %d", chunk)
		require.Equal(t, []string{"orderno", "name", "email"}, keys, "chunk %d", chunk)
		require.Equal(t, `"a@b.c"`, values[2], "chunk %d", chunk)
	}
}
