package signing

import "slices"

// Encoding is one way of percent-encoding a query. The protocol names two:
// RFC 3986 for outbound requests and form-style for callbacks. Form-style is
// ambiguous in practice (docs/assumptions.md A-callback-encoding), so the
// callback verifier also knows the variants common encoders write.
type Encoding uint8

const (
	// RFC3986 keeps A-Z a-z 0-9 - . _ ~ and writes everything else as %XX
	// with upper-case hex, space as %20: outbound GET and POST.
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

// What an escape table says of one byte.
const (
	escape = iota // %XX
	keep          // the byte itself
	plus          // a space written as +
)

// escapeTables[e][c] is what encoding e writes for byte c. The tables are
// built once and only read.
var escapeTables = func() (t [len(encodings)][256]uint8) {
	for e, enc := range encodings {
		for c := range 256 {
			b := byte(c)
			switch {
			case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '-', b == '.', b == '_',
				b == '~' && enc.tilde, b == '*' && enc.star:
				t[e][c] = keep
			case b == ' ' && enc.plusSpace:
				t[e][c] = plus
			}
		}
	}
	return t
}()

// AppendEscaped appends s to dst, encoded under e.
func AppendEscaped(dst []byte, s string, e Encoding) []byte {
	const hexUpper = "0123456789ABCDEF"
	t := &escapeTables[e]
	n := len(dst)
	dst = slices.Grow(dst, 3*len(s)) // at most three bytes out for one in
	b := dst[:n+3*len(s)]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; t[c] {
		case keep:
			b[n] = c
			n++
		case plus:
			b[n] = '+'
			n++
		default:
			b[n], b[n+1], b[n+2] = '%', hexUpper[c>>4], hexUpper[c&0x0f]
			n += 3
		}
	}
	return b[:n]
}
