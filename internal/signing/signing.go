// Package signing implements the gateway's signature rule for both ends of
// the wire: it signs the SDK's outbound GET and POST requests and verifies
// the gateway's callbacks, and it verifies outbound requests as the service
// does, for the sandbox (gatewaytest) and the command-line tool.
//
// The rule (docs/protocol.md "Signature algorithm"): take the fields (all
// but signature; outbound, add exp = now + 60 s), sort the keys byte-wise,
// write them as a query under an encoding (RFC 3986 outbound, form-style for
// callbacks), and sign `<path>?<query>` (GET) or `<query>` (POST, callback)
// with HMAC-SHA256 under the 16 raw key bytes; the signature is the first 16
// lower-case hex characters of the digest.
//
// It is built plainly: the fields are collected from the url.Values and
// sorted (a callback holding only the protocol's fields has them looked up
// in their sorted order), each byte is escaped through a table (as net/url
// does), and the HMAC state is keyed once per Key and kept in the Key's
// pool, so a verification allocates nothing. The root package wraps it in the API a
// merchant calls (paygate.SignURL, SignForm, VerifyCallback).
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"hash"
	"sync"
	"time"
)

// The errors of this package; the root package exports the same values
// (paygate.ErrSignatureMissing and so on), so errors.Is works across both.
var (
	// ErrSignatureMissing: a callback carries no signature field.
	ErrSignatureMissing = errors.New("paygate: signature missing")
	// ErrSignatureMismatch: the signature does not match any key.
	ErrSignatureMismatch = errors.New("paygate: signature mismatch")
	// ErrInvalidKey: an API key that is not a UUID, or the zero Key.
	ErrInvalidKey = errors.New("paygate: invalid API key")
	// ErrSignatureExpired: an outbound signature past its exp.
	ErrSignatureExpired = errors.New("paygate: signature expired")
	// ErrMultipleValues: a field given more than once.
	ErrMultipleValues = errors.New("paygate: field has several values")
)

// TTL is how long an outbound signature stays valid: exp = now + TTL.
const TTL = 60 * time.Second

// The two field names the signing rule itself adds.
const (
	FieldSignature = "signature"
	FieldExp       = "exp"
)

// A Key signs and verifies under one API key. It keeps a pool of keyed
// HMAC states and scratch buffers, so that a Key must be made once and
// reused. The key bytes live only in the pool's constructor.
type Key struct {
	pool sync.Pool
}

// NewKey returns the Key of the 16 raw key bytes.
func NewKey(raw [16]byte) *Key {
	k := &Key{}
	k.pool.New = func() any {
		return &state{mac: hmac.New(sha256.New, raw[:]), sum: make([]byte, 0, sha256.Size)}
	}
	return k
}

// state is the scratch space of one signing or verifying call.
type state struct {
	mac hash.Hash
	sum []byte
	buf []byte
}

// get takes scratch space from k's pool.
func (k *Key) get() *state { return k.pool.Get().(*state) }

// put empties s's buffer and returns s to k's pool.
func (k *Key) put(s *state) {
	s.buf = s.buf[:0]
	k.pool.Put(s)
}

// Signature is a 16-character lower-case hex signature.
type Signature [16]byte

// sign computes the signature of msg with s's keyed HMAC.
func (s *state) sign(msg []byte) Signature {
	s.mac.Reset()
	s.mac.Write(msg)
	s.sum = s.mac.Sum(s.sum[:0])
	const digits = "0123456789abcdef"
	var sig Signature
	for i := range len(sig) / 2 {
		sig[2*i] = digits[s.sum[i]>>4]
		sig[2*i+1] = digits[s.sum[i]&0x0f]
	}
	return sig
}

// Sign returns the signature of msg under k.
func (k *Key) Sign(msg []byte) Signature {
	s := k.get()
	defer k.put(s)
	return s.sign(msg)
}

// ParseSignature reads a received signature: 16 hex characters of either
// case, returned in lower case. Anything else is false.
func ParseSignature(text string) (Signature, bool) {
	var sig Signature
	if len(text) != len(sig) {
		return sig, false
	}
	for i := range len(sig) {
		c := text[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			c += 'a' - 'A'
		default:
			return sig, false
		}
		sig[i] = c
	}
	return sig, true
}

// ParseKey parses an API key: a UUID in either case, with or without its
// four dashes (docs/protocol.md "Signature algorithm", step 5). Any other
// input is an error wrapping ErrInvalidKey that says what is wrong (the
// length, or the position of a bad character) without echoing the key.
func ParseKey(uuid string) (*Key, error) {
	raw, err := parseUUID(uuid)
	if err != nil {
		return nil, err
	}
	return NewKey(raw), nil
}
