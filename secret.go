package paygate

import (
	"fmt"
	"io"
	"log/slog"
)

// secret holds a credential the SDK sends (AuthToken, webhook password). Like
// Key, it prints as [REDACTED] under every fmt verb, in slog and when
// marshalled (JSON, text), so that no error, log line or %v of an SDK value
// can carry it (docs/protocol.md "Authentication").
type secret struct {
	s *string
}

// newSecret wraps v; the empty string gives the zero secret.
func newSecret(v string) secret {
	if v == "" {
		return secret{}
	}
	return secret{&v}
}

// reveal returns the credential, for the one place that puts it on the wire.
func (s secret) reveal() string {
	if s.s == nil {
		return ""
	}
	return *s.s
}

// String returns [REDACTED].
func (secret) String() string { return redacted }

// GoString returns [REDACTED], for %#v.
func (secret) GoString() string { return redacted }

// Format prints [REDACTED] whatever the verb.
func (secret) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue makes slog print [REDACTED].
func (secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns [REDACTED], so that JSON, XML and any text encoder
// write that instead of an empty object.
func (secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
