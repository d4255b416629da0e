package jsonscan

import (
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Text is the input a Scanner reads: a string, or bytes read without a
// copy.
type Text interface{ ~string | ~[]byte }

// Scanner reads JSON (RFC 8259) in one pass over a string, bytes or a
// stream, checking the syntax as it goes. It knows nothing of what the
// JSON means: its caller walks the values it wants (Members, Elements,
// Str, Number, Skip) and keeps what it needs. Strings without escapes and
// numbers come back as pieces of the input, so a valid input costs no
// allocation per value. The first syntax error stops it: every later call
// returns at once, and Err reports it.
//
// Over bytes, what it returns is a view, not a copy: of the input, or, for
// a string with escapes, of a scratch buffer that the next such string
// overwrites; from a stream, of a window that the scanner reuses once it
// moves on. A caller copies what it keeps (Keep) before its next call;
// keys stay valid while the input does (a streamed key: until the next key
// of its object). Over a string, what it returns shares memory with the
// input.
//
// Strings decode as encoding/json decodes them: invalid UTF-8 and lone
// surrogates become U+FFFD (NotUTF8 tells when). A Scanner is not safe for
// concurrent use.
type Scanner[T Text] struct {
	s   T
	i   int
	err error
	// base is the offset of s in the whole input, and src the rest of it,
	// when the input is read from a stream a window at a time (which needs
	// maxValue > 0); nil when s is the whole input.
	base int
	src  *windowReader
	// head is how much Skip returns of a value that spans windows of a
	// stream; capture collects those bytes while Skip reads the value.
	head    int
	capture *[]byte
	arena   stringArena // the copies Keep makes
	// midToken is set when the window s ends inside a string or number
	// token, which windowReader does only past the token's first
	// maxValue+1 bytes: Str and Number then read on into the next window.
	midToken bool

	// maxValue, when > 0, is the longest string or number (in bytes of
	// JSON text, quotes excluded) that Str and Number return: a longer one
	// is told to onLong with its JSON pointer, sets long and reads as empty.
	maxValue int
	long     bool // the last Str or Number was longer than maxValue
	// notUTF8 is set when the last Str held invalid UTF-8 or a \u escape
	// of an unpaired surrogate, which it decoded as U+FFFD. Found while
	// decoding, in the same pass; never set by a number.
	notUTF8 bool
	// onLong, when set, is told of each value longer than maxValue (key
	// false: pointer is the value's) and each such key (key true: pointer
	// is its object's).
	onLong  func(pointer string, key bool)
	path    []pathStep[T] // where the scanner is, for the pointer of a long value
	inKey   bool          // Str is reading a key
	scratch []byte        // the decoded text of the last string with escapes (over bytes)
}

// New returns a Scanner of s, which must not change while the Scanner and
// what it returned are in use.
func New[T Text](s T) *Scanner[T] {
	return &Scanner[T]{s: s}
}

// NewStream returns a Scanner of what it reads from r, about chunk bytes
// at a time (Chunk, but for tests), holding about two windows of the input
// in memory whatever the bytes. Its caller sets Limits, with a MaxValue,
// before the first read: a value longer than it may be cut between
// windows, and is reported as long, never returned.
func NewStream(r io.Reader, chunk int) *Scanner[[]byte] {
	return &Scanner[[]byte]{src: &windowReader{r: r, chunk: chunk, keep: minTokenKeep}}
}

// Limits bound what a Scanner returns of input that may be hostile.
type Limits struct {
	// MaxValue, when > 0, is the longest string, number or key (in bytes
	// of JSON text, quotes excluded) that Str and Number return, and that
	// Members hands out: a longer one reads as empty, sets Long and is
	// told to OnLong.
	MaxValue int
	// Head is how much Skip returns of a value that spans windows of a
	// stream (the rest is read through, not kept).
	Head int
	// OnLong, when set, is told of each value longer than MaxValue, with
	// its JSON pointer (RFC 6901) and key false, and of each such key, with
	// its object's pointer and key true.
	OnLong func(pointer string, key bool)
}

// SetLimits sets the limits of what follows; before the first read, for a
// stream.
func (p *Scanner[T]) SetLimits(l Limits) {
	p.maxValue, p.head, p.onLong = l.MaxValue, l.Head, l.OnLong
	if p.src != nil {
		p.src.keep = tokenKeep(l.MaxValue)
	}
}

// Err returns the first syntax error, with its offset in the input, or
// nil.
func (p *Scanner[T]) Err() error { return p.err }

// ReadErr returns the error, other than io.EOF, that ended the reading of
// a stream, or nil. The input then reads as cut short there, which is
// also a syntax error (Err).
func (p *Scanner[T]) ReadErr() error {
	if p.src == nil {
		return nil
	}
	return p.src.err
}

// Long reports whether the last Str or Number (or key) was longer than
// Limits.MaxValue, and so returned empty.
func (p *Scanner[T]) Long() bool { return p.long }

// NotUTF8 reports whether the last Str held invalid UTF-8 or a \u escape
// of an unpaired surrogate, which it returned as U+FFFD, as encoding/json
// does: two different texts then read alike, so a caller that keeps the
// string as an identity refuses it. Meaningless when Long.
func (p *Scanner[T]) NotUTF8() bool { return p.notUTF8 }

// pathStep is one level of a JSON pointer: an object's key, or an array's
// index when index >= 0. own holds a streamed key's copy (see setKey),
// kept for the next object at this depth.
type pathStep[T Text] struct {
	key   T
	index int
	own   []byte
}

// MaxDepth bounds nesting, as encoding/json does, so that hostile input
// cannot exhaust the stack (or, streamed, the memory): Skip finds a syntax
// error in a value that nests more than MaxDepth arrays and objects
// (counted from the value it reads: the levels its caller walks with
// Members and Elements are not counted).
const MaxDepth = 10000

// failAt records the first syntax error at an offset of the whole input.
func (p *Scanner[T]) failAt(off int, msg string) {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: %s", off, msg)
	}
	p.i = len(p.s)
}

// tooLong reports the value (or key) just read as longer than maxValue.
func (p *Scanner[T]) tooLong() {
	p.long = true
	if p.onLong == nil {
		return
	}
	if p.inKey {
		p.onLong(p.pointer(len(p.path)-1), true)
		return
	}
	p.onLong(p.pointer(len(p.path)), false)
}

// pointer is the JSON pointer (RFC 6901) of the first n steps of path.
func (p *Scanner[T]) pointer(n int) string {
	var b strings.Builder
	for _, st := range p.path[:n] {
		b.WriteByte('/')
		if st.index >= 0 {
			b.WriteString(strconv.Itoa(st.index))
			continue
		}
		for i := 0; i < len(st.key); i++ { // RFC 6901 section 3: ~ and / escaped
			switch c := st.key[i]; c {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// fail records the first syntax error.
func (p *Scanner[T]) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: %s", p.base+p.i, fmt.Sprintf(format, args...))
	}
	p.i = len(p.s)
}

// more moves a streaming scanner to its next window when the current one is
// used up, and reports whether input remains. Windows end only before a
// comma outside a string, where every caller is between two tokens.
func (p *Scanner[T]) more() bool {
	for p.i >= len(p.s) {
		if p.src == nil || p.err != nil {
			return false
		}
		w, mid, ok := p.src.next()
		if !ok {
			return false
		}
		p.midToken = mid
		if c := p.capture; c != nil && len(*c) < p.head {
			*c = append(*c, w[:min(len(w), p.head-len(*c))]...)
		}
		p.base += len(p.s)
		p.s, p.i = T(w), 0
	}
	return true
}

// ws skips white space; compact JSON has none, so a byte above ' ' (never
// white space) returns at once.
func (p *Scanner[T]) ws() {
	if p.i < len(p.s) && p.s[p.i] > ' ' {
		return
	}
	p.blanks()
}

// blanks is ws past its first byte.
func (p *Scanner[T]) blanks() {
	for p.i < len(p.s) || p.more() {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value after white space (which
// it consumes), or 0 at the end of the input (or after a syntax error): a
// caller tells the value's type by it ('{', '[', '"', '-' or a digit, 't',
// 'f', 'n') before it reads the value. Compact JSON has no white space, so
// a byte above ' ' (never white space) is returned at once.
func (p *Scanner[T]) Peek() byte {
	if p.i < len(p.s) && p.s[p.i] > ' ' {
		return p.s[p.i]
	}
	p.blanks()
	if p.i < len(p.s) || p.more() {
		return p.s[p.i]
	}
	return 0
}

// End records a syntax error when anything but white space follows the
// value read (a NUL byte too): the caller calls it after the top-level
// value, before it trusts what it read.
func (p *Scanner[T]) End() {
	if p.err == nil && !p.atEnd() {
		p.fail("data after the top-level value")
	}
}

// atEnd reports whether only white space is left: a NUL byte is data,
// though peek returns 0 for it as for the end.
func (p *Scanner[T]) atEnd() bool {
	p.ws()
	return p.i >= len(p.s) && !p.more()
}

// next consumes c if it is the very next byte (small enough to inline:
// structural bytes in compact JSON cost no call).
func (p *Scanner[T]) next(c byte) bool {
	if p.is(c) {
		p.i++
		return true
	}
	return false
}

// is reports whether c is the very next byte.
func (p *Scanner[T]) is(c byte) bool {
	return p.i < len(p.s) && p.s[p.i] == c
}

// expect consumes c (never white space) after white space.
func (p *Scanner[T]) expect(c byte) bool {
	if p.Peek() != c {
		p.unexpected(fmt.Sprintf("%q", c))
		return false
	}
	p.i++
	return true
}

// unexpected records a syntax error naming what was found.
func (p *Scanner[T]) unexpected(want string) {
	if p.i >= len(p.s) && !p.more() {
		p.fail("unexpected end of input, want %s", want)
		return
	}
	p.fail("unexpected %q, want %s", p.s[p.i], want)
}

// Members reads the object that starts here (Peek is '{'), calling f for
// every key in order, duplicates included, with the scanner at the key's
// value; f must consume the value (Str, Number, Skip, Members, Elements).
// A key stays valid while the input does (from a stream: until the next
// key of its object).
func (p *Scanner[T]) Members(f func(key T)) {
	if p.maxValue == 0 { // no cap, no pointer to name
		p.members(f)
		return
	}
	n := len(p.path)
	p.push(-1)
	p.members(f)
	p.path = p.path[:n]
}

// push adds a step to the path, reusing the room (and the key buffer) a
// step left at that depth.
func (p *Scanner[T]) push(index int) {
	n := len(p.path)
	if n == cap(p.path) {
		p.path = append(p.path, pathStep[T]{})
	}
	p.path = p.path[:n+1]
	st := &p.path[n]
	st.key, st.index = st.key[:0], index
}

// setKey puts key on the path's last step and returns the key to hand to
// the member's callback. A streamed key is copied into the step's own
// buffer, and that copy is handed out: its window is reused once the
// scanner moves to the next one, which reading the member's value may do
// (and a view would otherwise hold its window for as long as its object is
// open).
func (p *Scanner[T]) setKey(key T) T {
	st := &p.path[len(p.path)-1]
	if p.src == nil {
		st.key = key
		return key
	}
	st.own = append(st.own[:0], key...)
	st.key = T(st.own)
	return st.key
}

// members is Members with the object's step on the path.
func (p *Scanner[T]) members(f func(key T)) {
	if !p.expect('{') {
		return
	}
	if p.Peek() == '}' {
		p.i++
		return
	}
	for p.err == nil {
		if !p.is('"') && p.Peek() != '"' {
			p.unexpected("a string key")
			return
		}
		p.inKey = true
		key := p.Str()
		p.inKey = false
		if p.maxValue > 0 { // always, for a stream
			key = p.setKey(key)
		}
		if !p.next(':') && !p.expect(':') {
			return
		}
		p.ws()
		f(key)
		if p.next(',') {
			continue
		}
		switch p.Peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return
		default:
			p.unexpected("',' or '}'")
		}
	}
}

// Elements reads the array that starts here (Peek is '['), calling f for
// every element with its index; f must consume the element.
func (p *Scanner[T]) Elements(f func(i int)) {
	if p.maxValue == 0 {
		p.elements(f)
		return
	}
	n := len(p.path)
	p.push(0)
	p.elements(f)
	p.path = p.path[:n]
}

// elements is Elements with the array's step on the path.
func (p *Scanner[T]) elements(f func(i int)) {
	if !p.expect('[') {
		return
	}
	if p.Peek() == ']' {
		p.i++
		return
	}
	for i := 0; p.err == nil; i++ {
		if p.maxValue > 0 {
			p.path[len(p.path)-1].index = i
		}
		p.ws()
		f(i)
		if p.next(',') {
			continue
		}
		switch p.Peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return
		default:
			p.unexpected("',' or ']'")
		}
	}
}

// Skip consumes any value, checking its syntax, and returns its JSON text.
// A value that spans windows of a stream returns only its first
// Limits.Head bytes.
func (p *Scanner[T]) Skip() T {
	start, base := p.i, p.base
	if p.src == nil {
		p.value(0)
		return p.s[start:p.i]
	}
	head := append([]byte(nil), p.s[start:min(len(p.s), start+p.head)]...)
	p.capture = &head
	p.value(0)
	p.capture = nil
	if p.base == base {
		return p.s[start:p.i]
	}
	return T(head[:min(len(head), p.base+p.i-(base+start))])
}

// SkipText is Skip returning a copy of the text, of at most Limits.Head
// bytes when Head > 0 (what an error message quotes).
func (p *Scanner[T]) SkipText() string {
	t := p.Skip()
	if p.head > 0 && len(t) > p.head {
		t = t[:p.head]
	}
	return string(t)
}

// Keep returns a copy of text the scanner returned (a string, number or
// key), for a caller to keep past its next call: many copies share one
// allocation.
func (p *Scanner[T]) Keep(text T) string {
	return p.arena.str([]byte(text))
}

// value consumes any value, inside depth arrays and objects.
func (p *Scanner[T]) value(depth int) {
	switch c := p.Peek(); {
	case (c == '{' || c == '[') && depth >= MaxDepth:
		p.fail("nesting deeper than %d", MaxDepth)
	case c == '{':
		p.Members(func(T) { p.value(depth + 1) })
	case c == '[':
		p.Elements(func(int) { p.value(depth + 1) })
	case c == '"':
		p.Str()
	case c == '-' || '0' <= c && c <= '9':
		p.Number()
	case c == 't':
		p.literal("true")
	case c == 'f':
		p.literal("false")
	case c == 'n':
		p.literal("null")
	default:
		p.unexpected("a JSON value")
	}
}

// literal consumes true, false or null.
func (p *Scanner[T]) literal(word string) {
	if len(p.s)-p.i >= len(word) && string(p.s[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return
	}
	p.unexpected(word)
}

// Number consumes a number (RFC 8259 grammar: -? int frac? exp?; Peek is
// '-' or a digit) and returns its text, or an empty one (Long) when it is
// longer than Limits.MaxValue.
func (p *Scanner[T]) Number() T {
	p.long, p.notUTF8 = false, false
	start, base := p.i, p.base
	p.optional('-')
	if !p.intPart() || !p.fraction() || !p.exponent() {
		p.unexpected("a digit")
		return p.s[:0]
	}
	if p.base != base || p.maxValue > 0 && p.i-start > p.maxValue {
		p.tooLong() // a token spans windows only past maxValue bytes
		return p.s[:0]
	}
	return p.s[start:p.i]
}

// intPart consumes a number's integer part: 0, or digits.
func (p *Scanner[T]) intPart() bool {
	return p.optional('0') || p.digits() > 0
}

// fraction consumes a number's fraction, if any; false when its dot has no
// digit after it.
func (p *Scanner[T]) fraction() bool {
	return !p.optional('.') || p.digits() > 0
}

// exponent consumes a number's exponent, if any; false when its e has no
// digit after it (or after its sign).
func (p *Scanner[T]) exponent() bool {
	if !p.optional('e') && !p.optional('E') {
		return true
	}
	if !p.optional('+') {
		p.optional('-')
	}
	return p.digits() > 0
}

// optional consumes c if it is the token's next byte.
func (p *Scanner[T]) optional(c byte) bool {
	if p.inToken() && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// digits consumes a run of digits and returns its length.
func (p *Scanner[T]) digits() int {
	n := 0
	for p.inToken() && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// inToken reports whether the token being read has a byte at i: in this
// window, or in the next when this one ends inside the token.
func (p *Scanner[T]) inToken() bool {
	return p.i < len(p.s) || p.midToken && p.more()
}

// Str consumes a string (Peek is '"') and returns its value: a piece of
// the input when it holds no escape, decoded otherwise (a copy over a
// string, the scratch buffer over bytes; a key's own copy for either).
// Invalid UTF-8 and lone surrogates become U+FFFD, as encoding/json does,
// and set NotUTF8. A string longer than Limits.MaxValue bytes (quotes
// excluded) is reported and reads as empty, with Long set (NotUTF8 then
// says nothing: a stream may cut such a string between the bytes of a
// rune).
func (p *Scanner[T]) Str() T {
	p.long, p.notUTF8 = false, false
	s := p.s
	start := p.i + 1 // after the opening quote
	j := start
	// Eight bytes at a time while none of them is special; then straight
	// to the first special one.
	for ; j+8 <= len(s); j += 8 {
		if m := specialBytes(load64(s, j)); m != 0 {
			j += bits.TrailingZeros64(m) / 8
			break
		}
	}
	for ; j < len(s); j++ {
		if c := s[j]; strSpecial[c] {
			if c == '"' {
				p.i = j + 1
				if p.maxValue > 0 && j-start > p.maxValue {
					p.tooLong()
					return s[:0]
				}
				return s[start:j]
			}
			p.i = j
			return p.escapedStr(start, true)
		}
	}
	if p.midToken { // the string goes on in the next window
		p.i = j
		return p.escapedStr(start, false)
	}
	p.i = start // the error's offset
	p.fail("unterminated string")
	return p.s[:0]
}

// load64 reads s[i:i+8] as a little-endian word (the compiler makes it one
// load).
func load64[T Text](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// specialBytes tells, on all eight bytes of w at once, whether any ends a
// plain string run: a quote, a backslash, a control character or a
// non-ASCII byte (the bytes strSpecial marks). It is a mask: its lowest
// set bit is the high bit of the first special byte of w (little-endian),
// and none is set when there is none; the bits above it may be set for
// bytes that are not special. Below the first special byte
// every byte is ASCII and at least 0x20, and not a quote or a backslash, so
// no subtraction there sets a high bit or borrows from the byte above:
// byte-wise, c - 0x20 has its high bit set for c < 0x20, (c ^ '"') - 1 for
// c == '"', (c ^ '\\') - 1 for c == '\\', and c itself for c >= 0x80.
func specialBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w | (w - 0x20*ones) | (w ^ '"'*ones - ones) | (w ^ '\\'*ones - ones)) & highs
}

// strSpecial marks the bytes that end the plain run of a string: the closing
// quote, a backslash, control characters and non-ASCII bytes (which are
// checked for valid UTF-8). Read-only after package initialisation.
var strSpecial = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

// escapedStr finishes a string that needs decoding (special: a special
// byte was seen) or goes on past its window, from its start. A string that
// spans windows is longer than maxValue: its value is not kept.
func (p *Scanner[T]) escapedStr(start int, special bool) T {
	abs := p.base + start
	buf := p.scratch[:0]
	if p.inKey { // a key outlives the next string's decoding
		buf = make([]byte, 0, min(p.i-start, Chunk)+16)
	}
	buf = append(buf, p.s[start:p.i]...)
	ok := true
	for ok {
		if p.i >= len(p.s) {
			if !p.midToken || !p.more() {
				break
			}
			buf = buf[:0] // too long to keep
		}
		switch c := p.s[p.i]; {
		case c == '"':
			return p.endStr(buf, abs)
		case c == '\\':
			special = true
			buf, ok = p.escape(buf)
		case c < 0x20:
			p.fail("control character %q in string", c)
			return p.s[:0]
		case c >= utf8.RuneSelf:
			special = true
			r, size := utf8.DecodeRune([]byte(p.s[p.i:min(len(p.s), p.i+utf8.UTFMax)]))
			buf = utf8.AppendRune(buf, r)
			if size == 1 { // RuneError: a byte >= 0x80 that starts no rune
				p.notUTF8 = true
			}
			p.i += size
		default:
			buf = append(buf, c)
			p.i++
		}
	}
	switch {
	case p.err != nil: // a bad escape
	case !special: // as Str reports a string without any special byte
		p.failAt(abs, "unterminated string")
	default:
		p.fail("unterminated string")
	}
	return p.s[:0]
}

// endStr consumes the closing quote of a string decoded into buf, which
// started at offset abs of the whole input.
func (p *Scanner[T]) endStr(buf []byte, abs int) T {
	raw := p.base + p.i - abs
	p.i++
	if !p.inKey {
		p.scratch = buf // reused by the next string
	}
	if p.maxValue > 0 && raw > p.maxValue {
		p.tooLong()
		return p.s[:0]
	}
	return T(buf)
}

// escapeByte is the byte each one-letter escape stands for (RFC 8259
// section 7); 0 marks the letters that are not one. Read-only.
var escapeByte = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape decodes the escape at i onto buf; false when the input ends
// inside it (unterminated) or it is invalid (p.err set).
func (p *Scanner[T]) escape(buf []byte) ([]byte, bool) {
	if p.i+1 >= len(p.s) {
		return buf, false
	}
	p.i += 2
	e := p.s[p.i-1]
	if b := escapeByte[e]; b != 0 {
		return append(buf, b), true
	}
	if e != 'u' {
		p.i--
		p.fail("invalid escape '\\%c'", e)
		return buf, false
	}
	r, ok := p.hex4()
	if ok && utf16.IsSurrogate(r) {
		r, ok = p.lowSurrogate(r)
	}
	return utf8.AppendRune(buf, r), ok
}

// lowSurrogate reads the \u escape that completes the high surrogate hi,
// and returns the pair's rune; U+FFFD, with notUTF8 set, when none follows
// (or hi is a low surrogate), leaving an escape that is not a low
// surrogate to stand alone.
func (p *Scanner[T]) lowSurrogate(hi rune) (rune, bool) {
	if len(p.s)-p.i < 6 || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
		p.notUTF8 = true
		return utf8.RuneError, true
	}
	save := p.i
	p.i += 2
	lo, ok := p.hex4()
	if !ok {
		return 0, false
	}
	if r := utf16.DecodeRune(hi, lo); r != utf8.RuneError {
		return r, true
	}
	p.i = save // not a pair: the next escape stands alone
	p.notUTF8 = true
	return utf8.RuneError, true
}

// hex4 reads the four hex digits of a \u escape.
func (p *Scanner[T]) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		p.fail("short \\u escape")
		return 0, false
	}
	var r rune
	for k := p.i; k < p.i+4; k++ {
		d := hexDigit[p.s[k]]
		if d < 0 {
			p.fail("invalid \\u escape")
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true
}

// hexDigit is the value of each hex digit, of either case; -1 marks the
// bytes that are not one. Read-only after package initialisation.
var hexDigit = func() (t [256]int8) {
	for c := range t {
		t[c] = -1
	}
	for i := range 16 {
		t["0123456789abcdef"[i]] = int8(i)
		t["0123456789ABCDEF"[i]] = int8(i)
	}
	return t
}()
