package paygate

import (
	"encoding/binary"
	"slices"
)

// queryEncoding is one way of percent-encoding a query string.
// docs/protocol.md "Signature algorithm" (step 4) names two: RFC 3986 for outbound requests and
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

// field is one key and its single value, as a query writes it and as
// signed.
type field struct {
	key, value string
}

// escapeWords[e][c] is byte c as written under encoding e, packed
// little-endian into the low bytes of a word (c itself, + for a space in form
// encodings, or %XX with upper-case hex), with the number of bytes written, 1
// or 3, in the top byte. Every encoding keeps A-Z a-z 0-9 - . _; they differ
// on ~, * and space. The tables are read-only after package initialisation.
var escapeWords = func() (t [4][256]uint32) {
	const hexUpper = "0123456789ABCDEF"
	for e := range t {
		enc := queryEncoding(e)
		for c := 0; c < 256; c++ {
			b := byte(c)
			switch {
			case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9',
				b == '-', b == '.', b == '_',
				b == '~' && (enc == encRFC3986 || enc == encFormGo),
				b == '*' && enc == encFormHTML:
				t[e][c] = uint32(b) | 1<<24
			case b == ' ' && enc != encRFC3986:
				t[e][c] = '+' | 1<<24
			default:
				t[e][c] = '%' | uint32(hexUpper[b>>4])<<8 | uint32(hexUpper[b&0x0f])<<16 | 3<<24
			}
		}
	}
	return t
}()

// appendEscaped appends s to dst encoded under e: 16 bytes a step with
// vector instructions where the CPU has them (appendEscapedVector), else by
// appendEscapedWords. Both write the same bytes (TestEscapeVectorEveryByte,
// FuzzAppendEscaped).
func appendEscaped(dst []byte, s string, e queryEncoding) []byte {
	if out, ok := appendEscapedVector(dst, s, e); ok {
		return out
	}
	return appendEscapedWords(dst, s, e)
}

// appendEscapedWords appends s to dst encoded under e. Each input byte costs one
// table load and one unconditional four-byte store, with no branch on the
// byte: callback messages such as the fpx JSON need escaping every few
// characters, where a branch per byte is mispredicted again and again. Eight
// bytes go per iteration into a fixed-size window of the output, so that the
// compiler proves every store in bounds and checks the window once.
func appendEscapedWords(dst []byte, s string, e queryEncoding) []byte {
	n := len(dst)
	// The worst case is three bytes out for each byte in, plus the spare
	// byte that the last four-byte store writes past the end.
	dst = slices.Grow(dst, 3*len(s)+1)
	b := dst[:cap(dst)]
	tbl := &escapeWords[e]
	i := 0
	for ; i+8 <= len(s); i += 8 {
		q := s[i : i+8]
		out := (*[8*3 + 1]byte)(b[n : n+8*3+1])
		// Each word is stored as soon as it is loaded, at the offset the
		// words before it make: with eight words held at once the
		// compiler spills them. Masking the lengths with 3 lets it bound
		// every offset.
		w := tbl[q[0]]
		binary.LittleEndian.PutUint32(out[0:], w)
		o := int(w>>24) & 3
		w = tbl[q[1]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o += int(w>>24) & 3
		w = tbl[q[2]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o += int(w>>24) & 3
		w = tbl[q[3]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o += int(w>>24) & 3
		w = tbl[q[4]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o += int(w>>24) & 3
		w = tbl[q[5]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o += int(w>>24) & 3
		w = tbl[q[6]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o += int(w>>24) & 3
		w = tbl[q[7]]
		binary.LittleEndian.PutUint32(out[o:], w)
		n += o + int(w>>24)&3
	}
	for ; i < len(s); i++ {
		w := tbl[s[i]]
		binary.LittleEndian.PutUint32(b[n:], w)
		n += int(w >> 24)
	}
	return dst[:n]
}
