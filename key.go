package paygate

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/paygate-go/paygate/internal/rawkey"
	"github.com/paygate-go/paygate/internal/signing"
)

// Key is a parsed API key (docs/protocol.md "Signature algorithm", step 5).
// Parse it once with ParseKey and reuse it: a Key keys its HMAC once, so
// that signing and verifying allocate almost nothing. Copies share that
// state and are safe for concurrent use.
//
// A Key never prints its bytes: %v, %+v, %#v, %s, %q, %x, %d, slog and JSON
// or text marshalling all show [REDACTED]. The zero Key is invalid; every
// function that takes one returns an error wrapping ErrInvalidKey.
type Key struct {
	// k is behind a pointer, and its bytes only inside a closure, so that
	// even a struct holding a Key in an unexported field prints an
	// address.
	k *signing.Key
}

// ParseKey parses an API key: a UUID in upper or lower case, with or
// without its four dashes (docs/protocol.md "Signature algorithm", step 5).
// Any other input is an error wrapping ErrInvalidKey that says what is
// wrong (the length, or the position of a non-hex character) without
// echoing the key.
func ParseKey(uuid string) (Key, error) {
	k, err := signing.ParseKey(uuid)
	if err != nil {
		return Key{}, err
	}
	return Key{k: k}, nil
}

// init lets the SDK's own packages sign with a Key (gatewaytest's
// SignCallback, as the gateway signs) through internal/rawkey.
func init() {
	rawkey.Of = func(v any) *signing.Key {
		k, _ := v.(Key)
		return k.k
	}
}

// valid reports whether k came from ParseKey.
func (k Key) valid() bool { return k.k != nil }

// String returns [REDACTED].
func (Key) String() string { return redacted }

// GoString returns [REDACTED], for %#v.
func (Key) GoString() string { return redacted }

// Format prints [REDACTED] whatever the verb.
func (Key) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue makes slog print [REDACTED].
func (Key) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns [REDACTED], so that JSON, XML and any text encoder
// write that. A Key does not unmarshal: parse it with ParseKey.
func (Key) MarshalText() ([]byte, error) { return []byte(redacted), nil }
