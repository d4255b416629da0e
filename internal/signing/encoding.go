package signing

import (
	"encoding/binary"
)

// Encoding is one way of percent-encoding a query. The protocol names two:
// RFC 3986 for outbound requests and form-style for callbacks. Form-style is
// ambiguous in practice and the public PHP client signs in RFC 3986
// (docs/assumptions.md A-callback-encoding), so the callback verifier also
// knows the variants common encoders write, RFC 3986 among them.
type Encoding uint8

const (
	// RFC3986 keeps A-Z a-z 0-9 - . _ ~ and writes everything else as %XX
	// with upper-case hex, space as %20: outbound GET and POST, and a
	// callback variant (PHP's http_build_query with PHP_QUERY_RFC3986).
	RFC3986 Encoding = iota
	// Form is the canonical callback encoding, Go's url.Values.Encode and
	// Python's urlencode: as RFC3986 but space as +.
	Form
	// FormPHP is PHP's urlencode and http_build_query: as Form but ~ as %7E.
	FormPHP
	// FormWHATWG is the WHATWG form serializer (browsers, URLSearchParams)
	// and Java's URLEncoder: as Form but ~ as %7E and * kept.
	FormWHATWG
)

// encodings holds, for each Encoding, its name and the bytes it writes
// differently from RFC 3986.
var encodings = [...]struct {
	name                   string
	plusSpace, tilde, star bool // space as +, ~ kept, * kept
}{
	RFC3986:    {"rfc3986", false, true, false},
	Form:       {"form", true, true, false},
	FormPHP:    {"form-php", true, false, false},
	FormWHATWG: {"form-whatwg", true, false, true},
}

// String names the encoding: rfc3986, form, form-php or form-whatwg.
func (e Encoding) String() string { return encodings[e].name }

// escapeWords[e][c] is byte c as encoding e writes it, packed little-endian
// into the low bytes of a word (c itself, + for a space, or %XX with
// upper-case hex), with the number of bytes written, 1 or 3, in the top
// byte. The tables are built once and only read.
var escapeWords = func() (t [len(encodings)][256]uint32) {
	const hexUpper = "0123456789ABCDEF"
	for e, enc := range encodings {
		for c := range 256 {
			b := byte(c)
			switch {
			case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '-', b == '.', b == '_',
				b == '~' && enc.tilde, b == '*' && enc.star:
				t[e][c] = uint32(b) | 1<<24
			case b == ' ' && enc.plusSpace:
				t[e][c] = '+' | 1<<24
			default:
				t[e][c] = '%' | uint32(hexUpper[b>>4])<<8 | uint32(hexUpper[b&0x0f])<<16 | 3<<24
			}
		}
	}
	return t
}()

// escapedMax is the room escape needs for n bytes: three bytes out for
// each byte in at most, plus the spare byte the last four-byte store
// writes past the end.
func escapedMax(n int) int { return 3*n + 1 }

// escape writes s escaped through the table t into b at offset n and
// returns the offset after it; b must have escapedMax(len(s)) bytes from n.
// Each byte costs one table load and one four-byte store, with no branch
// on the byte: callback messages such as the fpx JSON need escaping every
// few characters, where a branch per byte is mispredicted again and again.
// Eight bytes go into a window of the output bounded once, which saves
// most of the bounds checks.
func escape(b []byte, n int, s string, t *[256]uint32) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		in, out := s[i:i+8], (*window)(b[n:n+len(window{})])
		o := out.put(0, t[in[0]])
		o = out.put(o, t[in[1]])
		o = out.put(o, t[in[2]])
		o = out.put(o, t[in[3]])
		o = out.put(o, t[in[4]])
		o = out.put(o, t[in[5]])
		o = out.put(o, t[in[6]])
		n += out.put(o, t[in[7]])
	}
	for ; i < len(s); i++ {
		w := t[s[i]]
		binary.LittleEndian.PutUint32(b[n:n+4], w)
		n += int(w >> 24)
	}
	return n
}

// window is the output of eight escaped bytes and the spare byte.
type window [8*3 + 1]byte

// put stores the escaped byte w at offset o and returns the offset after
// it. The length is masked with 3 (it is 1 or 3 already) so that the
// compiler can prove all eight stores inside the window and check none.
func (out *window) put(o int, w uint32) int {
	binary.LittleEndian.PutUint32(out[o:o+4], w)
	return o + int(w>>24&3)
}
