package zakat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/paygate-go/paygate/internal/jsonscan"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/testbound"
)

// requireSameAsJSON checks that streaming body, in windows of every given
// size, reports exactly what ValidateBatchJSON reports.
func requireSameAsJSON(t testing.TB, body []byte, chunks ...int) {
	t.Helper()
	requireSameAsJSONWith(t, Validator{}, body, chunks...)
}

// requireSameAsJSONWith is requireSameAsJSON with rules (a value cap).
func requireSameAsJSONWith(t testing.TB, rules Validator, body []byte, chunks ...int) {
	t.Helper()
	batch, want := rules.ValidateBatchJSON(body)
	for _, chunk := range chunks {
		for name, r := range map[string]func() io.Reader{
			"whole reads":       func() io.Reader { return bytes.NewReader(body) },
			"one byte per read": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
		} {
			n, got := validateStream(r(), chunk, rules)
			requireSameError(t, want, got, "%s, chunk %d", name, chunk)
			if want == nil {
				require.Equal(t, len(batch.Transactions), n, "%s, chunk %d", name, chunk)
			}
		}
	}
}

// requireSameError compares two validation results problem by problem.
func requireSameError(t testing.TB, want, got error, msg string, args ...any) {
	t.Helper()
	if want == nil {
		require.NoError(t, got, append([]any{msg}, args...)...)
		return
	}
	var w, g *ValidationError
	require.True(t, errors.As(want, &w))
	require.True(t, errors.As(got, &g), "%v", got)
	require.Equal(t, w.Problems, g.Problems, append([]any{msg}, args...)...)
}

// Streaming gives ValidateBatchJSON's answer on every test file, every
// schema-agreement case and inputs built to put a window end in every kind
// of place.
func TestValidateBatchReaderMatchesJSON(t *testing.T) {
	files, err := filepath.Glob("testdata/webhook/*.json")
	require.NoError(t, err)
	bodies := [][]byte{Validator{}.Schema()} // once zakat/testdata/webhook/schema.json, still a test body
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		bodies = append(bodies, b)
	}
	for _, m := range agreementCorpus() {
		bodies = append(bodies, m.apply(t, Agencies()))
	}
	long := strings.Repeat(`1,`, 200) + `1`
	for _, s := range []string{
		``, ` `, `[]`, `{}`, `{"transactions":[]}`, `{"transactions":[]} x`, `{"transactions":[1,2,3]}`,
		`{"x":[` + long + `],"transactions":[]}`,
		`{"transactions":[],"x":[` + long + `]}`,
		`{"transactions":[` + long + `]}`,
		`{"transactions":"` + strings.Repeat(`a,b\",`, 100) + `"}`,
		`{"transactions":[{"orderno":"a,b","agency":"BANK"},{"orderno":"a,b"}]}`,
		`{"transactions":[-,1]}`, `{"transactions":[1.,2]}`, `{"transactions":[tru,e]}`, `{,}`, `{"a":1,}`,
		`{"transactions":[{"amount":1e,"orderno":"x"}]}`, `{"transactions":[{"orderno":"\u00e9,\u002c"}]`,
		`{"transactions":[],"transactions":[` + long + `]}`, `{"$schema":[` + long + `],"transactions":[]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + strings.Repeat("é,", 50) + `"}}]}`,
		`{"transactions":[` + strings.Repeat(`{"orderno":"same"},`, 30) + `{"orderno":"same"}]}`,
	} {
		bodies = append(bodies, []byte(s))
	}
	bodies = append(bodies, benchBatch(300))
	for _, b := range bodies {
		requireSameAsJSON(t, b, 1, 2, 7, 64, 4096, jsonscan.Chunk)
	}
	// With a small value cap, windows end inside long tokens too.
	bodies = append(bodies, longValueBodies()...)
	for _, maxValue := range []int{1, 3, 10, 64} {
		capped := Validator{}.WithMaxValueBytes(maxValue)
		for _, b := range bodies {
			requireSameAsJSONWith(t, capped, b, 1, 2, 7, 64, 4096)
		}
	}
}

// longValueBodies are inputs with long strings, numbers and keys, valid and
// broken everywhere in and after them.
func longValueBodies() [][]byte {
	long := strings.Repeat("abcdefgh", 20)
	digits := strings.Repeat("1234567890", 20)
	escapes := strings.Repeat(`\n\u00e9\"\ud83d\ude00\\`, 20) // no plain byte in it
	var out [][]byte
	for _, s := range []string{
		`{"transactions":[{"orderno":"` + long + `","name":"` + long + `"}]}`,
		`{"transactions":[{"orderno":"x","amount":` + digits + `}]}`,
		`{"transactions":[{"orderno":"x","amount":` + digits + `.5e+3}]}`,
		`{"transactions":[{"orderno":"x","amount":` + digits + `.}]}`,
		`{"transactions":[{"orderno":"x","amount":` + digits + `e`,
		`{"transactions":[{"orderno":"x","amount":` + digits + `x}]}`,
		`{"transactions":[{"orderno":"x","amount":-` + digits,
		`{"transactions":[{"orderno":` + digits + `}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + `\u00e9\ud83d\ude00` + long + `"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + `\q"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + `\u12zz"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + `\u12`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + `\`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + "é" + long,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + long + "\x01" + long + `"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + escapes + `"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + escapes + `\ud83d\u12zz"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + escapes + `\q"}}]}`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + escapes + `\u12`,
		`{"transactions":[{"orderno":"x","data":{"zakat_name":"` + escapes,
		`{"` + escapes + `":[1,2],"transactions":[]}`,
		`{"` + long + `":[1,2],"transactions":[]}`,
		`{"x":{"a/b~c":["` + long + `",` + digits + `]},"transactions":[]}`,
		`{"$schema":"` + long + `","transactions":[]}`,
		`"` + long + `"`, digits, `{"transactions":` + digits + `}`,
		`{"transactions":[` + strings.Repeat("t", 300) + `]}`,
		`{"transactions":[true` + strings.Repeat("x", 300) + `]}`,
		`{"transactions":["` + long + `"x]}`,
		`{"transactions":[{"orderno":"x","amount":[` + digits + `,"` + long + `"]}]}`,
		`{"transactions":[` + strings.Repeat(" ", 300) + `]}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// A value longer than the cap is a problem at its JSON pointer, and only
// that: the value is read through, the rest of the batch is still checked.
// Both readers agree, the stream in windows smaller than the value.
func TestValidateBatchValueCap(t *testing.T) {
	const maxValue = 100
	long := strings.Repeat("x", maxValue+1)
	tooLong := fmt.Sprintf(ruleTooLong, maxValue)
	for _, tc := range []struct {
		name   string
		edit   func(batch map[string]any, tx map[string]any)
		field  string
		rule   string
		within bool // the value is exactly at the cap: no problem
	}{
		{"orderno", func(_, tx map[string]any) { tx["orderno"] = long }, "/transactions/0/orderno", tooLong, false},
		{"name at the cap", func(_, tx map[string]any) { tx["name"] = long[1:] }, "", "", true},
		{"amount", func(_, tx map[string]any) { tx["amount"] = json.Number(strings.Repeat("9", maxValue+1)) }, "/transactions/0/amount", tooLong, false},
		{"data field", func(_, tx map[string]any) { tx["data"].(map[string]any)["zakat_city"] = long }, "/transactions/0/data/zakat_city", tooLong, false},
		{"escaped string", func(_, tx map[string]any) { tx["name"] = strings.Repeat("\n", maxValue/2+1) }, "/transactions/0/name", tooLong, false},
		{"unknown member", func(b, _ map[string]any) { b["x"] = map[string]any{"a/b~c": []any{0, long}} }, "/x/a~1b~0c/1", tooLong, false},
		{"key", func(_, tx map[string]any) { tx[long] = 1 }, "/transactions/0", fmt.Sprintf(ruleKeyTooLong, maxValue), false},
	} {
		batch := validBatchMap(1)
		tc.edit(batch, batch["transactions"].([]any)[0].(map[string]any))
		body, err := json.Marshal(batch)
		require.NoError(t, err)
		rules := Validator{}.WithMaxValueBytes(maxValue)
		_, whole := rules.ValidateBatchJSON(body)
		n, streamed := validateStream(bytes.NewReader(body), 16, rules)
		require.Equal(t, 1, n, tc.name)
		for _, err := range []error{whole, streamed} {
			if tc.within {
				require.NoError(t, err, tc.name)
				continue
			}
			require.Equal(t, []FieldError{{Field: tc.field, Rule: tc.rule}}, problemsOf(t, err), tc.name)
		}
	}
}

// An error reading the body is returned as it is, never a *ValidationError
// of the bytes read before it, io.ErrUnexpectedEOF included (what net/http
// gives for a body shorter than its Content-Length), whether the bytes
// before it are a prefix of the batch or all of it.
func TestValidateBatchReaderReadErrors(t *testing.T) {
	body := benchBatch(20)
	for _, tc := range []struct {
		name   string
		cause  error
		before []byte
	}{
		{name: "a reset mid-body", cause: errors.New("connection reset by peer"), before: body[:len(body)/2]},
		{name: "unexpected EOF mid-body", cause: io.ErrUnexpectedEOF, before: body[:len(body)/2]},
		{name: "unexpected EOF inside a string", cause: io.ErrUnexpectedEOF, before: body[:bytes.IndexByte(body, '@')]},
		{name: "unexpected EOF after the whole batch", cause: io.ErrUnexpectedEOF, before: body},
		{name: "unexpected EOF before any byte", cause: io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{16, jsonscan.Chunk} {
				r := io.MultiReader(bytes.NewReader(tc.before), iotest.ErrReader(tc.cause))
				_, err := validateStream(r, chunk, Validator{})
				require.ErrorIs(t, err, tc.cause, "chunk %d", chunk)
				var ve *ValidationError
				require.False(t, errors.As(err, &ve), "chunk %d: a read error reported as %v", chunk, err)
			}
		})
	}
}

// A cap too large to reach (math.MaxInt as "no cap") streams as
// ValidateBatchJSON reads: the stream keeps a token's first cap+1 bytes
// before it may end a window inside it, a sum that must not wrap.
func TestValidateBatchReaderLargestCaps(t *testing.T) {
	body := benchBatch(50)
	for _, tc := range []struct {
		name     string
		maxValue int
	}{
		{name: "math.MaxInt", maxValue: math.MaxInt},
		{name: "math.MaxInt - 1", maxValue: math.MaxInt - 1},
		{name: "1 TiB", maxValue: 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireSameAsJSONWith(t, Validator{}.WithMaxValueBytes(tc.maxValue), body, 16, 1000, jsonscan.Chunk)
		})
	}
}

// Nesting deeper than jsonscan.MaxDepth arrays or objects inside a member is a
// syntax error, for both readers; at the limit it is read.
func TestValidateBatchDepthCap(t *testing.T) {
	nest := func(depth int) []byte {
		return []byte(`{"x":` + strings.Repeat("[", depth) + "0" + strings.Repeat("]", depth) + `,"transactions":[]}`)
	}
	_, err := Validator{}.ValidateBatchJSON(nest(jsonscan.MaxDepth + 1))
	require.ErrorContains(t, err, "nesting deeper than 10000")
	_, err = validateStream(bytes.NewReader(nest(jsonscan.MaxDepth+1)), 64, Validator{})
	require.ErrorContains(t, err, "nesting deeper than 10000")
	_, err = Validator{}.ValidateBatchJSON(nest(jsonscan.MaxDepth))
	require.NoError(t, err)
}

// Anything but white space after the batch is a syntax error for both
// readers, a NUL byte too.
func TestValidateBatchTrailingBytes(t *testing.T) {
	for _, tail := range []string{"\x00", " x", "{}", " \n\x00 "} {
		body := []byte(`{"transactions":[]}` + tail)
		_, whole := Validator{}.ValidateBatchJSON(body)
		_, streamed := validateStream(bytes.NewReader(body), 4, Validator{})
		for _, err := range []error{whole, streamed} {
			probs := problemsOf(t, err)
			require.Len(t, probs, 1, "%q", tail)
			require.Contains(t, probs[0].Rule, "data after the top-level value", "%q", tail)
		}
	}
	_, err := Validator{}.ValidateBatchJSON([]byte(`{"transactions":[]} ` + "\n\t\r"))
	require.NoError(t, err)
}

// FuzzValidateBatchReader: for any input, streaming in small windows reports
// what ValidateBatchJSON reports.
func FuzzValidateBatchReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/webhook/*.json")
	f.Add(Validator{}.Schema()) // once zakat/testdata/webhook/schema.json, still a seed
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"x":[1,2,3],"transactions":[{"orderno":"a"},{"orderno":"a"}]}`))
	for _, b := range longValueBodies() {
		f.Add(b)
	}
	for _, tc := range append(notUTF8Texts(), utf8Texts()...) {
		f.Add(bodyWithText(f, []string{"data", "zakat_name"}, tc.text))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			requireSameAsJSON(t, body, 1, 5, 64)
			requireSameAsJSONWith(t, Validator{}.WithMaxValueBytes(3), body, 1, 5, 64)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("slow on %d bytes", len(body))
		}
	})
}

// nestedReader writes, without holding it, an object nested depth times,
// each level's key followed by filler (so that every key is in a window of
// its own), and measures the live heap when it reaches the deepest level,
// where every object is open.
type nestedReader struct {
	depth, level int
	filler       string
	pending      string
	closed       bool
	liveAtDepth  uint64 // heap in use, after a collection, at the deepest level
}

func (r *nestedReader) Read(b []byte) (int, error) {
	for r.pending == "" {
		switch {
		case r.level < r.depth:
			r.level++
			r.pending = `{"k` + fmt.Sprint(r.level) + `":[` + r.filler + ","
		case !r.closed:
			r.closed = true
			r.liveAtDepth = testbound.LiveHeap()
			r.pending = "0" + strings.Repeat("]}", r.depth)
		default:
			return 0, io.EOF
		}
	}
	n := copy(b, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// ValidateBatchReader holds no window for the keys of the objects it is
// inside: 2,000 nested objects, each key in a window of its own (4 KiB
// windows, 8 KiB of filler a level, 16 MB in all), cost far less than the
// windows would (8 MB and more; before the keys were copied, a 500 MB body
// of that shape held about 440 MB).
func TestValidateBatchReaderNestedKeysHoldNoWindows(t *testing.T) {
	const depth, chunk = 2000, 4 << 10
	r := &nestedReader{depth: depth, filler: strings.Repeat("0,", 4<<10) + "0"}
	before := testbound.LiveHeap()
	_, err := validateStream(r, chunk, Validator{})
	require.ErrorContains(t, err, "/transactions", "the body was read to its end")
	require.True(t, r.closed)
	grown := int64(r.liveAtDepth) - int64(before)
	require.Less(t, grown, int64(depth*chunk/4), "at the deepest level the heap grew by %d bytes", grown)
}
