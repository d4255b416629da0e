package paygate

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SignatureTTL is how long an outbound signature stays valid (docs/protocol.md
// "Authentication": "An outbound signature is valid for 60 s through exp").
// Signing sets exp to now + SignatureTTL, in Unix seconds.
const SignatureTTL = 60 * time.Second

// signState is the scratch space of one signing or verifying call, kept in
// its Key's pool: the HMAC keyed once, the message buffer, the
// canonicaliser and the URL fast path's fields.
type signState struct {
	canonicaliser
	urlScan
	mac hash.Hash
	buf []byte
	sum []byte
	// the last exp, Unix seconds and text (see expValue)
	expUnix int64
	expStr  string
}

// get takes scratch space from the key's pool, or makes it.
func (k Key) get() *signState {
	if s, ok := k.k.pool.Get().(*signState); ok {
		return s
	}
	return &signState{mac: k.newMAC(), sum: make([]byte, 0, sha256.Size)}
}

// put returns scratch space to the key's pool.
func (k Key) put(s *signState) {
	clear(s.fields) // drop references to the caller's strings
	s.fields = s.fields[:0]
	s.buf = s.buf[:0]
	k.k.pool.Put(s)
}

// signature computes the 16-hex signature of msg into dst (docs/protocol.md "Authentication"
// steps 6-7: HMAC-SHA256, hex, first 16 characters).
func (s *signState) signature(dst *[16]byte, msg []byte) {
	s.mac.Reset()
	s.mac.Write(msg)
	s.sum = s.mac.Sum(s.sum[:0])
	const digits = "0123456789abcdef"
	for i := 0; i < 8; i++ {
		dst[2*i] = digits[s.sum[i]>>4]
		dst[2*i+1] = digits[s.sum[i]&0x0f]
	}
}

// errZeroKey is returned when a function is handed the zero Key.
var errZeroKey = fmt.Errorf("%w: zero Key (use ParseKey)", ErrInvalidKey)

// SignURL signs an outbound GET request (docs/protocol.md "Authentication", "outbound
// GET"). It takes every query parameter of rawURL, sets exp to now + 60 s,
// sorts the keys byte-wise, and signs `<path>?<query>` with the query RFC 3986
// encoded (A-Z a-z 0-9 - . _ ~ kept, everything else %XX, space %20). It
// returns scheme://host, that message, and `&signature=<16 hex>`.
//
// The path is signed as it is escaped in rawURL (an empty path is "/"). The
// query of rawURL is decoded first, so `+` in it means a space and is signed
// as %20. A parameter named exp or signature in rawURL is replaced, never
// duplicated. A parameter with several values is an error wrapping
// ErrMultipleValues: the gateway's parameters are single-valued. rawURL must be
// absolute and carry no fragment or user information.
func SignURL(key Key, rawURL string, now time.Time) (string, error) {
	if !key.valid() {
		return "", errZeroKey
	}
	s := key.get()
	defer key.put(s)
	var start int
	var err error
	if s.buf, start, err = s.appendURLMessageOf(s.buf[:0], rawURL, s.expValue(now)); err != nil {
		return "", err
	}
	var sig [16]byte
	s.signature(&sig, s.buf[start:])
	s.buf = append(s.buf, "&signature="...)
	s.buf = append(s.buf, sig[:]...)
	return string(s.buf), nil
}

// SignForm signs an outbound POST body (docs/protocol.md "Authentication", "outbound
// POST"): the same as SignURL but the message is the RFC 3986 query alone,
// with no path. It returns a copy of form holding exp (now + 60 s) and
// signature; form itself is not modified. Fields named exp or signature in
// form are replaced, fields with no value are left out, and a field with
// several values is an error wrapping ErrMultipleValues.
func SignForm(key Key, form url.Values, now time.Time) (url.Values, error) {
	return signForm(key, "", form, now)
}

// SignFormWithPath signs an outbound POST body the way the gateway's older
// public client does: the message is `<path>?<query>`, as for a GET, where
// the protocol signs the query alone (docs/assumptions.md A-post-path). It is
// a compatibility switch for a service that expects that form (Client:
// WithPOSTSignedWithPath); SignForm is the protocol's rule. path is the
// request's escaped path, such as /v2/checkout.
func SignFormWithPath(key Key, path string, form url.Values, now time.Time) (url.Values, error) {
	return signForm(key, path+"?", form, now)
}

// signForm signs prefix + the RFC 3986 query of form with exp.
func signForm(key Key, prefix string, form url.Values, now time.Time) (url.Values, error) {
	if !key.valid() {
		return nil, errZeroKey
	}
	s := key.get()
	defer key.put(s)
	if err := s.collect(form, s.expValue(now), false); err != nil {
		return nil, err
	}
	s.buf = append(s.buf[:0], prefix...)
	s.buf = s.appendQuery(s.buf, encRFC3986)
	var sig [16]byte
	s.signature(&sig, s.buf)
	return s.signedCopy(&sig), nil
}

// signFormBody signs prefix + the RFC 3986 query of form with exp, as
// signForm does, and returns the request body: the fields with exp and
// signature, sorted, form-encoded as url.Values.Encode writes them. It is
// byte for byte signForm(...).Encode(), without the url.Values in between:
// the Client's POST path.
//
// The body is mostly the signed message itself: form encoding and RFC 3986
// differ only on a space (+ against %20). So the message is copied, in as
// few pieces as the signature's place and the fields with a space make,
// and only a field with a space is encoded again.
func signFormBody(key Key, prefix string, form url.Values, now time.Time) (string, error) {
	if !key.valid() {
		return "", errZeroKey
	}
	s := key.get()
	defer key.put(s)
	if err := s.collect(form, s.expValue(now), false); err != nil {
		return "", err
	}
	s.buf = append(s.buf[:0], prefix...)
	s.buf = s.appendQuery(s.buf, encRFC3986)
	var sig [16]byte
	s.signature(&sig, s.buf)
	if body, ok := s.appendBodyVector(&sig); ok {
		return body, nil
	}
	// The body goes after the message in the same buffer; the message is
	// read through indexes, as appending may move it.
	end := len(s.buf)
	s.buf = slices.Grow(s.buf, end-len(prefix)+len("&signature=")+len(sig))
	start := end
	from := len(prefix)  // the message is in the body up to here
	field := len(prefix) // where the field at hand starts in the message
	signed := false      // the signature written, in its sorted place
	for i, f := range s.fields {
		if !signed && fieldSignature < f.key {
			s.buf = append(s.buf, s.buf[from:field]...)
			s.buf = append(s.buf, fieldSignature+"="...)
			s.buf = append(s.buf, sig[:]...)
			s.buf = append(s.buf, '&')
			from, signed = field, true
		}
		if strings.IndexByte(f.key, ' ') >= 0 || strings.IndexByte(f.value, ' ') >= 0 {
			s.buf = append(s.buf, s.buf[from:field]...)
			s.buf = appendEscaped(s.buf, f.key, encFormGo)
			s.buf = append(s.buf, '=')
			s.buf = appendEscaped(s.buf, f.value, encFormGo)
			from = s.ends[i]
		}
		field = s.ends[i] + 1 // after the '&'
	}
	s.buf = append(s.buf, s.buf[from:end]...)
	if !signed {
		if len(s.fields) > 0 {
			s.buf = append(s.buf, '&')
		}
		s.buf = append(s.buf, fieldSignature+"="...)
		s.buf = append(s.buf, sig[:]...)
	}
	return string(s.buf[start:]), nil
}

// appendBodyVector writes the body of signFormBody after the message in
// s.buf, and returns it, when the vector escaper runs (appendFieldsVector):
// then encoding the fields again, in two runs around the signature's
// place, costs less than finding the fields with a space and copying the
// message around them.
func (s *signState) appendBodyVector(sig *[16]byte) (string, bool) {
	at, _ := slices.BinarySearchFunc(s.fields, fieldSignature, func(f field, k string) int { return strings.Compare(f.key, k) })
	start := len(s.buf)
	body, ends, ok := appendFieldsVector(s.buf, s.fields[:at], s.ends, s.plain, encFormGo)
	if !ok {
		return "", false
	}
	if at > 0 {
		body = append(body, '&')
	}
	body = append(body, fieldSignature+"="...)
	body = append(body, sig[:]...)
	if at < len(s.fields) {
		body = append(body, '&')
		body, ends, _ = appendFieldsVector(body, s.fields[at:], ends, s.plain>>at, encFormGo)
	}
	s.buf, s.ends = body, ends
	return string(body[start:]), true
}

// SignCallback signs a callback form the way the gateway does (docs/protocol.md
// "Authentication", "callback verification", seen from the sender): every field
// but signature, sorted, form-encoded with space as +, no exp. It returns a
// copy of form with the signature field set. It exists for tests and sandboxes
// that play the gateway; merchants verify with VerifyCallback.
func SignCallback(key Key, form url.Values) (url.Values, error) {
	if !key.valid() {
		return nil, errZeroKey
	}
	s := key.get()
	defer key.put(s)
	if err := s.collect(form, "", false); err != nil {
		return nil, err
	}
	s.buf = s.appendQuery(s.buf[:0], encFormGo)
	var sig [16]byte
	s.signature(&sig, s.buf)
	return s.signedCopy(&sig), nil
}

// VerifyCallback checks the signature of a callback the gateway POSTed to the
// merchant's returnUrl (docs/protocol.md "Signature algorithm", callback): every
// field but signature, sorted byte-wise, form-encoded (space as +), no exp
// added; HMAC-SHA256 under each of keys (several keys allow rotation); the
// first 16 hex characters compared in constant time with hmac.Equal.
//
// It returns nil when the signature matches, ErrSignatureMissing when there is
// none (the buyer's browser posts the same fields unsigned), and
// ErrSignatureMismatch otherwise, including for a signature that is not 16 hex
// characters (either case is accepted) and for a form in which a field has
// several values. An empty keys list or a zero Key is an error wrapping
// ErrInvalidKey.
//
// "Form-style" encoding differs between encoders on two characters, and refNo
// carries ~ by convention, so a strict verifier would reject genuine paid
// callbacks. The canonical message (Go's url.Values.Encode: ~ kept, * as %2A)
// is tried first; only when a field contains ~ or *, the variants of PHP's
// urlencode (~ as %7E, * as %2A) and of the WHATWG form serializer used by
// browsers and Java's URLEncoder (~ as %7E, * kept) are tried too. At most
// three candidates against a 64-bit tag leave forgery odds negligible
// (docs/assumptions.md A-callback-encoding). CallbackMessages lists the
// candidates.
func VerifyCallback(form url.Values, keys ...Key) error {
	var want [16]byte
	if err := receivedSignature(&want, form, keys, "VerifyCallback"); err != nil {
		return err
	}
	s := keys[0].get()
	defer keys[0].put(s)
	if err := s.collect(form, "", true); err != nil {
		return fmt.Errorf("%w: %w", ErrSignatureMismatch, err)
	}
	s.buf = s.appendQuery(s.buf[:0], encFormGo)
	if s.matches(keys, &want) {
		return nil
	}
	variants, n := callbackVariants(s.buf)
	for _, enc := range variants[:n] {
		s.buf = s.appendQuery(s.buf[:0], enc)
		if s.matches(keys, &want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// receivedSignature checks the keys and reads the signature field of form
// into want, in lower case: ErrSignatureMissing when absent or empty,
// ErrSignatureMismatch when repeated or not 16 hex characters.
func receivedSignature(want *[16]byte, form url.Values, keys []Key, who string) error {
	if len(keys) == 0 {
		return fmt.Errorf("%w: %s needs at least one key", ErrInvalidKey, who)
	}
	for _, k := range keys {
		if !k.valid() {
			return errZeroKey
		}
	}
	sigs := form[fieldSignature]
	if len(sigs) == 0 || sigs[0] == "" {
		return ErrSignatureMissing
	}
	if len(sigs) > 1 || !lowerHex16(want, sigs[0]) {
		return ErrSignatureMismatch
	}
	return nil
}

// VerifySignedForm checks an outbound-style signed POST as the service does
// (docs/protocol.md "Signature algorithm", outbound POST, seen from the receiver): every
// field but signature, exp included, sorted, RFC 3986 encoded, no path. It
// returns ErrSignatureExpired when exp is missing, not a number, or before
// now, and otherwise nil, ErrSignatureMissing or ErrSignatureMismatch. It is
// what the sandbox (gatewaytest) runs on the SDK's requests.
func VerifySignedForm(form url.Values, now time.Time, keys ...Key) error {
	return verifyOutbound("", form, now, keys)
}

// VerifySignedFormWithPath is VerifySignedForm for a POST signed with its
// path (SignFormWithPath): the message is `<path>?<query>`.
func VerifySignedFormWithPath(path string, form url.Values, now time.Time, keys ...Key) error {
	return verifyOutbound(path+"?", form, now, keys)
}

// VerifySignedURL checks a signed GET as the service does: the message is
// the escaped path, ?, and every query parameter but signature, sorted, RFC
// 3986 encoded. Errors as VerifySignedForm.
func VerifySignedURL(u *url.URL, now time.Time, keys ...Key) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("%w: query: %w", ErrSignatureMismatch, err)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return verifyOutbound(path+"?", q, now, keys)
}

// verifyOutbound checks exp, then the signature over prefix + query.
func verifyOutbound(prefix string, form url.Values, now time.Time, keys []Key) error {
	var want [16]byte
	if err := receivedSignature(&want, form, keys, "VerifySigned"); err != nil {
		return err
	}
	exp, err := strconv.ParseInt(form.Get(fieldExp), 10, 64)
	if err != nil || len(form[fieldExp]) != 1 {
		return fmt.Errorf("%w: exp missing or not Unix seconds", ErrSignatureExpired)
	}
	if now.Unix() > exp {
		return fmt.Errorf("%w: %d s ago", ErrSignatureExpired, now.Unix()-exp)
	}
	s := keys[0].get()
	defer keys[0].put(s)
	if err := s.collect(form, "", true); err != nil {
		return fmt.Errorf("%w: %w", ErrSignatureMismatch, err)
	}
	s.buf = s.appendQuery(append(s.buf[:0], prefix...), encRFC3986)
	if s.matches(keys, &want) {
		return nil
	}
	return ErrSignatureMismatch
}

// matches reports whether the signature of s.buf under any of keys equals
// want, comparing in constant time. keys[0] is the key s belongs to.
func (s *signState) matches(keys []Key, want *[16]byte) bool {
	for i, k := range keys {
		var got [16]byte
		if i == 0 {
			s.signature(&got, s.buf)
		} else {
			ks := k.get()
			ks.signature(&got, s.buf)
			k.put(ks)
		}
		if hmac.Equal(got[:], want[:]) {
			return true
		}
	}
	return false
}

// SignedMessage is one exact string that a signature is computed over, with
// the name of the encoding that produced it: "rfc3986" (outbound), "form"
// (canonical callback), "form-php" or "form-whatwg" (callback variants).
type SignedMessage struct {
	// Encoding names the encoding: rfc3986, form, form-php, form-whatwg.
	Encoding string
	// Message is the exact string the HMAC is computed over.
	Message string
}

// URLMessage returns the exact message SignURL signs for rawURL at now, for
// debugging a signature the gateway rejects.
func URLMessage(rawURL string, now time.Time) (SignedMessage, error) {
	var s signState
	msg, start, err := s.appendURLMessageOf(nil, rawURL, s.expValue(now))
	if err != nil {
		return SignedMessage{}, err
	}
	return SignedMessage{Encoding: encRFC3986.String(), Message: string(msg[start:])}, nil
}

// FormMessage returns the exact message SignForm signs for form at now.
func FormMessage(form url.Values, now time.Time) (SignedMessage, error) {
	var s signState
	if err := s.collect(form, s.expValue(now), false); err != nil {
		return SignedMessage{}, err
	}
	return SignedMessage{Encoding: encRFC3986.String(), Message: string(s.appendQuery(nil, encRFC3986))}, nil
}

// FormMessageWithPath returns the exact message SignFormWithPath signs.
func FormMessageWithPath(path string, form url.Values, now time.Time) (SignedMessage, error) {
	m, err := FormMessage(form, now)
	m.Message = path + "?" + m.Message
	return m, err
}

// CallbackMessages returns every message VerifyCallback tries for form, in
// the order it tries them: the canonical one first, then the encoder variants
// when a field contains ~ or *.
func CallbackMessages(form url.Values) ([]SignedMessage, error) {
	var s signState
	if err := s.collect(form, "", false); err != nil {
		return nil, err
	}
	canonical := s.appendQuery(nil, encFormGo)
	variants, n := callbackVariants(canonical)
	out := make([]SignedMessage, 1, 1+n)
	out[0] = SignedMessage{Encoding: encFormGo.String(), Message: string(canonical)}
	for _, enc := range variants[:n] {
		out = append(out, SignedMessage{Encoding: enc.String(), Message: string(s.appendQuery(nil, enc))})
	}
	return out, nil
}

// expValue is the exp field for a signature made at now. The pooled state
// keeps the last one, so signing many requests within a second formats and
// allocates it once.
func (s *signState) expValue(now time.Time) string {
	exp := now.Add(SignatureTTL).Unix()
	if s.expStr == "" || s.expUnix != exp {
		s.expUnix, s.expStr = exp, strconv.FormatInt(exp, 10)
	}
	return s.expStr
}

// parseSignURL splits an absolute URL into its parts and decoded query.
func parseSignURL(rawURL string) (*url.URL, url.Values, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, fmt.Errorf("paygate: sign URL: %w", err)
	}
	switch {
	case u.Scheme == "" || u.Host == "":
		return nil, nil, errors.New("paygate: sign URL: need an absolute URL with scheme and host")
	case u.Fragment != "" || u.RawFragment != "":
		return nil, nil, errors.New("paygate: sign URL: a fragment is never sent and cannot be signed")
	case u.User != nil:
		return nil, nil, errors.New("paygate: sign URL: user information is not allowed")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, nil, fmt.Errorf("paygate: sign URL: query: %w", err)
	}
	return u, q, nil
}

// appendURLMessage appends the GET message `<path>?<query>` to dst.
func (s *signState) appendURLMessage(dst []byte, u *url.URL, q url.Values, exp string) ([]byte, error) {
	if err := s.collect(q, exp, false); err != nil {
		return dst, err
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	dst = append(dst, path...)
	dst = append(dst, '?')
	return s.appendQuery(dst, encRFC3986), nil
}

// appendURLMessageOf appends scheme://host to dst, then the GET message
// `<path>?<query>` of rawURL with exp, and returns where the message
// starts: by the fast path when rawURL has its shape, else by url.Parse
// and url.ParseQuery (whose errors it returns).
func (s *signState) appendURLMessageOf(dst []byte, rawURL, exp string) ([]byte, int, error) {
	if origin, path, query, ok := simpleURL(rawURL); ok {
		base := len(dst)
		dst = append(dst, origin...)
		start := len(dst)
		dst = append(dst, path...)
		dst = append(dst, '?')
		if out, ok := s.appendSortedQueryVector(dst, query, exp); ok {
			return out, start, nil
		}
		if out, ok := appendSortedQuery(dst, query, exp); ok {
			return out, start, nil
		}
		if s.scanQuery(query) {
			return s.appendScanned(dst, query, exp), start, nil
		}
		dst = dst[:base]
	}
	u, q, err := parseSignURL(rawURL)
	if err != nil {
		return dst, 0, err
	}
	dst = append(dst, u.Scheme...)
	dst = append(dst, "://"...)
	dst = append(dst, u.Host...)
	start := len(dst)
	dst, err = s.appendURLMessage(dst, u, q, exp)
	return dst, start, err
}

// callbackVariants lists the encoder variants VerifyCallback tries after the
// canonical message, given that message: the PHP variant when a field has ~,
// the WHATWG variant when one has ~ or *. In the canonical message a literal ~
// comes only from a ~ and %2A only from a * ('%' always starts a triplet), so
// the message tells without another pass over the fields.
func callbackVariants(canonical []byte) ([2]queryEncoding, int) {
	switch {
	case bytes.IndexByte(canonical, '~') >= 0:
		return [2]queryEncoding{encFormPHP, encFormHTML}, 2
	case bytes.Contains(canonical, []byte("%2A")):
		return [2]queryEncoding{encFormHTML}, 1
	}
	return [2]queryEncoding{}, 0
}

// signedCopy returns a fresh url.Values with s.fields and the signature. All
// values share one backing array, each capped, so the copy costs two
// allocations plus the map.
func (s *signState) signedCopy(sig *[16]byte) url.Values {
	n := len(s.fields)
	vals := make([]string, n+1)
	out := make(url.Values, n+1)
	for i, f := range s.fields {
		vals[i] = f.value
		out[f.key] = vals[i : i+1 : i+1]
	}
	vals[n] = string(sig[:])
	out[fieldSignature] = vals[n:]
	return out
}

// lowerHex16 copies a 16-character hex signature into dst in lower case, and
// reports false for anything else.
func lowerHex16(dst *[16]byte, sig string) bool {
	if len(sig) != 16 {
		return false
	}
	for i := 0; i < 16; i++ {
		c := sig[i]
		if _, ok := hexValue(c); !ok {
			return false
		}
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return true
}
