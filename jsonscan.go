package paygate

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonText is the input a jsonScan reads: a string, or bytes read without
// a copy.
type jsonText interface{ ~string | ~[]byte }

// jsonScan reads JSON (RFC 8259) in one pass over a string or bytes,
// checking the syntax as it goes. It knows nothing of what the JSON means:
// its caller walks the values it wants (eachMember, eachElement, str,
// number, skip) and keeps what it needs. Strings without escapes and
// numbers come back as pieces of the input, so a valid input costs no
// allocation per value. The first syntax error stops it.
//
// Over bytes (byteScanner), what it returns is a view, not a copy: of the
// input, or, for a string with escapes, of a scratch buffer that the next
// such string overwrites; from a stream, of a window that the scanner
// reuses once it moves on. A caller copies what it keeps (stringArena)
// before its next call; keys stay valid while the input does (a streamed
// key: until the next key of its object).
type jsonScan[T jsonText] struct {
	s   T
	i   int
	err error
	// base is the offset of s in the whole input, and src the rest of it,
	// when the input is read from a stream a window at a time (which needs
	// maxValue > 0); nil when s is the whole input.
	base int
	src  *windowReader
	// head is how much skip returns of a value that spans windows of a
	// stream; capture collects those bytes while skip reads the value.
	head    int
	capture *[]byte
	arena   stringArena // the copies keep makes
	// midToken is set when the window s ends inside a string or number
	// token, which windowReader does only past the token's first
	// maxValue+1 bytes: str and number then read on into the next window.
	midToken bool

	// maxValue, when > 0, is the longest string or number (in bytes of
	// JSON text, quotes excluded) that str and number return: a longer one
	// is told to onLong with its JSON pointer, sets long and reads as empty.
	maxValue int
	long     bool // the last str or number was longer than maxValue
	// notUTF8 is set when the last str held invalid UTF-8 or a \u escape
	// of an unpaired surrogate, which it decoded as U+FFFD: two different
	// texts then read alike, so a caller that keeps the string refuses it
	// (ruleUTF8). Found while decoding, in the same pass; never set by a
	// number.
	notUTF8 bool
	// onLong, when set, is told of each value longer than maxValue (key
	// false: pointer is the value's) and each such key (key true: pointer
	// is its object's).
	onLong  func(pointer string, key bool)
	path    []pathStep[T] // where the scanner is, for the pointer of a long value
	inKey   bool          // str is reading a key
	scratch []byte        // the decoded text of the last string with escapes (byteScanner)
}

// jsonScanner reads a string: what it returns shares memory with the input.
type jsonScanner = jsonScan[string]

// byteScanner reads bytes without copying them: what it returns is a view.
type byteScanner = jsonScan[[]byte]

// pathStep is one level of a JSON pointer: an object's key, or an array's
// index when index >= 0. own holds a streamed key's copy (see setKey),
// kept for the next object at this depth.
type pathStep[T jsonText] struct {
	key   T
	index int
	own   []byte
}

// maxJSONDepth bounds nesting, as encoding/json does, so hostile input cannot
// exhaust the stack (or, streamed, the memory): deeper input is a syntax
// error.
const maxJSONDepth = 10000

// failAt records the first syntax error at an offset of the whole input.
func (p *jsonScan[T]) failAt(off int, msg string) {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: %s", off, msg)
	}
	p.i = len(p.s)
}

// tooLong reports the value (or key) just read as longer than maxValue.
func (p *jsonScan[T]) tooLong() {
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
func (p *jsonScan[T]) pointer(n int) string {
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
func (p *jsonScan[T]) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: %s", p.base+p.i, fmt.Sprintf(format, args...))
	}
	p.i = len(p.s)
}

// more moves a streaming scanner to its next window when the current one is
// used up, and reports whether input remains. Windows end only before a
// comma outside a string, where every caller is between two tokens.
func (p *jsonScan[T]) more() bool {
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
func (p *jsonScan[T]) ws() {
	if p.i < len(p.s) && p.s[p.i] > ' ' {
		return
	}
	p.blanks()
}

// blanks is ws past its first byte.
func (p *jsonScan[T]) blanks() {
	for p.i < len(p.s) || p.more() {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end. Compact
// JSON has none, so a byte above ' ' (never white space) is returned at
// once.
func (p *jsonScan[T]) peek() byte {
	if p.i < len(p.s) && p.s[p.i] > ' ' {
		return p.s[p.i]
	}
	p.blanks()
	if p.i < len(p.s) || p.more() {
		return p.s[p.i]
	}
	return 0
}

// end records a syntax error when anything but white space follows the
// value read.
func (p *jsonScan[T]) end() {
	if p.err == nil && !p.atEnd() {
		p.fail("data after the top-level value")
	}
}

// atEnd reports whether only white space is left: a NUL byte is data,
// though peek returns 0 for it as for the end.
func (p *jsonScan[T]) atEnd() bool {
	p.ws()
	return p.i >= len(p.s) && !p.more()
}

// next consumes c if it is the very next byte (small enough to inline:
// structural bytes in compact JSON cost no call).
func (p *jsonScan[T]) next(c byte) bool {
	if p.is(c) {
		p.i++
		return true
	}
	return false
}

// is reports whether c is the very next byte.
func (p *jsonScan[T]) is(c byte) bool {
	return p.i < len(p.s) && p.s[p.i] == c
}

// expect consumes c (never white space) after white space.
func (p *jsonScan[T]) expect(c byte) bool {
	if p.peek() != c {
		p.unexpected(fmt.Sprintf("%q", c))
		return false
	}
	p.i++
	return true
}

// unexpected records a syntax error naming what was found.
func (p *jsonScan[T]) unexpected(want string) {
	if p.i >= len(p.s) && !p.more() {
		p.fail("unexpected end of input, want %s", want)
		return
	}
	p.fail("unexpected %q, want %s", p.s[p.i], want)
}

// eachMember calls f for every key of the object that starts here, with the
// scanner at the key's value; f must consume the value.
func (p *jsonScan[T]) eachMember(f func(key T)) {
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
func (p *jsonScan[T]) push(index int) {
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
func (p *jsonScan[T]) setKey(key T) T {
	st := &p.path[len(p.path)-1]
	if p.src == nil {
		st.key = key
		return key
	}
	st.own = append(st.own[:0], key...)
	st.key = T(st.own)
	return st.key
}

// members is eachMember with the object's step on the path.
func (p *jsonScan[T]) members(f func(key T)) {
	if !p.expect('{') {
		return
	}
	if p.peek() == '}' {
		p.i++
		return
	}
	for p.err == nil {
		if !p.is('"') && p.peek() != '"' {
			p.unexpected("a string key")
			return
		}
		p.inKey = true
		key := p.str()
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
		switch p.peek() {
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

// eachElement calls f for every element of the array that starts here, with
// its index; f must consume the element.
func (p *jsonScan[T]) eachElement(f func(i int)) {
	if p.maxValue == 0 {
		p.elements(f)
		return
	}
	n := len(p.path)
	p.push(0)
	p.elements(f)
	p.path = p.path[:n]
}

// elements is eachElement with the array's step on the path.
func (p *jsonScan[T]) elements(f func(i int)) {
	if !p.expect('[') {
		return
	}
	if p.peek() == ']' {
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
		switch p.peek() {
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

// skip consumes any value and returns its text. A value that spans windows
// of a stream returns only its first head bytes.
func (p *jsonScan[T]) skip() T {
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

// skipText consumes any value and returns a copy of its text, of at most
// head bytes when head > 0.
func (p *jsonScan[T]) skipText() string {
	t := p.skip()
	if p.head > 0 && len(t) > p.head {
		t = t[:p.head]
	}
	return string(t)
}

// keep returns a copy of text the scanner returned (a string, number or
// key), in the scanner's stringArena: one allocation for many strings.
func (p *jsonScan[T]) keep(text T) string {
	return p.arena.str([]byte(text))
}

// value consumes any value at the given depth.
func (p *jsonScan[T]) value(depth int) {
	if depth > maxJSONDepth {
		p.fail("nesting deeper than %d", maxJSONDepth)
		return
	}
	switch c := p.peek(); {
	case c == '{':
		p.eachMember(func(T) { p.value(depth + 1) })
	case c == '[':
		p.eachElement(func(int) { p.value(depth + 1) })
	case c == '"':
		p.str()
	case c == '-' || '0' <= c && c <= '9':
		p.number()
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
func (p *jsonScan[T]) literal(word string) {
	if len(p.s)-p.i >= len(word) && string(p.s[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return
	}
	p.unexpected(word)
}

// number consumes a number (RFC 8259 grammar: -? int frac? exp?) and
// returns its text, or an empty one (with long set) when it is longer than
// maxValue.
func (p *jsonScan[T]) number() T {
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
func (p *jsonScan[T]) intPart() bool {
	return p.optional('0') || p.digits() > 0
}

// fraction consumes a number's fraction, if any; false when its dot has no
// digit after it.
func (p *jsonScan[T]) fraction() bool {
	return !p.optional('.') || p.digits() > 0
}

// exponent consumes a number's exponent, if any; false when its e has no
// digit after it (or after its sign).
func (p *jsonScan[T]) exponent() bool {
	if !p.optional('e') && !p.optional('E') {
		return true
	}
	if !p.optional('+') {
		p.optional('-')
	}
	return p.digits() > 0
}

// optional consumes c if it is the token's next byte.
func (p *jsonScan[T]) optional(c byte) bool {
	if p.inToken() && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// digits consumes a run of digits and returns its length.
func (p *jsonScan[T]) digits() int {
	n := 0
	for p.inToken() && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// inToken reports whether the token being read has a byte at i: in this
// window, or in the next when this one ends inside the token.
func (p *jsonScan[T]) inToken() bool {
	return p.i < len(p.s) || p.midToken && p.more()
}

// str consumes a string and returns its value: a piece of the input when
// it holds no escape, decoded otherwise (a copy for a jsonScanner, the
// scratch buffer for a byteScanner; a key's own copy for either). Invalid
// UTF-8 and lone surrogates become U+FFFD, as encoding/json does, and set
// notUTF8. A string longer than maxValue bytes (quotes excluded) is
// reported and reads as empty, with long set (notUTF8 then says nothing: a
// stream may cut such a string between the bytes of a rune).
func (p *jsonScan[T]) str() T {
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
func load64[T jsonText](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasSpecialByte reports whether any byte of w ends a plain string run:
// a quote, a backslash, a control character or a non-ASCII byte (the bytes
// strSpecial marks), tested on all eight at once.
func hasSpecialByte(w uint64) bool {
	return specialBytes(w) != 0
}

// specialBytes is hasSpecialByte as a mask: its lowest set bit is the high
// bit of the first special byte of w (little-endian); the bits above it may
// be set for bytes that are not special. Below the first special byte
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
func (p *jsonScan[T]) escapedStr(start int, special bool) T {
	abs := p.base + start
	buf := p.scratch[:0]
	if p.inKey { // a key outlives the next string's decoding
		buf = make([]byte, 0, min(p.i-start, windowChunk)+16)
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
	case !special: // as str reports a string without any special byte
		p.failAt(abs, "unterminated string")
	default:
		p.fail("unterminated string")
	}
	return p.s[:0]
}

// endStr consumes the closing quote of a string decoded into buf, which
// started at offset abs of the whole input.
func (p *jsonScan[T]) endStr(buf []byte, abs int) T {
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
func (p *jsonScan[T]) escape(buf []byte) ([]byte, bool) {
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
func (p *jsonScan[T]) lowSurrogate(hi rune) (rune, bool) {
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
func (p *jsonScan[T]) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		p.fail("short \\u escape")
		return 0, false
	}
	var r rune
	for k := p.i; k < p.i+4; k++ {
		d, ok := hexValue(p.s[k])
		if !ok {
			p.fail("invalid \\u escape")
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true
}

// stringArena copies the strings a caller keeps from a byteScanner into
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
