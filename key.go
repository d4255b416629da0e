package paygate

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"sync"
)

// Key is a parsed API key (docs/protocol.md "Signature algorithm", step 5: the UUID with dashes
// removed, hex-decoded into 16 raw bytes). Parse it once with ParseKey and
// reuse it: a Key keeps a pool of HMAC states so that signing and verifying
// allocate almost nothing.
//
// A Key never prints its bytes: %v, %+v, %#v, %s, %q, %x, %d, slog and
// JSON or text marshalling all show [REDACTED]. The zero Key is invalid; every function that takes one returns
// ErrInvalidKey for it.
type Key struct {
	k *keyState
}

// keyState is shared by copies of a Key. It is behind a pointer so that even a
// struct holding a Key in an unexported field prints an address, not bytes.
// The key bytes live only inside newMAC's closure, which no fmt verb
// reaches. The signer keeps its scratch space in pool (see Key.get in
// sign.go).
type keyState struct {
	newMAC func() hash.Hash
	pool   sync.Pool
}

// ParseKey parses an API key: a UUID in upper or lower case, with or without
// its four dashes (docs/protocol.md "Signature algorithm", steps 5). Any other input is an error
// wrapping ErrInvalidKey that says what is wrong (length, or the position of a
// non-hex character) without echoing the key.
func ParseKey(uuid string) (Key, error) {
	var raw [16]byte
	n := 0 // hex digits seen
	for i := 0; i < len(uuid); i++ {
		c := uuid[i]
		if c == '-' {
			if n != 8 && n != 12 && n != 16 && n != 20 || i > 0 && uuid[i-1] == '-' {
				return Key{}, fmt.Errorf("%w: dash at position %d is not where a UUID has one", ErrInvalidKey, i+1)
			}
			continue
		}
		v, ok := hexValue(c)
		if !ok {
			return Key{}, fmt.Errorf("%w: non-hex character at position %d", ErrInvalidKey, i+1)
		}
		if n == 32 {
			return Key{}, fmt.Errorf("%w: more than 32 hex digits", ErrInvalidKey)
		}
		raw[n/2] |= v << (4 * (1 - n%2))
		n++
	}
	if n != 32 {
		return Key{}, fmt.Errorf("%w: %d hex digits, want 32", ErrInvalidKey, n)
	}
	if l := len(uuid); l != 32 && l != 36 {
		return Key{}, fmt.Errorf("%w: %d characters, want 32 (no dashes) or 36 (UUID)", ErrInvalidKey, l)
	}
	return newKey(raw), nil
}

// newKey builds a Key from its raw bytes.
func newKey(raw [16]byte) Key {
	return Key{k: &keyState{newMAC: func() hash.Hash { return hmac.New(sha256.New, raw[:]) }}}
}

// newMAC returns an HMAC-SHA256 keyed with the key's 16 raw bytes
// (docs/protocol.md "Signature algorithm", step 6).
func (k Key) newMAC() hash.Hash { return k.k.newMAC() }

// hexValue decodes one hex digit of either case.
func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// valid reports whether k came from ParseKey.
func (k Key) valid() bool { return k.k != nil }

// String returns [REDACTED].
func (Key) String() string { return redacted }

// GoString returns [REDACTED], for %#v.
func (Key) GoString() string { return redacted }

// Format prints [REDACTED] whatever the verb, so that no format reaches the
// key bytes.
func (Key) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue makes slog print [REDACTED].
func (Key) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns [REDACTED], so that JSON, XML and any text encoder
// write that instead of an empty object. A Key does not unmarshal: parse
// it with ParseKey.
func (Key) MarshalText() ([]byte, error) { return []byte(redacted), nil }
