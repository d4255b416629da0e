package paygate

import (
	"fmt"
	"net/url"
	"time"

	"github.com/paygate-go/paygate/internal/signing"
)

// SignatureTTL is how long an outbound signature stays valid
// (docs/protocol.md "Authentication"): signing sets exp to now +
// SignatureTTL, in Unix seconds.
const SignatureTTL = signing.TTL

// errZeroKey is returned when a function is handed the zero Key.
var errZeroKey = fmt.Errorf("%w: zero Key (use ParseKey)", ErrInvalidKey)

// SignURL signs an outbound GET request (docs/protocol.md "Signature
// algorithm", outbound GET). It returns rawURL with exp (now + 60 s) and
// signature added: the signature covers `<path>?<query>`, every query
// parameter sorted byte-wise and RFC 3986 encoded (A-Z a-z 0-9 - . _ ~
// kept, everything else %XX, space %20).
//
// The path is signed as escaped in rawURL ("/" when empty). The query is
// decoded first, so + in it is a space, signed as %20. Parameters named
// exp or signature are replaced, never duplicated. A parameter with several
// values is an error wrapping ErrMultipleValues. rawURL must be absolute,
// with no fragment or user information.
func SignURL(key Key, rawURL string, now time.Time) (string, error) {
	if !key.valid() {
		return "", errZeroKey
	}
	return signing.SignURL(key.k, rawURL, now)
}

// SignForm signs an outbound POST body (docs/protocol.md "Signature
// algorithm", outbound POST): as SignURL, but the message is the RFC 3986
// query alone, with no path. It returns a copy of form holding exp (now +
// 60 s) and signature; form itself is not modified. Fields named exp or
// signature are replaced, fields with no value are left out, and a field
// with several values is an error wrapping ErrMultipleValues.
func SignForm(key Key, form url.Values, now time.Time) (url.Values, error) {
	if !key.valid() {
		return nil, errZeroKey
	}
	return signing.SignForm(key.k, "", form, now)
}

// VerifyCallback checks the signature of a callback the gateway POSTed to
// the merchant's returnUrl (docs/protocol.md "Signature algorithm") under
// any of keys, in constant time, allocating nothing. It returns nil when
// the signature matches, ErrSignatureMissing when there is none (the
// buyer's browser posts the same fields unsigned), and
// ErrSignatureMismatch otherwise, a field given twice included
// (A-multiple-values); no keys, or a zero Key, wraps ErrInvalidKey. Besides
// the canonical encoding it tries the PHP, WHATWG and RFC 3986 variants
// only when a field holds a character they write differently
// (docs/assumptions.md A-callback-encoding).
func VerifyCallback(form url.Values, keys ...Key) error {
	var inline [4]*signing.Key
	ks := inline[:0]
	for _, k := range keys {
		if !k.valid() {
			return errZeroKey
		}
		ks = append(ks, k.k)
	}
	return signing.VerifyCallback(form, ks)
}
