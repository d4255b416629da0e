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
// the merchant's returnUrl (docs/protocol.md "Signature algorithm",
// callback): every field but signature, sorted byte-wise, form-encoded
// (space as +), no exp, signed with HMAC-SHA256 under any of keys (several
// keys allow rotation), and compared in constant time.
//
// It returns nil when the signature matches, ErrSignatureMissing when there
// is none (the buyer's browser posts the same fields unsigned), and
// ErrSignatureMismatch otherwise, including for a signature that is not 16
// hex characters (either case is accepted) and for a form with a field
// given twice (docs/assumptions.md A-multiple-values). No keys, or a zero Key, is an error wrapping ErrInvalidKey.
// It allocates nothing.
//
// Form encoders differ on ~ and *, refNo carries ~ by convention, and the
// gateway's public PHP client signs everything else in RFC 3986 (space as
// %20), so besides the canonical encoding (Go's url.Values.Encode) it
// accepts, only when a field holds a character they write differently, the
// PHP urlencode and WHATWG variants (a ~ or *) and RFC 3986 (a space):
// at most four candidate messages against a 64-bit tag
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
