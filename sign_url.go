package paygate

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
)

// SignURL's fast path. url.Parse and url.ParseQuery cost several times the
// HMAC itself (a URL struct, a map, a slice and a decoded string a field).
// A URL of the plain shape that merchants sign (a lower-case scheme, a host
// name with an optional port, a path of unreserved characters, a query with
// no fragment) is split here instead. A query whose keys come sorted (as
// url.Values.Encode writes them) is written into the message in one pass
// (appendSortedQuery); any other is scanned into the signer's fields first
// (scanQuery). Either way values stay escaped: re-encoding an escaped value
// under RFC 3986 needs no decoded copy. Whatever does not match that shape
// exactly (and any query url.ParseQuery would refuse or read as a field
// with several values) goes the general way, url.Parse and
// url.ParseQuery, which also gives its errors: both ways sign the same
// message (FuzzSignReference).

// maxScanFields bounds the pairs of a query the fast path reads (empty ones
// and those it drops included); more go the general way.
const maxScanFields = 64

// Byte classes of a query as the fast path reads it.
const (
	qPlain  = iota // kept by RFC 3986 and url.QueryUnescape alike
	qEscape        // a byte the encoders escape
	qPct           // '%': the start of an escape, checked
	qPlus          // '+': a space
	qAmp           // '&': the end of a pair
	qEq            // '=': the end of a key
	qStop          // ';', '#' or a control byte: the general way decides
)

// queryClass is the class of every byte; read-only after initialisation.
var queryClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case escapeWords[encRFC3986][b]>>24 == 1:
			t[c] = qPlain
		case b == '%':
			t[c] = qPct
		case b == '+':
			t[c] = qPlus
		case b == '&':
			t[c] = qAmp
		case b == '=':
			t[c] = qEq
		case b == ';' || b == '#' || b < 0x20 || b == 0x7f:
			t[c] = qStop
		default:
			t[c] = qEscape
		}
	}
	return t
}()

// simpleURL splits rawURL into its origin (scheme://host[:port]), its path
// ("/" when empty) and its raw query, when rawURL has the plain shape whose
// parts url.Parse returns unchanged: a scheme of lower-case letters; a host
// of letters, digits, dots and hyphens, then optionally ':' and digits; a
// path of unreserved characters and slashes, starting with '/'; then
// nothing or '?' and the query (which scanQuery checks). ok is false for
// anything else.
func simpleURL(rawURL string) (origin, path, query string, ok bool) {
	host, ok := schemeEnd(rawURL)
	if !ok {
		return "", "", "", false
	}
	j := hostEnd(rawURL, host)
	if j == host {
		return "", "", "", false
	}
	k := j
	for k < len(rawURL) && (rawURL[k] == '/' || queryClass[rawURL[k]] == qPlain) {
		k++
	}
	origin, path = rawURL[:j], rawURL[j:k]
	if path != "" && path[0] != '/' {
		return "", "", "", false
	}
	if k < len(rawURL) {
		if rawURL[k] != '?' {
			return "", "", "", false
		}
		query = rawURL[k+1:]
	}
	if path == "" {
		path = "/"
	}
	return origin, path, query, true
}

// schemeEnd returns where the host of rawURL starts, after a scheme of
// lower-case letters and "://"; ok is false when rawURL does not start so.
func schemeEnd(rawURL string) (host int, ok bool) {
	i := 0
	for i < len(rawURL) && 'a' <= rawURL[i] && rawURL[i] <= 'z' {
		i++
	}
	return i + 3, i > 0 && strings.HasPrefix(rawURL[i:], "://")
}

// hostEnd returns where the host that starts at i in rawURL ends, with its
// port if it has one: letters, digits, dots and hyphens, then optionally ':'
// and digits. It returns i for an empty host.
func hostEnd(rawURL string, i int) int {
	j := i
	for j < len(rawURL) && isHostByte(rawURL[j]) {
		j++
	}
	if j == i {
		return i
	}
	if j < len(rawURL) && rawURL[j] == ':' {
		for j++; j < len(rawURL) && '0' <= rawURL[j] && rawURL[j] <= '9'; j++ {
		}
	}
	return j
}

// isHostByte reports whether c is a letter, a digit, '.' or '-'.
func isHostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-'
}

// urlScan is the fast path's scratch space: the fields of the query it
// read, as offsets. A signState holds one.
type urlScan struct {
	scan  []scanField
	marks []uint16 // see splitMarks
}

// scanField is one field of a raw query, as offsets into it: the key
// query[k0:k1] and the value query[v0:v1], still escaped (quoted). It holds
// no pointer, so that filling and ordering the fields costs no write
// barrier while the collector runs. exp marks the exp field the signer adds.
type scanField struct {
	k0, k1, v0, v1 uint32
	quoted         quoting
	exp            bool
}

// quoting is how a value of a raw query is escaped.
type quoting uint8

const (
	// verbatim: only bytes RFC 3986 keeps; copied.
	verbatim quoting = iota
	// quotedRFC3986: as RFC 3986 writes it but for '+' where RFC 3986
	// writes %20 (as url.Values.Encode writes values): copied, each '+'
	// made %20.
	quotedRFC3986
	// requoted: anything else, re-encoded a byte at a time.
	requoted
)

// scanQuery puts the fields of a raw query into s.scan, in the order
// collect would put url.ParseQuery's result (sorted by key; signature and
// exp left out, exp added with the signer's value), each value left
// escaped. It reports false, leaving the query to the general way, for
// anything beyond the plain case: a key with '%' or '+', a ';', '#' or
// control byte, a malformed escape, a key given twice, more than
// maxScanFields fields or a query longer than 1 GiB. It reads the query in
// one pass, a table lookup a byte.
func (s *urlScan) scanQuery(query string) bool {
	s.scan = s.scan[:0]
	if len(query) > 1<<30 {
		return false
	}
	sorted := true // so far; a query from url.Values.Encode is
	pairs := 0     // every pair, empty ones and signature and exp included
	for pos := 0; pos <= len(query); {
		// url.ParseQuery refuses a query of too many pairs, empty ones
		// included: a long query is left to it.
		if pairs++; pairs > maxScanFields {
			return false
		}
		f, end, ok := scanPair(query, pos)
		if !ok {
			return false
		}
		pos = end + 1
		key := query[f.k0:f.k1]
		if end == int(f.k0) || key == fieldSignature || key == fieldExp { // an empty pair, or one the signer replaces
			continue
		}
		if n := len(s.scan); n > 0 && !keyLess(s.scanKey(query, n-1), key) {
			sorted = false
		}
		s.scan = append(s.scan, f)
	}
	return s.placeExp(query, sorted)
}

// scanPair reads the pair of query that starts at pos: the key up to '='
// or '&', the value up to '&' or the end. It returns the field and where
// the pair ends; ok is false when the fast path leaves the query to the
// general way: a key with '%' or '+', a ';', '#' or control byte, or a
// value scanQueryValue does not take.
func scanPair(query string, pos int) (f scanField, end int, ok bool) {
	i := pos
	for ; i < len(query); i++ {
		switch queryClass[query[i]] {
		case qPlain, qEscape:
			continue
		case qAmp:
			return scanField{k0: uint32(pos), k1: uint32(i), v0: uint32(i), v1: uint32(i)}, i, true
		case qEq:
			end, quoted, ok := scanQueryValue(query, i+1)
			return scanField{k0: uint32(pos), k1: uint32(i), v0: uint32(i + 1), v1: uint32(end), quoted: quoted}, end, ok
		}
		return scanField{}, 0, false // '%', '+', ';', '#', a control byte
	}
	return scanField{k0: uint32(pos), k1: uint32(i), v0: uint32(i), v1: uint32(i)}, i, true
}

// placeExp adds the exp field to s.scan in its sorted place, sorting the
// fields first when the query did not list them sorted, and reports false
// when a key comes twice (a field with several values: the general way
// gives its error).
func (s *urlScan) placeExp(query string, sorted bool) bool {
	i := len(s.scan)
	if sorted {
		i, _ = slices.BinarySearchFunc(s.scan, fieldExp, func(f scanField, k string) int {
			return strings.Compare(query[f.k0:f.k1], k)
		})
	}
	s.scan = slices.Insert(s.scan, i, scanField{exp: true})
	if sorted {
		return true
	}
	slices.SortFunc(s.scan, func(a, b scanField) int {
		return strings.Compare(scanKeyOf(query, a), scanKeyOf(query, b))
	})
	for i := 1; i < len(s.scan); i++ {
		if s.scanKey(query, i) == s.scanKey(query, i-1) {
			return false
		}
	}
	return true
}

// scanQueryValue reads the value of a raw query that starts at v0, up to
// the next '&' or the end, and returns where it ends and how it is quoted;
// ok is false when the fast path does not take it: a '%' that does not
// start an escape of two hex digits, a '=' (url.ParseQuery keeps it in the
// value; left to it), ';', '#' or a control byte.
func scanQueryValue(query string, v0 int) (end int, quoted quoting, ok bool) {
	canonical, escaped := true, false
	i := v0
	for i < len(query) {
		if plainRun8(query, i) {
			i += 8
			continue
		}
		// A window with a byte to look at: byte by byte through it.
		for end := min(i+8, len(query)); i < end; i++ {
			switch queryClass[query[i]] {
			case qPlain:
			case qAmp:
				return i, queryQuoting(canonical, escaped), true
			case qPct:
				if i+2 >= len(query) {
					return 0, 0, false
				}
				switch pctClass[query[i+1]]<<2 | pctClass[query[i+2]] {
				case hexUpper<<2 | hexUpper:
					// RFC 3986 writes the byte as this very escape when
					// it does not keep the byte.
					hi, _ := hexValue(query[i+1])
					lo, _ := hexValue(query[i+2])
					canonical = canonical && escapeWords[encRFC3986][hi<<4|lo]>>24 == 3
				case hexUpper<<2 | hexLower, hexLower<<2 | hexUpper, hexLower<<2 | hexLower:
					canonical = false
				default:
					return 0, 0, false
				}
				escaped = true
				i += 2
			case qPlus:
				escaped = true
			case qEscape:
				canonical, escaped = false, true
			default: // '=', ';', '#', a control byte
				return 0, 0, false
			}
		}
	}
	return i, queryQuoting(canonical, escaped), true
}

// plainRun8 reports whether the eight bytes of s from i are all kept by
// RFC 3986 (qPlain): eight independent loads and one branch, the quick way
// over the plain runs of a query.
func plainRun8(s string, i int) bool {
	if i+8 > len(s) {
		return false
	}
	q := s[i : i+8]
	return queryClass[q[0]]|queryClass[q[1]]|queryClass[q[2]]|queryClass[q[3]]|
		queryClass[q[4]]|queryClass[q[5]]|queryClass[q[6]]|queryClass[q[7]] == qPlain
}

// Classes of a byte after '%' (pctClass): not hex, upper-case hex digit
// (0-9 count as upper-case), lower-case hex digit.
const (
	hexNone = iota
	hexUpper
	hexLower
)

// pctClass is the hex class of every byte; read-only after initialisation.
var pctClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = hexUpper
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = hexUpper
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = hexLower
	}
	return t
}()

// queryQuoting is the quoting of a value from what scanQueryValue saw.
func queryQuoting(canonical, escaped bool) quoting {
	switch {
	case !escaped:
		return verbatim
	case canonical:
		return quotedRFC3986
	}
	return requoted
}

// scanKey is the key of s.scan[i].
func (s *urlScan) scanKey(query string, i int) string { return scanKeyOf(query, s.scan[i]) }

// scanKeyOf is the key of f, a field of query.
func scanKeyOf(query string, f scanField) string {
	if f.exp {
		return fieldExp
	}
	return query[f.k0:f.k1]
}

// appendScanned appends `k=v&k=v...` for s.scan, fields of query, under
// RFC 3986, exp with the value exp.
func (s *urlScan) appendScanned(dst []byte, query, exp string) []byte {
	for i, f := range s.scan {
		if i > 0 {
			dst = append(dst, '&')
		}
		if f.exp {
			dst = append(dst, fieldExp+"="...)
			dst = append(dst, exp...)
			continue
		}
		if key := query[f.k0:f.k1]; isPlain(key) {
			dst = append(dst, key...)
		} else {
			dst = appendEscaped(dst, key, encRFC3986)
		}
		dst = append(dst, '=')
		switch v := query[f.v0:f.v1]; f.quoted {
		case verbatim:
			dst = append(dst, v...)
		case quotedRFC3986:
			dst = appendPlusAs20(dst, v)
		default:
			dst = appendRequoted(dst, v, encRFC3986)
		}
	}
	return dst
}

// appendPlusAs20 appends v, a query value in RFC 3986's form but for '+'
// standing for a space, with each '+' written %20.
func appendPlusAs20(dst []byte, v string) []byte {
	for {
		i := strings.IndexByte(v, '+')
		if i < 0 {
			return append(dst, v...)
		}
		dst = append(dst, v[:i]...)
		dst = append(dst, "%20"...)
		v = v[i+1:]
	}
}

// appendRequoted appends v, a query value as a URL carries it ('+' a space,
// %XX the byte XX; scanQueryValue has checked its escapes), encoded under
// e: the bytes it stands for, written as appendEscaped writes them.
func appendRequoted(dst []byte, v string, e queryEncoding) []byte {
	tbl := &escapeWords[e]
	n := len(dst)
	// Three bytes out for each byte in at most, plus the spare byte that
	// the last four-byte store writes past the end.
	dst = slices.Grow(dst, 3*len(v)+1)
	b := dst[:cap(dst)]
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '%':
			hi, _ := hexValue(v[i+1])
			lo, _ := hexValue(v[i+2])
			c = hi<<4 | lo
			i += 2
		case '+':
			c = ' '
		}
		w := tbl[c]
		binary.LittleEndian.PutUint32(b[n:], w)
		n += int(w >> 24)
	}
	return dst[:n]
}

// Flags in the top byte of a rawQueryWords entry, above the length (bits
// 24-25), and the flags appendRawEscaped returns.
const (
	rawPct   = 1 << 26 // '%': an escape, copied as it is (see escapeFlags)
	rawPlus  = 1 << 27 // '+': a space, written %20
	rawStop  = 1 << 28 // ';', '#', a control byte or an invalid escape: the general way decides
	rawOther = 1 << 29 // an escape RFC 3986 does not write that way: the value is requoted
)

// rawQueryWords[c] is byte c of a raw query as its RFC 3986 message writes
// it, packed as escapeWords packs it, with the flags above: url.ParseQuery
// keeps every byte but '%' and '+', which RFC 3986 then writes as
// escapeWords does; '+' is a space, %20; '%' is copied, and so are the two
// hex digits after it, which is right for an escape that RFC 3986 writes
// the same way (escapeFlags tells). Read-only after initialisation.
var rawQueryWords = func() (t [256]uint32) {
	t = escapeWords[encRFC3986]
	t['%'] = '%' | 1<<24 | rawPct
	t['+'] = '%' | '2'<<8 | '0'<<16 | 3<<24 | rawPlus
	for c := range t {
		if queryClass[c] == qStop {
			t[c] |= rawStop
		}
	}
	return t
}()

// appendRawEscaped appends s, a key or value of a raw query, as its RFC
// 3986 message writes it, and returns the flags of its bytes and escapes
// that need more than that (rawStop, rawOther). A value with none goes 16
// bytes a step where the CPU allows (appendRawVector); otherwise eight
// bytes a step as appendEscapedWords does, the escapes of a window checked
// only when it has one.
func appendRawEscaped(dst []byte, s string) ([]byte, uint32) {
	if out, ok := appendRawVector(dst, s); ok {
		return out, 0
	}
	return appendRawEscapedWords(dst, s)
}

// appendRawEscapedWords is appendRawEscaped eight bytes a step.
func appendRawEscapedWords(dst []byte, s string) ([]byte, uint32) {
	n := len(dst)
	dst = slices.Grow(dst, 3*len(s)+1)
	b := dst[:cap(dst)]
	tbl := &rawQueryWords
	var flags uint32
	i := 0
	for ; i+8 <= len(s); i += 8 {
		q := s[i : i+8]
		out := (*[8*3 + 1]byte)(b[n : n+8*3+1])
		// As in appendEscaped, each word is stored as soon as it is
		// loaded; window gathers the flags of the eight and pcts has bit
		// k for a '%' at q[k].
		w := tbl[q[0]]
		binary.LittleEndian.PutUint32(out[0:], w)
		o, window, pcts := int(w>>24)&3, w, w>>26&1
		w = tbl[q[1]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o, window, pcts = o+int(w>>24)&3, window|w, pcts|w>>25&2
		w = tbl[q[2]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o, window, pcts = o+int(w>>24)&3, window|w, pcts|w>>24&4
		w = tbl[q[3]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o, window, pcts = o+int(w>>24)&3, window|w, pcts|w>>23&8
		w = tbl[q[4]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o, window, pcts = o+int(w>>24)&3, window|w, pcts|w>>22&16
		w = tbl[q[5]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o, window, pcts = o+int(w>>24)&3, window|w, pcts|w>>21&32
		w = tbl[q[6]]
		binary.LittleEndian.PutUint32(out[o:], w)
		o, window, pcts = o+int(w>>24)&3, window|w, pcts|w>>20&64
		w = tbl[q[7]]
		binary.LittleEndian.PutUint32(out[o:], w)
		window, pcts = window|w, pcts|w>>19&128
		if window&rawPct != 0 {
			window |= escapesFlags(s, i, pcts)
		}
		flags |= window
		n += o + int(w>>24)&3
	}
	for ; i < len(s); i++ {
		w := tbl[s[i]]
		if w&rawPct != 0 {
			w |= escapeFlags(s, i)
		}
		flags |= w
		binary.LittleEndian.PutUint32(b[n:], w)
		n += int(w>>24) & 3
	}
	return dst[:n], flags & (rawStop | rawOther)
}

// escapesFlags is the escapeFlags of each '%' of s at i+k for bit k of
// pcts.
func escapesFlags(s string, i int, pcts uint32) uint32 {
	var flags uint32
	for ; pcts != 0; pcts &= pcts - 1 {
		flags |= escapeFlags(s, i+bits.TrailingZeros32(pcts))
	}
	return flags
}

// escapeFlags checks the escape at s[i], a '%': url.ParseQuery refuses
// one without two hex digits (rawStop), and RFC 3986 writes it as it is
// only with upper-case digits and for a byte it does not keep (else
// rawOther).
func escapeFlags(s string, i int) uint32 {
	if i+2 >= len(s) {
		return rawStop
	}
	hi, lo := hexDigits[s[i+1]], hexDigits[s[i+2]]
	switch {
	case (hi|lo)&hexNot != 0:
		return rawStop
	case (hi|lo)&hexIsLower != 0, escapeWords[encRFC3986][hi<<4|lo]>>24 != 3:
		return rawOther
	}
	return 0
}

// Flags of a hexDigits entry, above the digit's value.
const (
	hexIsLower = 0x10 // a-f
	hexNot     = 0x20 // not a hex digit
)

// hexDigits[c] is the value of hex digit c with hexIsLower for a-f, or
// hexNot for any other byte. Read-only after initialisation.
var hexDigits = func() (t [256]uint8) {
	for c := range t {
		v, ok := hexValue(byte(c))
		switch {
		case !ok:
			t[c] = hexNot
		case 'a' <= c && c <= 'f':
			t[c] = v | hexIsLower
		default:
			t[c] = v
		}
	}
	return t
}()

// appendSortedQuery appends the RFC 3986 message of a raw query whose keys
// come sorted (as url.Values.Encode writes them), exp in its place, in one
// pass that writes each pair as it reads it. It reports false, having
// appended or not, for any query it does not read exactly as url.ParseQuery
// and collect do, or leaves to scanQuery (keys out of order or repeated, a
// key of other than RFC 3986's unreserved bytes, a ';', '#' or control
// byte, an invalid escape, more than maxScanFields pairs).
func appendSortedQuery(dst []byte, query, exp string) ([]byte, bool) {
	if len(query) > 1<<30 {
		return dst, false
	}
	prev, written, expDone := "", 0, false
	for pos, pairs := 0, 0; pos <= len(query); {
		if pairs++; pairs > maxScanFields {
			return dst, false
		}
		p, ok := splitPair(query, pos)
		replaced := replacedKey(p.key)
		if pos = p.next; !ok || replaced && !validRawValue(dst[len(dst):], p.value) {
			return dst, false
		}
		if p.empty || replaced {
			continue
		}
		if !sortedAfter(prev, p.key, written) {
			return dst, false
		}
		if !expDone && keyLess(fieldExp, p.key) {
			dst, written, expDone = appendExpField(dst, written, exp), written+1, true
		}
		if dst, ok = appendRawPair(dst, written, p.key, p.value); !ok {
			return dst, false
		}
		prev, written = p.key, written+1
	}
	if !expDone {
		dst = appendExpField(dst, written, exp)
	}
	return dst, true
}

// maxMarkedQuery bounds the queries appendSortedQueryVector reads (their
// marks stay in the pool): longer ones take appendSortedQuery.
const maxMarkedQuery = 8 << 10

// appendSortedQueryVector is appendSortedQuery for the common query, read
// by the bits of its '&' and '=' bytes (splitMarks) and escaped whole in
// two calls of the vector escaper around exp's place, with '&' and '='
// kept as they are: every pair has a key of RFC 3986's unreserved bytes,
// '=', and a value without '=', none is empty or replaced, the keys come
// sorted. It reports false, having appended nothing, for any other query,
// or where the CPU has no vector escaper.
func (s *signState) appendSortedQueryVector(dst []byte, query, exp string) ([]byte, bool) {
	amp, eq, odd, ok := s.splitMarks(query)
	if !ok {
		return dst, false
	}
	// The '&' and '=' bytes in order must alternate, '=' first: one '='
	// a pair, none in a value, no empty pair.
	expAt, pr := len(query), pairReader{odd: odd, query: query, sep: -1}
	for k := range amp {
		for m := uint32(amp[k]) | uint32(eq[k]); m != 0; m &= m - 1 {
			i := k<<4 + bits.TrailingZeros32(m)
			if eq[k]>>(i&15)&1 != 0 {
				if pr.sep >= 0 {
					return dst, false
				}
				pr.sep = i
				continue
			}
			if !pr.pair(i, &expAt) {
				return dst, false
			}
		}
	}
	if !pr.pair(len(query), &expAt) {
		return dst, false
	}
	start := len(dst)
	out, ok := appendRawQueryVector(dst, query[:expAt])
	if !ok {
		return dst[:start], false
	}
	if expAt == len(query) {
		out = append(out, '&')
	}
	out = append(out, fieldExp+"="...)
	out = append(out, exp...)
	if expAt < len(query) {
		out = append(out, '&')
		if out, ok = appendRawQueryVector(out, query[expAt:]); !ok {
			return out[:start], false
		}
	}
	return out, true
}

// pairReader checks the pairs of a query for appendSortedQueryVector, one
// at each '&' (and at the end).
type pairReader struct {
	odd        []uint16 // the marks of bytes other than unreserved ones
	query      string
	start, sep int    // where the pair at hand starts, and its '=' (-1: none yet)
	prev       string // the key before
	pairs      int
}

// pair checks the pair that ends at end: it has an '=', a key of
// unreserved bytes that the signer does not replace and that comes after
// the last, and at most maxScanFields pairs so far. expAt becomes its
// start when exp goes before it and nowhere yet.
func (r *pairReader) pair(end int, expAt *int) bool {
	if r.sep < 0 || r.pairs >= maxScanFields || nextMark(r.odd, r.start, r.sep) < r.sep {
		return false
	}
	key := r.query[r.start:r.sep]
	if replacedKey(key) || !sortedAfter(r.prev, key, r.pairs) {
		return false
	}
	if *expAt == len(r.query) && keyLess(fieldExp, key) {
		*expAt = r.start
	}
	r.prev, r.pairs, r.start, r.sep = key, r.pairs+1, end+1, -1
	return true
}

// splitMarks returns the bits, 16 bytes of query an element, of its '&'
// bytes, its '=' bytes and its bytes other than RFC 3986's unreserved
// ones: the whole blocks by the vector escaper's classifier, the last
// short one here. ok is false for a query longer than maxMarkedQuery, or
// where the CPU has no vector escaper.
func (s *signState) splitMarks(query string) (amp, eq, odd []uint16, ok bool) {
	if len(query) == 0 || len(query) > maxMarkedQuery {
		return nil, nil, nil, false
	}
	if s.marks, ok = queryMarksVector(s.marks, query); !ok {
		return nil, nil, nil, false
	}
	n := len(s.marks) / 3
	amp, eq, odd = s.marks[:n], s.marks[n:2*n], s.marks[2*n:]
	if tail := len(query) &^ 15; tail < len(query) {
		var a, e, o uint16
		for i := tail; i < len(query); i++ {
			bit, class := uint16(1)<<(i-tail), queryClass[query[i]]
			if class == qAmp {
				a |= bit
			}
			if class == qEq {
				e |= bit
			}
			if class != qPlain {
				o |= bit
			}
		}
		amp[n-1], eq[n-1], odd[n-1] = a, e, o
	}
	return amp, eq, odd, true
}

// nextMark is the first byte at or after from, before end, whose bit is
// set in marks, or end.
func nextMark(marks []uint16, from, end int) int {
	for k := from >> 4; k<<4 < end; k++ {
		m := uint32(marks[k])
		if k == from>>4 {
			m &^= 1<<(from&15) - 1 // the bytes before from
		}
		if m != 0 {
			return min(k<<4+bits.TrailingZeros32(m), end)
		}
	}
	return end
}

// rawPair is one pair of a raw query as splitPair reads it.
type rawPair struct {
	key, value string // the value still escaped
	empty      bool   // nothing between two '&': no field
	next       int    // where the next pair starts
}

// splitPair reads the pair of query that starts at pos: its key up to '='
// or '&', of RFC 3986's unreserved bytes only (written as they are), and its
// value up to the next '&'. ok is false for a key of any other byte.
func splitPair(query string, pos int) (p rawPair, ok bool) {
	i := pos
	for i < len(query) && queryClass[query[i]] == qPlain {
		i++
	}
	p.key = query[pos:i]
	switch {
	case i == len(query) || query[i] == '&':
		p.empty, p.next = i == pos, i+1
		return p, true
	case query[i] != '=':
		return p, false
	}
	p.value = query[i+1:]
	p.next = len(query) + 1
	if end := strings.IndexByte(p.value, '&'); end >= 0 {
		p.value, p.next = p.value[:end], i+1+end+1
	}
	return p, true
}

// replacedKey reports whether key is exp or signature, a field the signer
// replaces (url.ParseQuery still reads its value).
func replacedKey(key string) bool { return key == fieldSignature || key == fieldExp }

// validRawValue reports whether url.ParseQuery reads value, a raw query
// value, without an error the fast path leaves to the general way; scratch
// is room to write it into.
func validRawValue(scratch []byte, value string) bool {
	_, flags := appendRawEscaped(scratch, value)
	return flags&rawStop == 0
}

// sortedAfter reports whether key may follow prev, the key of the last of
// written fields, in a sorted query: it comes after it (a key given twice
// is a field with several values).
func sortedAfter(prev, key string, written int) bool {
	return written == 0 || keyLess(prev, key)
}

// appendExpField appends exp=<exp>, after '&' when fields come before it.
func appendExpField(dst []byte, written int, exp string) []byte {
	if written > 0 {
		dst = append(dst, '&')
	}
	dst = append(dst, fieldExp+"="...)
	return append(dst, exp...)
}

// appendRawPair appends key=value of a raw query under RFC 3986, key of
// unreserved bytes, after '&' when fields come before it, and reports
// false for a value the fast path does not take.
func appendRawPair(dst []byte, written int, key, value string) ([]byte, bool) {
	if written > 0 {
		dst = append(dst, '&')
	}
	dst = append(dst, key...)
	dst = append(dst, '=')
	start := len(dst)
	dst, flags := appendRawEscaped(dst, value)
	switch {
	case flags&rawStop != 0:
		return dst, false
	case flags&rawOther != 0:
		dst = appendRequoted(dst[:start], value, encRFC3986)
	}
	return dst, true
}
