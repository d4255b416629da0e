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

// redacted is what every secret prints as.
const redacted = "[REDACTED]"

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
type keyState struct {
	pool sync.Pool // of *signState
}

// signState is the scratch space of one signing or verifying call.
type signState struct {
	mac    hash.Hash
	buf    []byte
	fields []field
	scan   []scanField      // SignURL's fast path (see scanQuery)
	shapes [maxShapes]shape // the field sets seen last (see collect)
	next   int              // the entry of shapes to replace next
	// plain marks the keys of fields (bit i for fields[i]) that every
	// encoding writes unchanged, so appendQuery copies them.
	plain uint32
	sum   []byte
	// the last exp, Unix seconds and text (see expValue)
	expUnix int64
	expStr  string
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
	st := &keyState{}
	st.pool.New = func() any {
		return &signState{mac: hmac.New(sha256.New, raw[:]), sum: make([]byte, 0, sha256.Size)}
	}
	return Key{k: st}
}

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

// get takes scratch space from the key's pool.
func (k Key) get() *signState { return k.k.pool.Get().(*signState) }

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
