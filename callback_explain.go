package paygate

import (
	"crypto/hmac"
	"net/url"
)

// CallbackCandidate is one message VerifyCallback tries for a callback,
// with the signature a key gives it: what an operator compares with the
// signature received when a callback does not verify.
type CallbackCandidate struct {
	SignedMessage
	// Expected is the signature the key gives Message: the first 16 hex
	// characters of HMAC-SHA256, in lower case.
	Expected string
	// Matches reports whether Expected equals the signature received
	// (compared with hmac.Equal, in either case of hex).
	Matches bool
}

// ExplainCallback lists what VerifyCallback computes for form under key,
// for debugging a callback that does not verify (docs/protocol.md
// "Signature algorithm", callback; docs/assumptions.md
// A-callback-encoding): the signature received (the form's signature
// field as sent, "" when absent) and every candidate message, in the order
// VerifyCallback tries them, each with the signature the key gives it. The
// key itself appears nowhere in the result. A zero Key is an error
// wrapping ErrInvalidKey; a form VerifyCallback cannot read (a field given
// twice) is an error.
func ExplainCallback(form url.Values, key Key) (received string, candidates []CallbackCandidate, err error) {
	if !key.valid() {
		return "", nil, errZeroKey
	}
	msgs, err := CallbackMessages(form)
	if err != nil {
		return "", nil, err
	}
	received = form.Get(fieldSignature)
	var want [16]byte
	readable := len(form[fieldSignature]) == 1 && lowerHex16(&want, received)
	s := key.get()
	defer key.put(s)
	for _, m := range msgs {
		var sig [16]byte
		s.signature(&sig, []byte(m.Message))
		candidates = append(candidates, CallbackCandidate{SignedMessage: m, Expected: string(sig[:]), Matches: readable && hmac.Equal(sig[:], want[:])})
	}
	return received, candidates, nil
}
