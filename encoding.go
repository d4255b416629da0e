package paygate

// queryEncoding is one way of percent-encoding a query string. The spec
// (Authentication step 4) names two: RFC 3986 for outbound requests and
// form-style for callbacks. Form-style is ambiguous in practice, so the
// callback verifier also knows the variants that common encoders produce.
type queryEncoding uint8

const (
	// encRFC3986 keeps A-Z a-z 0-9 - . _ ~ and writes everything else as %XX
	// with upper-case hex, space as %20. Outbound GET and POST signing.
	encRFC3986 queryEncoding = iota
	// encFormGo is the canonical callback encoding: Go's url.Values.Encode and
	// Python's urlencode. Keeps A-Z a-z 0-9 - . _ ~, space as +.
	encFormGo
	// encFormPHP is PHP's urlencode and http_build_query: as encFormGo but
	// ~ becomes %7E.
	encFormPHP
	// encFormHTML is the WHATWG application/x-www-form-urlencoded serializer
	// (browsers, JavaScript's URLSearchParams) and Java's URLEncoder: keeps
	// A-Z a-z 0-9 * - . _, so ~ becomes %7E and * stays literal.
	encFormHTML
)

// String names the encoding for CallbackMessages and the CLI's -explain.
func (e queryEncoding) String() string {
	switch e {
	case encRFC3986:
		return "rfc3986"
	case encFormGo:
		return "form"
	case encFormPHP:
		return "form-php"
	default:
		return "form-whatwg"
	}
}

// escapeTables[e][c] is the byte that c is written as under encoding e (c
// itself, or + for a space in form encodings), or 0 when c is written as %XX.
// Every encoding keeps A-Z a-z 0-9 - . _; they differ on ~, * and space. The
// tables are read-only after package initialisation.
var escapeTables = func() (t [4][256]byte) {
	for e := range t {
		enc := queryEncoding(e)
		for c := 0; c < 256; c++ {
			b := byte(c)
			switch {
			case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9',
				b == '-', b == '.', b == '_',
				b == '~' && (enc == encRFC3986 || enc == encFormGo),
				b == '*' && enc == encFormHTML:
				t[e][c] = b
			case b == ' ' && enc != encRFC3986:
				t[e][c] = '+'
			}
		}
	}
	return t
}()

// appendEscaped appends s to dst encoded under e. Runs of bytes that stay as
// they are go in with one append each.
func appendEscaped(dst []byte, s string, e queryEncoding) []byte {
	const hexUpper = "0123456789ABCDEF"
	tbl := &escapeTables[e]
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		k := tbl[c]
		if k == c {
			continue
		}
		dst = append(dst, s[start:i]...)
		if k != 0 {
			dst = append(dst, k)
		} else {
			dst = append(dst, '%', hexUpper[c>>4], hexUpper[c&0x0f])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}
