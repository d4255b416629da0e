package paygate

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Client calls the gateway for a merchant (an agency): orders and hosted
// checkout, pay URLs, QR codes, reports and order lookup (docs/protocol.md
// endpoints 1-5). Build it with NewClient; it is safe for concurrent use.
//
// Credentials (docs/protocol.md "Authentication"): the API key signs orders, QR requests
// and pay URLs, and reports when no AuthToken is set; the AuthToken (Bearer)
// is preferred for reports because it spans related agencies. The deprecated
// token / username+password method is refused (ErrDeprecatedAuth).
type Client struct {
	agency      string
	key         Key
	authToken   secret
	checkoutURL *url.URL
	reportsURL  *url.URL
	payURL      *url.URL // nil: pay links are on the checkout host
	endpoints   Endpoints
	now         func() time.Time
	transport   transport
	// postWithPath signs POSTs over <path>?<query> (WithPOSTSignedWithPath).
	postWithPath bool
	// noCreateOrFind: CreateOrder does not look up an order whose answer
	// was lost (WithoutCreateOrFind).
	noCreateOrFind bool
	// fromEnv, set by NewClientFromEnv, names the environment variable
	// of an option and the error of its being unset, so that errors name
	// the variable (setting); "" for an option no variable sets.
	fromEnv func(opt string) (variable string, unset error)
}

// Option configures a Client. The options that a Client and a
// WebhookSender share (WithHTTPClient, WithLogger, WithRetry,
// WithAttemptTimeout, WithObserver) are TransportOptions, which serve as both.
type Option interface {
	applyClient(*Client) error
}

// clientOption is an Option for a Client only.
type clientOption func(*Client) error

func (o clientOption) applyClient(c *Client) error { return o(c) }

// applyClient makes a TransportOption an Option: it sets the Client's transport.
func (o TransportOption) applyClient(c *Client) error {
	if o == nil {
		return errNilOption
	}
	return o(&c.transport)
}

// WithAgency sets the agency identifier sent with every API-key request
// (docs/protocol.md A1 and Authentication: the key is fixed to one agency).
func WithAgency(agency string) Option {
	return clientOption(func(c *Client) error {
		if agency == "" {
			return errors.New("paygate: WithAgency: empty agency")
		}
		c.agency = agency
		return nil
	})
}

// WithKey sets the agency's API key, parsed once with ParseKey: the one
// way to give it, so that the key a merchant loads from its secret store
// travels as a Key, which never prints (docs/protocol.md "Authentication").
// The zero Key fails NewClient with ErrInvalidKey. KeyFromEnv parses
// PAYGATE_API_KEY itself.
func WithKey(k Key) Option {
	return clientOption(func(c *Client) error {
		if !k.valid() {
			return errZeroKey
		}
		c.key = k
		return nil
	})
}

// WithAuthToken sets the Bearer AuthToken from the merchant dashboard, used
// for reports and order lookup.
func WithAuthToken(token string) Option {
	return clientOption(func(c *Client) error {
		if token == "" || strings.ContainsAny(token, "\r\n ") {
			return errors.New("paygate: WithAuthToken: empty, or holds white space")
		}
		c.authToken = newSecret(token)
		return nil
	})
}

// WithCheckoutURL sets {checkout_url}. Given with a path, it is where
// orders are POSTed, as given: "https://pay.tulus.my/" posts to the host's
// root, as the gateway's developer pages say. Given as a bare host
// ("https://pay.example"), orders go to its Endpoints.Checkout
// (/v2/checkout, the protocol's path). Pay URLs and QR image URLs are on the
// host either way, unless WithPayURL puts them elsewhere
// (docs/assumptions.md A-endpoints).
func WithCheckoutURL(u string) Option {
	return clientOption(func(c *Client) error {
		base, err := serviceURL("WithCheckoutURL", u)
		if err != nil {
			return err
		}
		if given, _ := url.Parse(u); given != nil && given.Path != "" {
			base.Path, base.RawPath = given.Path, given.RawPath // "https://host/" is the root, not a bare host
		}
		c.checkoutURL = base
		return nil
	})
}

// WithPayURL sets the host of pay links (PayURL) and of the QR image page
// (QRCodeURL), when it is not the checkout host: the public PHP client
// builds them on https://snapnpay.my while orders go to
// https://pay.tulus.my/. Given with a path, the path prefixes
// Endpoints.Pay and Endpoints.QR2. Unset, they are on the checkout URL's
// host, as before (docs/assumptions.md A-paylink-host). PAYGATE_PAY_URL
// sets it from the environment.
func WithPayURL(u string) Option {
	return clientOption(func(c *Client) (err error) {
		c.payURL, err = serviceURL("WithPayURL", u)
		return err
	})
}

// WithReportsURL sets {reports_url}, the reporting and QR host.
func WithReportsURL(u string) Option {
	return clientOption(func(c *Client) (err error) {
		c.reportsURL, err = serviceURL("WithReportsURL", u)
		return err
	})
}

// WithClock sets the clock used for exp (tests, or a corrected clock).
func WithClock(now func() time.Time) Option {
	return clientOption(func(c *Client) error {
		if now == nil {
			return errors.New("paygate: WithClock: nil clock")
		}
		c.now, c.transport.now = now, now
		return nil
	})
}

// ClockOffset is the service's clock minus the client's per the Date of
// its latest answer, and whether one had a Date. From 5 s to an hour,
// signatures are dated on the client's clock plus it, so that exp is on
// the service's clock (docs/assumptions.md A-clock-skew).
func (c *Client) ClockOffset() (offset time.Duration, measured bool) {
	return c.transport.clock.Measured()
}

// signNow is the time a signature is dated from (ClockOffset).
func (c *Client) signNow() time.Time { return c.now().Add(c.transport.clock.Offset()) }

// WithPOSTSignedWithPath signs POST bodies (orders, QR requests) over
// `<path>?<query>`, as the public PHP client's SignMessage does, instead of
// the query alone, which is the protocol's rule and the default
// (docs/assumptions.md A-post-path). It is a compatibility switch: use it
// only if the service refuses the default signatures and accepts these.
func WithPOSTSignedWithPath() Option {
	return clientOption(func(c *Client) error {
		c.postWithPath = true
		return nil
	})
}

// NewClient builds a Client. Which options are needed depends on the calls
// made; a call that lacks what it needs fails with ErrNoCredential before any
// request.
func NewClient(opts ...Option) (*Client, error) {
	c := &Client{now: time.Now, transport: defaultTransport(), endpoints: DefaultEndpoints()}
	for _, o := range opts {
		if o == nil {
			return nil, errNilOption
		}
		if err := o.applyClient(c); err != nil {
			return nil, err
		}
	}
	c.transport.client = noRedirects(c.transport.client)
	return c, nil
}

// endpoint joins a configured base URL, set by the option opt, and a
// path, or fails before any request when the base is missing.
func (c *Client) endpoint(base *url.URL, opt, path string) (string, error) {
	if base == nil {
		return "", c.unset(opt)
	}
	return base.String() + path, nil
}

// needKey fails before any request when there is no API key.
func (c *Client) needKey(call string) error {
	if !c.key.valid() {
		return fmt.Errorf("%w: %s needs an API key (%s)", ErrNoCredential, call, c.setting("WithKey"))
	}
	return nil
}

// String describes the client without its credentials.
func (c *Client) String() string {
	return fmt.Sprintf("paygate.Client{agency: %q, apiKey: %t, authToken: %t}", c.agency, c.key.valid(), c.authToken.s != nil)
}

// GoString is String, so that %#v shows no credential either.
func (c *Client) GoString() string { return c.String() }

// WithEndpoints sets the paths the Client calls; empty fields keep their
// defaults. A path that is not absolute, or holds a query, a fragment or
// "..", fails NewClient naming the field.
func WithEndpoints(e Endpoints) Option {
	return clientOption(func(c *Client) error {
		for _, f := range e.fields() {
			if *f.p == "" {
				*f.p = f.def
				continue
			}
			u, err := url.Parse(*f.p)
			switch {
			case err != nil || !strings.HasPrefix(*f.p, "/") || strings.HasPrefix(*f.p, "//") || u.RawQuery != "" || u.Fragment != "" || strings.Contains(*f.p, ".."):
				return fmt.Errorf("paygate: WithEndpoints: %s %q: want an absolute path without query, fragment or \"..\" segments", f.name, *f.p)
			case f.dir && !strings.HasSuffix(*f.p, "/"):
				return fmt.Errorf("paygate: WithEndpoints: %s %q: must end in / (more path follows it)", f.name, *f.p)
			}
		}
		c.endpoints = e
		return nil
	})
}

// checkoutTarget is where orders are POSTed: the checkout URL as given when
// it has a path (the public developer pages post to the host's root,
// https://pay.tulus.my/), else the host and Endpoints.Checkout
// (docs/assumptions.md A-endpoints).
func (c *Client) checkoutTarget() (string, error) {
	if c.checkoutURL == nil {
		return "", c.unset("WithCheckoutURL")
	}
	if c.checkoutURL.Path != "" {
		return c.checkoutURL.String(), nil
	}
	return c.checkoutURL.String() + c.endpoints.Checkout, nil
}

// payHost is where the pay URL and the QR image page live, path
// appended: the pay URL (WithPayURL) when set, else the checkout URL's
// scheme and host whatever path it has (docs/assumptions.md
// A-paylink-host).
func (c *Client) payHost(path string) (string, error) {
	switch {
	case c.payURL != nil:
		return c.payURL.String() + path, nil
	case c.checkoutURL == nil:
		return "", c.unset("WithCheckoutURL")
	}
	return c.checkoutURL.Scheme + "://" + c.checkoutURL.Host + path, nil
}

// setting names a client setting in an error: the Go option (opt), or for
// a client built from the environment the variable that sets it.
func (c *Client) setting(opt string) string {
	if c.fromEnv != nil {
		if name, _ := c.fromEnv(opt); name != "" {
			return name
		}
	}
	return opt
}

// unset is the error of a client setting (the option opt) a call needs and
// the client lacks: it names the variable, and what it must hold, for a
// client built from the environment.
func (c *Client) unset(opt string) error {
	if c.fromEnv != nil {
		if name, err := c.fromEnv(opt); name != "" {
			return err
		}
	}
	return fmt.Errorf("%w: %s is not set", ErrNoCredential, opt)
}
