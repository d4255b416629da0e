package gatewaytest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/rawkey"
	"github.com/paygate-go/paygate/internal/signing"
)

// SignCallback signs a callback form the way the gateway does
// (docs/protocol.md "Signature algorithm", callback, from the sender's
// side): every field but signature, sorted, form-encoded with space as +,
// no exp. It returns a copy of form with the signature set, for tests that
// play the gateway; merchants verify with paygate.VerifyCallback. A zero
// Key is an error wrapping paygate.ErrInvalidKey.
func SignCallback(key paygate.Key, form url.Values) (url.Values, error) {
	k := rawkey.Of(key)
	if k == nil {
		return nil, fmt.Errorf("%w: zero Key (use ParseKey)", paygate.ErrInvalidKey)
	}
	return signing.SignCallback(k, form)
}

// NewCallbackRequest builds the direct callback the gateway would POST to a
// returnUrl: fields signed with key (SignCallback), form-encoded, as an
// *http.Request for target (a URL or a path; "" means "/"), ready for a
// handler's ServeHTTP or an http.Client in the merchant's own tests.
func NewCallbackRequest(key paygate.Key, target string, fields url.Values) (*http.Request, error) {
	signed, err := SignCallback(key, fields)
	if err != nil {
		return nil, err
	}
	return NewReturnRequest(target, signed)
}

// NewReturnRequest builds a form POST of fields to target as they are: with
// unsigned fields, the buyer's browser return (docs/protocol.md A2: display
// only).
func NewReturnRequest(target string, fields url.Values) (*http.Request, error) {
	if target == "" {
		target = "/"
	}
	r, err := http.NewRequest(http.MethodPost, target, strings.NewReader(fields.Encode()))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r, nil
}
