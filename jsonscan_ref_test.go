package paygate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// refScanner is the package's JSON scanner as it was before it read bytes
// (jsonscan.go as of commit 2e52f4d), kept only as the reference
// FuzzScannerMatchesReference compares jsonScan with. It reads a whole
// string: what read windows of a stream (base, src, capture, midToken)
// is cut; the rest is unchanged but for its name.
type refScanner struct {
	s   string
	i   int
	err error

	// maxValue, when > 0, is the longest string or number (in bytes of
	// JSON text, quotes excluded) that str and number return: a longer one
	// is reported to problems at its JSON pointer, sets long and reads as
	// "" (ValidateBatchJSON, ValidateBatchReader).
	maxValue int
	long     bool // the last str or number was longer than maxValue
	problems *ValidationError
	path     []refPathStep // where the scanner is, for the pointer of a long value
	inKey    bool          // str is reading a key
}

// refPathStep is one level of a JSON pointer: an object's key, or an array's
// index when index >= 0.
type refPathStep struct {
	key   string
	index int
}

// failAt records the first syntax error at an offset of the whole input.
func (p *refScanner) failAt(off int, msg string) {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: %s", off, msg)
	}
	p.i = len(p.s)
}

// tooLong reports the value (or key) just read as longer than maxValue.
func (p *refScanner) tooLong() {
	p.long = true
	if p.problems == nil {
		return
	}
	if p.inKey {
		p.problems.add(p.pointer(len(p.path)-1), fmt.Sprintf(ruleKeyTooLong, p.maxValue), "")
		return
	}
	p.problems.add(p.pointer(len(p.path)), fmt.Sprintf(ruleTooLong, p.maxValue), "")
}

// pointer is the JSON pointer (RFC 6901) of the first n steps of path.
func (p *refScanner) pointer(n int) string {
	var b strings.Builder
	for _, st := range p.path[:n] {
		b.WriteByte('/')
		if st.index >= 0 {
			b.WriteString(strconv.Itoa(st.index))
		} else {
			b.WriteString(pointerEscaper.Replace(st.key))
		}
	}
	return b.String()
}

// pointerEscaper escapes a key for a JSON pointer (RFC 6901 section 3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// fail records the first syntax error.
func (p *refScanner) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
	}
	p.i = len(p.s)
}

// more reports whether input remains.
func (p *refScanner) more() bool { return p.i < len(p.s) }

// ws skips white space.
func (p *refScanner) ws() {
	for p.i < len(p.s) || p.more() {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (p *refScanner) peek() byte {
	p.ws()
	if p.i < len(p.s) || p.more() {
		return p.s[p.i]
	}
	return 0
}

// expect consumes c after white space.
func (p *refScanner) expect(c byte) bool {
	if p.peek() != c {
		p.unexpected(fmt.Sprintf("%q", c))
		return false
	}
	p.i++
	return true
}

// unexpected records a syntax error naming what was found.
func (p *refScanner) unexpected(want string) {
	if p.i >= len(p.s) && !p.more() {
		p.fail("unexpected end of input, want %s", want)
		return
	}
	p.fail("unexpected %q, want %s", p.s[p.i], want)
}

// eachMember calls f for every key of the object that starts here, with the
// scanner at the key's value; f must consume the value.
func (p *refScanner) eachMember(f func(key string)) {
	if p.maxValue == 0 { // no cap, no pointer to name
		p.members(f)
		return
	}
	n := len(p.path)
	p.path = append(p.path, refPathStep{index: -1})
	p.members(f)
	p.path = p.path[:n]
}

// members is eachMember with the object's step on the path.
func (p *refScanner) members(f func(key string)) {
	if !p.expect('{') {
		return
	}
	if p.peek() == '}' {
		p.i++
		return
	}
	for p.err == nil {
		if p.peek() != '"' {
			p.unexpected("a string key")
			return
		}
		p.inKey = true
		key := p.str()
		p.inKey = false
		if p.maxValue > 0 {
			p.path[len(p.path)-1].key = key
		}
		if !p.expect(':') {
			return
		}
		p.ws()
		f(key)
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
func (p *refScanner) eachElement(f func(i int)) {
	if p.maxValue == 0 {
		p.elements(f)
		return
	}
	n := len(p.path)
	p.path = append(p.path, refPathStep{})
	p.elements(f)
	p.path = p.path[:n]
}

// elements is eachElement with the array's step on the path.
func (p *refScanner) elements(f func(i int)) {
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

// skip consumes any value and returns its text.
func (p *refScanner) skip() string {
	start := p.i
	p.value(0)
	return p.s[start:p.i]
}

// value consumes any value at the given depth.
func (p *refScanner) value(depth int) {
	if depth > maxJSONDepth {
		p.fail("nesting deeper than %d", maxJSONDepth)
		return
	}
	switch c := p.peek(); {
	case c == '{':
		p.eachMember(func(string) { p.value(depth + 1) })
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
func (p *refScanner) literal(word string) {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return
	}
	p.unexpected(word)
}

// number consumes a number (RFC 8259 grammar) and returns its text, or ""
// (with long set) when it is longer than maxValue.
func (p *refScanner) number() string {
	p.long = false
	start := p.i
	digits := func() int {
		n := 0
		for p.inToken() && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.inToken() && p.s[p.i] == '-' {
		p.i++
	}
	if p.inToken() && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		p.unexpected("a digit")
		return ""
	}
	if p.inToken() && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.unexpected("a digit")
			return ""
		}
	}
	if p.inToken() && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.inToken() && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.unexpected("a digit")
			return ""
		}
	}
	if p.maxValue > 0 && p.i-start > p.maxValue {
		p.tooLong()
		return ""
	}
	return p.s[start:p.i]
}

// inToken reports whether the token being read has a byte at i.
func (p *refScanner) inToken() bool {
	return p.i < len(p.s)
}

// str consumes a string and returns its value: a substring of the input when
// it holds no escape, a decoded copy otherwise. Invalid UTF-8 and lone
// surrogates become U+FFFD, as encoding/json does. A string longer than
// maxValue bytes (quotes excluded) is reported and reads as "", with long
// set.
func (p *refScanner) str() string {
	p.long = false
	p.i++ // the opening quote
	start := p.i
	j := start
	// Eight bytes at a time while none of them is special.
	for ; j+8 <= len(p.s); j += 8 {
		if hasSpecialByte(load64(p.s, j)) {
			break
		}
	}
	for ; j < len(p.s); j++ {
		if c := p.s[j]; strSpecial[c] {
			if c == '"' {
				p.i = j + 1
				if p.maxValue > 0 && j-start > p.maxValue {
					p.tooLong()
					return ""
				}
				return p.s[start:j]
			}
			p.i = j
			return p.escapedStr(start, true)
		}
	}
	p.fail("unterminated string")
	return ""
}

// escapedStr finishes a string that needs decoding (special: a special
// byte was seen) or goes on past its window, from its start. A string that
// spans windows is longer than maxValue: its value is not kept.
func (p *refScanner) escapedStr(start int, special bool) string {
	abs := start
	buf := make([]byte, 0, p.i-start+16)
	buf = append(buf, p.s[start:p.i]...)
	for {
		if p.i >= len(p.s) {
			break
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			raw := p.i - abs
			p.i++
			if p.maxValue > 0 && raw > p.maxValue {
				p.tooLong()
				return ""
			}
			return string(buf)
		case c < 0x20:
			p.fail("control character %q in string", c)
			return ""
		case c >= utf8.RuneSelf:
			special = true
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			buf = utf8.AppendRune(buf, r) // RuneError for invalid bytes
			p.i += size
			continue
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		special = true
		if p.i+1 >= len(p.s) {
			break
		}
		p.i += 2
		switch e := p.s[p.i-1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return ""
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if len(p.s)-p.i >= 6 && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if lo, ok := p.hex4(); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							r2 = dec
						} else {
							p.i = save // not a pair: the next escape stands alone
						}
					} else {
						return ""
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i--
			p.fail("invalid escape '\\%c'", e)
			return ""
		}
	}
	if !special { // as str reports a string without any special byte
		p.failAt(abs, "unterminated string")
		return ""
	}
	p.fail("unterminated string")
	return ""
}

// hex4 reads the four hex digits of a \u escape.
func (p *refScanner) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		p.fail("short \\u escape")
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		p.fail("invalid \\u escape")
		return 0, false
	}
	p.i += 4
	return rune(v), true
}
