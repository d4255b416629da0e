package paygate

import (
	"net/http"
	"net/url"
	"strings"
)

// NewCallbackRequest builds the direct callback the gateway would POST to a
// returnUrl: fields signed with key (SignCallback), form-encoded, as an
// *http.Request for target (a URL or a path; "" means "/"), ready for a
// handler's ServeHTTP or an http.Client in the merchant's own tests.
func NewCallbackRequest(key Key, target string, fields url.Values) (*http.Request, error) {
	signed, err := SignCallback(key, fields)
	if err != nil {
		return nil, err
	}
	return NewReturnRequest(target, signed)
}

// NewReturnRequest builds a form POST of fields to target as they are: with
// unsigned fields, the buyer's browser return (docs/protocol.md A2: display only).
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
