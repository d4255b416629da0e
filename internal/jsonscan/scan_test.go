package jsonscan

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

// The scanner's oracle is encoding/json, not a copy of the scanner: for
// any input, the scanner accepts exactly what json.Valid accepts (within
// MaxDepth, which both enforce), and the strings, numbers, keys and
// skipped texts it hands out are what encoding/json decodes. A walk reads
// an input the way a caller does and records what it was handed (a tree
// of the nodes below); the walks of the same input over a string, over
// bytes and over a stream in small windows must be equal, the walk
// without a value cap must agree with encoding/json, and the walks with a
// cap must be the walk without one with exactly the values longer than
// the cap read as empty and reported.

// strNode is a string the walk read with Str: its offset in the input and
// the length of its JSON text (quotes excluded), measured around the call.
type strNode struct {
	Off, Raw      int
	Text          string
	Long, NotUTF8 bool
	Reports       []report // what OnLong was told while it was read
}

// numNode is a number the walk read with Number.
type numNode struct {
	Off, Raw int
	Text     string
	Long     bool
	Reports  []report
}

// skipNode is a value the walk read with Skip: its offsets, and the text
// Skip returned cut to walkHead bytes (all that a stream keeps of it).
type skipNode struct {
	Off, End int
	Text     string
}

// member is one key of an object the walk read with Members, in order
// (duplicates too), with the length of the key's JSON text.
type member struct {
	Key        string
	KeyRaw     int
	KeyLong    bool
	KeyReports []report
	Value      any
}

// broken is a read that ended in a syntax error: its offsets and text are
// only what was read of the input, which a stream reads a window at a time.
type broken struct{}

// report is one call of OnLong.
type report struct {
	Pointer string
	Key     bool
}

// walkResult is what a walk of a whole input saw.
type walkResult struct {
	Tree  any // []member, []any, strNode, numNode, skipNode or broken
	Err   string
	Skips []report // the long values found inside skipped values
}

// walkHead is how much of a skipped value a walk records, and Limits.Head.
const walkHead = 40

// walker walks one input: it descends into objects and arrays, reads
// strings and numbers, and skips every other array element and anything
// deeper than three levels.
type walker[T Text] struct {
	t       *testing.T
	p       *Scanner[T]
	body    []byte
	pending []report // told to OnLong, not yet claimed by a node
	skips   []report
	path    []string // the walk's own JSON pointer, escaped steps
}

// walkOf walks p, a scanner of body, with the value cap maxValue.
func walkOf[T Text](t *testing.T, p *Scanner[T], body []byte, maxValue int) walkResult {
	w := &walker[T]{t: t, p: p, body: body}
	p.SetLimits(Limits{MaxValue: maxValue, Head: walkHead, OnLong: func(pointer string, key bool) {
		w.pending = append(w.pending, report{pointer, key})
	}})
	r := walkResult{Tree: w.value(0)}
	p.End()
	if err := p.Err(); err != nil {
		r.Err = err.Error()
	}
	r.Skips = append(w.skips, w.pending...)
	return r
}

// off is the scanner's offset in the whole input.
func (w *walker[T]) off() int { return w.p.base + w.p.i }

// take returns the reports not yet claimed.
func (w *walker[T]) take() []report {
	r := w.pending
	w.pending = nil
	return r
}

func (w *walker[T]) pointer() string {
	if len(w.path) == 0 {
		return ""
	}
	return "/" + strings.Join(w.path, "/")
}

func (w *walker[T]) value(depth int) any {
	if depth > 3 {
		return w.skip()
	}
	switch c := w.p.Peek(); {
	case c == '{':
		return w.object(depth)
	case c == '[':
		return w.array(depth)
	case c == '"':
		return w.str()
	case c == '-' || '0' <= c && c <= '9':
		return w.num()
	}
	return w.skip()
}

func (w *walker[T]) object(depth int) any {
	ms := []member{}
	prev := w.off() // the '{'; then the end of the last value
	w.p.Members(func(key T) {
		m := member{Key: string(key), KeyLong: w.p.Long(), KeyReports: w.take()}
		// Between prev and the value: '{' or ',', the key, ':' and white
		// space, so the key's quotes are the first and last of them.
		between := w.body[prev:w.off()]
		m.KeyRaw = bytes.LastIndexByte(between, '"') - bytes.IndexByte(between, '"') - 1
		w.path = append(w.path, escapePointer(m.Key))
		m.Value = w.value(depth + 1)
		w.path = w.path[:len(w.path)-1]
		prev = w.off()
		ms = append(ms, m)
	})
	return ms
}

func (w *walker[T]) array(depth int) any {
	es := []any{}
	w.p.Elements(func(i int) {
		w.path = append(w.path, strconv.Itoa(i))
		if i%2 == 1 {
			es = append(es, w.skip())
		} else {
			es = append(es, w.value(depth+1))
		}
		w.path = w.path[:len(w.path)-1]
	})
	return es
}

func (w *walker[T]) str() any {
	start := w.off()
	s := w.p.Str()
	if w.p.Err() != nil {
		return broken{}
	}
	n := strNode{Off: start, Raw: w.off() - start - 2, Text: string(s), Long: w.p.Long(), Reports: w.take()}
	n.NotUTF8 = w.p.NotUTF8() && !n.Long
	return n
}

func (w *walker[T]) num() any {
	start := w.off()
	s := w.p.Number()
	if w.p.Err() != nil {
		return broken{}
	}
	return numNode{Off: start, Raw: w.off() - start, Text: string(s), Long: w.p.Long(), Reports: w.take()}
}

// skip reads a value with Skip, and checks that what it returned is the
// start of the value's text and that any value it reported too long is
// inside it.
func (w *walker[T]) skip() any {
	start := w.off()
	t := string(w.p.Skip())
	for _, r := range w.pending {
		require.True(w.t, strings.HasPrefix(r.Pointer, w.pointer()), "%s reported inside the value at %s", r.Pointer, w.pointer())
	}
	w.skips = append(w.skips, w.take()...)
	if w.p.Err() != nil {
		return broken{}
	}
	end := w.off()
	require.True(w.t, strings.HasPrefix(string(w.body[start:end]), t), "Skip at %d returned %q", start, t)
	return skipNode{Off: start, End: end, Text: t[:min(len(t), walkHead)]}
}

// escapePointer escapes a key as a step of a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// capped is the walk without a cap, w, as a walk with cap maxValue must
// see it: every string, number or key longer than the cap read as empty,
// flagged Long and reported at its pointer (a key at its object's).
func capped(node any, maxValue int, path string) any {
	switch n := node.(type) {
	case []member:
		out := make([]member, len(n))
		for i, m := range n {
			if m.KeyRaw > maxValue {
				m.Key, m.KeyLong, m.KeyReports = "", true, []report{{path, true}}
			}
			m.Value = capped(m.Value, maxValue, path+"/"+escapePointer(m.Key))
			out[i] = m
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, e := range n {
			out[i] = capped(e, maxValue, path+"/"+strconv.Itoa(i))
		}
		return out
	case strNode:
		if n.Raw > maxValue {
			n.Text, n.Long, n.NotUTF8, n.Reports = "", true, false, []report{{path, false}}
		}
		return n
	case numNode:
		if n.Raw > maxValue {
			n.Text, n.Long, n.Reports = "", true, []report{{path, false}}
		}
		return n
	}
	return node
}

// decoded is a walk without a cap as encoding/json decodes the same input
// into any (with UseNumber), after checking each value it read against
// its own JSON text: a string is what encoding/json decodes of its text,
// and NotUTF8 what refNotUTF8 reads of it; a number is its text; a skipped
// value's text decodes as that value.
func decoded(t *testing.T, body []byte, node any) any {
	switch n := node.(type) {
	case []member:
		out := map[string]any{}
		for _, m := range n {
			out[m.Key] = decoded(t, body, m.Value) // the last of duplicate keys wins, as in encoding/json
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, e := range n {
			out[i] = decoded(t, body, e)
		}
		return out
	case strNode:
		text := body[n.Off : n.Off+n.Raw+2]
		require.Equal(t, decodeJSON(t, text), n.Text, "%q", text)
		require.Equal(t, refNotUTF8(string(text[1:len(text)-1])), n.NotUTF8, "NotUTF8 of %q", text)
		return n.Text
	case numNode:
		require.Equal(t, string(body[n.Off:n.Off+n.Raw]), n.Text)
		return json.Number(n.Text)
	case skipNode:
		return decodeJSON(t, body[n.Off:n.End])
	}
	t.Fatalf("a walk of valid JSON read %#v", node)
	return nil
}

// decodeJSON is what encoding/json decodes of one JSON value.
func decodeJSON(t *testing.T, text []byte) any {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v), "%q", text)
	return v
}

// nesting is how deeply body nests arrays and objects, counted apart from
// the scanner (exact for valid JSON, where brackets outside strings are
// structure).
func nesting(body []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// requireMatchesJSON checks the scanner against encoding/json on body:
// over bytes, a string and a stream (in windows of 1, 5 and 64 bytes),
// without a value cap and with caps of 3 and 64 bytes (a stream always has
// one).
func requireMatchesJSON(t *testing.T, body []byte) {
	t.Helper()
	valid := json.Valid(body)
	deep := nesting(body) > MaxDepth // json.Valid refuses it too; said here, not assumed

	// The whole input as one value: accepted exactly when encoding/json
	// accepts it, with the same error over every input.
	err := skipAll(New(body))
	require.Equal(t, valid && !deep, err == "", "syntax error: %s", err)
	require.Equal(t, err, skipAll(New(string(body))), "string input")
	for _, chunk := range []int{1, 64} {
		p := NewStream(bytes.NewReader(body), chunk)
		p.SetLimits(Limits{MaxValue: 64})
		require.Equal(t, err, skipAll(p), "stream in windows of %d", chunk)
	}

	free := walkOf(t, New(body), body, 0)
	require.Equal(t, free, walkOf(t, New(string(body)), body, 0), "string input, no cap")
	if !deep { // the walk counts depth from each value it skips: less than the whole
		require.Equal(t, valid, free.Err == "", "the walk's syntax error: %s", free.Err)
	}
	if valid && !deep {
		require.Equal(t, decodeJSON(t, body), decoded(t, body, free.Tree))
		require.Empty(t, free.Skips)
	}
	for _, maxValue := range []int{3, 64} {
		got := walkOf(t, New(body), body, maxValue)
		require.Equal(t, capped(free.Tree, maxValue, ""), got.Tree, "cap %d", maxValue)
		require.Equal(t, free.Err, got.Err, "cap %d", maxValue)
		require.Equal(t, got, walkOf(t, New(string(body)), body, maxValue), "string input, cap %d", maxValue)
		for _, chunk := range []int{1, 5, 64} {
			p := NewStream(bytes.NewReader(body), chunk)
			require.Equal(t, got, walkOf(t, p, body, maxValue), "stream in windows of %d, cap %d", chunk, maxValue)
		}
	}
}

// skipAll reads the whole input as one value and returns its syntax
// error, or "".
func skipAll[T Text](p *Scanner[T]) string {
	p.Skip()
	p.End()
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return ""
}

// scanCorpus are inputs for the scanner's tests: the webhook test files
// of the SDK, long values, and every kind of broken token.
func scanCorpus(tb testing.TB) [][]byte {
	files, err := filepath.Glob("../../zakat/testdata/webhook/*.json")
	require.NoError(tb, err)
	require.NotEmpty(tb, files, "the SDK's webhook test files moved")
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(tb, err)
		out = append(out, b)
	}
	long := strings.Repeat("abcdefgh", 20)
	digits := strings.Repeat("1234567890", 20)
	escapes := strings.Repeat(`\n\u00e9\"\ud83d\ude00\\`, 20) // no plain byte in it
	for _, s := range []string{
		``, ` `, `{}`, `[]`, `[1,"a",true,false,null,{"k":[-0.5e+3]}]`, ` {"a" : [ 1 , 2 ] } `,
		`"\u00e9\ud83d\ude00\ud83d\u0041\udc00\"\\\/\b\f\n\r\t"`, `"\ud83d"`, `"\ud83d\u12"`, `"\ud83d\uzzzz"`,
		"\"\xff\xfe a\"", "\"a\x01\"", `"\x"`, `"\`, `"abc`, `[1.]`, `[-]`, `[01]`, `[1e]`, `[1e+]`, `[.5]`,
		`[tru]`, `[nul`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `[1,]`, `{"a":1} x`, `{"a/b~c":["x"]}`,
		`{"k\u0065y":"v\u0061lue","k\ney":1}`, `{"a":1,"a":[2],"a":{"b":3}}`, "[]\x00", `-0`, `1E-7`, `[1.5e308,-1e-400]`,
		// Text that is not UTF-8 (NotUTF8), and near misses that are.
		"\"\xc3\"", "\"abc\xe2\x82\"", "\"\x80\"", "\"\xc0\xaf\"", "\"\xe0\x80\xaf\"", "\"\xf0\x80\x80\xaf\"",
		"\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "[\"\\n\xff\",\"ok\",\"\xe9\"]", "{\"k\xff\":\"v\"}",
		`"\udc00"`, `"\ude00\ud83d"`, `"\ud83d\ud83d\ude00"`, `"\ud83d\n"`, `"x\ud83d"`, `["\ud800","a"]`,
		`"\ufffd\ud83d\ude00"`, "\"\xef\xbf\xbd \xc3\xa9 \xf0\x9f\x98\x80\"",
		// Values longer than the caps, whole and broken, where a stream
		// cuts them between windows.
		`{"orderno":"` + long + `","name":"` + long + `"}`,
		`{"amount":` + digits + `}`, `{"amount":` + digits + `.5e+3}`, `{"amount":` + digits + `.}`,
		`{"amount":` + digits + `e`, `{"amount":` + digits + `x}`, `{"amount":-` + digits,
		`{"name":"` + long + `\u00e9\ud83d\ude00` + long + `"}`, `{"name":"` + long + `\q"}`,
		`{"name":"` + long + `\u12zz"}`, `{"name":"` + long + `\u12`, `{"name":"` + long + `\`, `{"name":"` + long,
		`{"name":"` + long + "é" + long, `{"name":"` + long + "\x01" + long + `"}`,
		`{"name":"` + escapes + `"}`, `{"name":"` + escapes + `\ud83d\u12zz"}`, `{"name":"` + escapes + `\q"}`,
		`{"name":"` + escapes + `\u12`, `{"name":"` + escapes, `{"` + escapes + `":[1,2],"x":[]}`,
		`{"` + long + `":[1,2],"x":[]}`, `{"x":{"a/b~c":["` + long + `",` + digits + `]},"y":[]}`,
		`"` + long + `"`, digits, `[` + strings.Repeat("t", 300) + `]`, `[true` + strings.Repeat("x", 300) + `]`,
		`["` + long + `"x]`, `[[` + digits + `,"` + long + `"],{"a":{"b":{"c":{"d":"` + long + `"}}}}]`,
		`[` + strings.Repeat(" ", 300) + `]`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// The scanner reads every input of the corpus as encoding/json does.
func TestScannerMatchesJSON(t *testing.T) {
	for _, body := range scanCorpus(t) {
		requireMatchesJSON(t, body)
	}
}

// Nesting: MaxDepth arrays and objects are read, one more is a syntax
// error, as for json.Valid, whether the innermost is empty or not.
func TestScannerDepth(t *testing.T) {
	nest := func(n int, open, inner, close string) []byte {
		return []byte(strings.Repeat(open, n) + inner + strings.Repeat(close, n))
	}
	for _, depth := range []int{MaxDepth, MaxDepth + 1} {
		for _, body := range [][]byte{
			nest(depth, "[", "", "]"),
			nest(depth-1, "[", "[0]", "]"),
			nest(depth-1, `{"a":`, "{}", "}"),
			nest(depth%2, "[", string(nest(depth/2, `{"a":[`, `"x"`, "]}")), "]"), // two levels a step
		} {
			require.Equal(t, nesting(body) <= MaxDepth, json.Valid(body), "json.Valid at depth %d", nesting(body))
			requireMatchesJSON(t, body)
		}
	}
}

// FuzzScannerMatchesJSON: for any input, the scanner (over bytes, a
// string, or a stream in small windows; with and without a value cap)
// accepts exactly what encoding/json accepts, hands out what it decodes,
// and reports exactly the values longer than the cap.
func FuzzScannerMatchesJSON(f *testing.F) {
	for _, b := range scanCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			requireMatchesJSON(t, body)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("slow on %d bytes", len(body))
		}
	})
}

// Over bytes, Str and Number return views, and Keep copies: a key and the
// values kept survive the input being overwritten, and a string with
// escapes is decoded.
func TestByteScannerKeep(t *testing.T) {
	in := []byte(`{"k\u0065y":"v\u00e9","n":-1.5e3,"s":"plain"}`)
	p := New(in)
	var keys, kept []string
	var keyViews [][]byte
	p.Members(func(key []byte) {
		keyViews = append(keyViews, key)
		keys = append(keys, string(key))
		if p.Peek() == '"' {
			kept = append(kept, p.Keep(p.Str()))
		} else {
			kept = append(kept, p.Keep(p.Number()))
		}
	})
	p.End()
	require.NoError(t, p.Err())
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

// specialBytes finds a special byte in a word exactly when the byte table
// does, on every word it is shown.
func TestSpecialBytesAny(t *testing.T) {
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
		require.Equal(t, want, specialBytes(load64(w, 0)) != 0, "%q", w)
	}
}

// A key a stream's Scanner hands out is its own copy: reading the
// member's value moves the scanner through later windows, whose arrays are
// reused, and the key is still what it was. A value's view is valid until
// the next call.
func TestStreamedKeySurvivesItsValue(t *testing.T) {
	body := `{"orderno":"` + strings.Repeat("v", 40) + `","name":[1,2,{"x":"y"}],"email":"a@b.c"}`
	for _, chunk := range []int{1, 3, 8} {
		p := NewStream(strings.NewReader(body), chunk)
		p.SetLimits(Limits{MaxValue: 64})
		p.src.keep = minTokenKeep // cut the long value between windows too
		var keys, values []string
		p.Members(func(key []byte) {
			v := string(p.Skip())
			keys = append(keys, string(key)) // after the value was read
			values = append(values, v)
		})
		p.End()
		require.NoError(t, p.Err(), "chunk %d", chunk)
		require.Equal(t, []string{"orderno", "name", "email"}, keys, "chunk %d", chunk)
		require.Equal(t, `"a@b.c"`, values[2], "chunk %d", chunk)
	}
}

// refNotUTF8 is the reference for Scanner.NotUTF8, read from a valid
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
