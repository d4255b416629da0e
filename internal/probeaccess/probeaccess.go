// Package probeaccess lets package probe send the odd requests a
// conformance probe needs (a signature tampered with, a POST signed over its
// path, a request with no credential) through a paygate.Client's own
// transport, which refuses redirects and dates signatures on the service's
// clock, without a method in paygate's API that would hand a credential to
// anyone. The root package sets the functions when it is initialised (they
// take any: this package cannot name paygate.Client).
package probeaccess

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Host names the host a Request goes to.
type Host int

const (
	// Reports is the reports host (WithReportsURL).
	Reports Host = iota
	// Checkout is the checkout host (WithCheckoutURL); Path "" is the
	// checkout target itself.
	Checkout
	// Pay is the pay-link host (WithPayURL, else the checkout host).
	Pay
)

// Auth is the credential a Request carries.
type Auth int

const (
	// AuthNone sends no credential.
	AuthNone Auth = iota
	// AuthSigned signs with the API key (GET: the URL, agency added;
	// POST: the form).
	AuthSigned
	// AuthBearer sends the AuthToken.
	AuthBearer
)

// Request is one probe request: one attempt, never retried.
type Request struct {
	// Method is GET when empty, or POST (a form).
	Method string
	// Host is the host the request goes to.
	Host Host
	// Path follows the host's URL (for Checkout, "" is the checkout target).
	Path string
	// Query is the GET query or the POST form.
	Query url.Values
	// Auth is the credential sent.
	Auth Auth
	// SignAt dates the signature (zero: the client's clock, corrected by
	// the service's Date).
	SignAt time.Time
	// Tamper, when set, rewrites the 16-hex signature before sending.
	Tamper func(signature string) string
	// SignPath signs a POST over <path>?<query> (A-post-path's other reading).
	SignPath bool
}

// Answer is the service's answer: any status (a 3xx is not followed), its
// headers, and its body's start, each scrubbed of the request's
// credentials (whatever the status), so that the probe may quote them.
type Answer struct {
	// Status is the HTTP status.
	Status int
	// Header is the answer's header (for a non-2xx, only Location's host).
	Header http.Header
	// Body is the start of the body (for a non-2xx, its first 4 KiB).
	Body []byte
}

// Info is what a probe may know of a client: no credential.
type Info struct {
	// Agency is the client's agency (WithAgency).
	Agency string
	// HasKey tells whether the client has an API key.
	HasKey bool
	// HasToken tells whether the client has an AuthToken.
	HasToken bool
	// ReportsURL is the reports host ("" when unset).
	ReportsURL string
	// CheckoutTarget is where orders are POSTed ("" when unset).
	CheckoutTarget string
	// PayBase is the pay links' URL up to and with /pay/ ("" when unset).
	PayBase string
	// Report is the payment report's path.
	Report string
	// Lookup is the order lookup's path.
	Lookup string
	// Transactions is the transaction history's path.
	Transactions string
	// BankList is the bank list's path prefix.
	BankList string
	// Version is the version's path.
	Version string
	// Echo is the echo's path.
	Echo string
}

var (
	// Describe returns what a *paygate.Client is configured with; false for
	// any other value.
	Describe func(client any) (Info, bool)
	// Do sends r with the client's transport, once.
	Do func(ctx context.Context, client any, r Request) (*Answer, error)
	// Wrapped returns a copy of the client whose HTTP round trips all go
	// through wrap (the probe's pacing), or nil for any other value.
	Wrapped func(client any, wrap func(http.RoundTripper) http.RoundTripper) any
)
