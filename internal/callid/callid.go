// Package callid names one logical call of the SDK (a request and all its
// retries, or one webhook batch) so that its log lines, its errors and a
// report can be matched with each other and with the service's logs.
//
// New draws 8 bytes from crypto/rand for every call, so there is no state
// to share between clients. FromHeader reads the service's own request ID
// from an answer, if it sends one (docs/assumptions.md A-request-id): it
// is outside input that goes into error text and logs, so it is cut to
// MaxServer bytes and kept only when every byte is printable ASCII.
package callid

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// Header is the request header that carries the call's ID to the service
// (docs/assumptions.md A-request-id).
const Header = "X-Request-Id"

// MaxServer caps the length of a request ID kept from an answer.
const MaxServer = 128

// serverHeaders are the answer headers read for the service's request ID,
// in order of preference.
var serverHeaders = [...]string{"X-Request-Id", "Request-Id"}

// New returns a fresh ID: 16 lowercase hex characters from crypto/rand.
// It is not a secret and is unique in practice (64 random bits).
func New() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand.Read crashes the program instead (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// FromHeader returns the service's request ID from an answer's header:
// the first of X-Request-Id and Request-Id present, cut to MaxServer
// bytes; "" when neither is there or the value holds a byte that is not
// printable ASCII (a control character would forge log lines).
func FromHeader(h http.Header) string {
	for _, name := range serverHeaders {
		v := h.Get(name)
		if v == "" {
			continue
		}
		if len(v) > MaxServer {
			v = v[:MaxServer]
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x21 || v[i] > 0x7e {
				return ""
			}
		}
		return v
	}
	return ""
}
