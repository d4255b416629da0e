package signing

import (
	"bytes"
	"crypto/hmac"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// VerifyCallback checks the signature of a callback (docs/protocol.md
// "Signature algorithm", callback): every field but signature, sorted,
// form-encoded, no exp, under each of keys (several keys allow rotation),
// the 16 hex characters compared with hmac.Equal. It returns nil,
// ErrSignatureMissing (no signature: the buyer's browser posts the fields
// unsigned) or ErrSignatureMismatch (including a signature that is not 16
// hex characters of either case, and a field given twice). No keys, or a
// nil one, is an error wrapping ErrInvalidKey. It allocates nothing.
//
// The canonical message (url.Values.Encode: space as +, ~ kept, * as %2A)
// is tried first; the variants only when they can differ from it
// (docs/assumptions.md A-callback-encoding): PHP's urlencode when a field
// holds ~, the WHATWG serializer when one holds ~ or *, and RFC 3986 (space
// as %20, the encoding of the public PHP client's http_build_query with
// PHP_QUERY_RFC3986) when one holds a space. In the canonical message a
// literal ~ comes only from a ~, %2A only from a * and + only from a space,
// so the message itself tells which variants can differ: at most four
// candidates.
func VerifyCallback(form url.Values, keys []*Key) error {
	want, err := received(form, keys)
	if err != nil {
		return err
	}
	s := keys[0].get()
	defer keys[0].put(s)
	var space fieldSpace
	fields, err := collect(space[:0], form, "")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSignatureMismatch, err)
	}
	s.buf = appendQuery(s.buf[:0], fields, Form)
	if s.matches(keys, want) {
		return nil
	}
	variants, n := callbackVariants(s.buf)
	for _, e := range variants[:n] {
		s.buf = appendQuery(s.buf[:0], fields, e)
		if s.matches(keys, want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// callbackOrder is the order VerifyCallback tries the variants in, after
// the canonical Form message.
var callbackOrder = [...]Encoding{FormPHP, FormWHATWG, RFC3986}

// callbackVariants lists, in callbackOrder, the encodings whose message can
// differ from the canonical one: those that write a byte the canonical
// message holds (+ for a space, ~, %2A for *) otherwise than Form does.
func callbackVariants(canonical []byte) ([len(callbackOrder)]Encoding, int) {
	space := bytes.IndexByte(canonical, '+') >= 0
	tilde := bytes.IndexByte(canonical, '~') >= 0
	star := bytes.Contains(canonical, []byte("%2A"))
	form := encodings[Form]
	var out [len(callbackOrder)]Encoding
	n := 0
	for _, e := range callbackOrder {
		enc := encodings[e]
		if space && enc.plusSpace != form.plusSpace || tilde && enc.tilde != form.tilde || star && enc.star != form.star {
			out[n] = e
			n++
		}
	}
	return out, n
}

// received checks keys and reads the signature field of form:
// ErrSignatureMissing when absent or empty, ErrSignatureMismatch when
// repeated or not 16 hex characters.
func received(form url.Values, keys []*Key) (Signature, error) {
	if len(keys) == 0 {
		return Signature{}, fmt.Errorf("%w: no key to verify with", ErrInvalidKey)
	}
	for _, k := range keys {
		if k == nil {
			return Signature{}, fmt.Errorf("%w: zero Key (use ParseKey)", ErrInvalidKey)
		}
	}
	sigs := form[FieldSignature]
	// An empty signature is none (docs/assumptions.md A-empty-signature).
	if len(sigs) == 0 || sigs[0] == "" {
		return Signature{}, ErrSignatureMissing
	}
	want, ok := ParseSignature(sigs[0])
	if len(sigs) > 1 || !ok {
		return Signature{}, ErrSignatureMismatch
	}
	return want, nil
}

// matches reports whether the signature of s.buf under any of keys equals
// want, compared in constant time. s belongs to keys[0].
func (s *state) matches(keys []*Key, want Signature) bool {
	for i, k := range keys {
		var got Signature
		if i == 0 {
			got = s.sign(s.buf)
		} else {
			got = k.Sign(s.buf)
		}
		if hmac.Equal(got[:], want[:]) {
			return true
		}
	}
	return false
}

// VerifyForm checks an outbound signed POST as the service does
// (docs/protocol.md "Signature algorithm", outbound POST, from the
// receiver's side): prefix ("" by the protocol, `<path>?` for
// A-post-path) and every field but signature, exp included, sorted, RFC
// 3986 encoded. It returns ErrSignatureExpired when exp is missing, not a
// number, or before now, and otherwise nil, ErrSignatureMissing or
// ErrSignatureMismatch.
func VerifyForm(prefix string, form url.Values, now time.Time, keys []*Key) error {
	want, err := received(form, keys)
	if err != nil {
		return err
	}
	exp, err := strconv.ParseInt(form.Get(FieldExp), 10, 64)
	if err != nil || len(form[FieldExp]) != 1 {
		return fmt.Errorf("%w: exp missing or not Unix seconds", ErrSignatureExpired)
	}
	if now.Unix() > exp {
		return fmt.Errorf("%w: %d s ago", ErrSignatureExpired, now.Unix()-exp)
	}
	s := keys[0].get()
	defer keys[0].put(s)
	var space fieldSpace
	fields, err := collect(space[:0], form, "")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSignatureMismatch, err)
	}
	s.buf = appendQuery(append(s.buf[:0], prefix...), fields, RFC3986)
	if s.matches(keys, want) {
		return nil
	}
	return ErrSignatureMismatch
}

// VerifyURL checks a signed GET as the service does: the message is the
// escaped path, ?, and every query parameter but signature, sorted, RFC
// 3986 encoded. Errors as VerifyForm.
func VerifyURL(u *url.URL, now time.Time, keys []*Key) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("%w: query: %w", ErrSignatureMismatch, err)
	}
	return VerifyForm(urlPath(u)+"?", q, now, keys)
}
