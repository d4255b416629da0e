package paygate

import (
	"errors"
	"fmt"
	"net/url"
	"os"
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
	endpoints   Endpoints
	now         func() time.Time
	transport   transport
	// postWithPath signs POSTs over <path>?<query> (WithPOSTSignedWithPath).
	postWithPath bool
	// fromEnv is set by NewClientFromEnv: errors then name the
	// environment variables (setting).
	fromEnv bool
}

// Option configures a Client. The options that a Client and a
// WebhookSender share (WithHTTPClient, WithLogger, WithRetry,
// WithAttemptTimeout) are TransportOptions, which serve as both.
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
// The zero Key fails NewClient with ErrInvalidKey. NewClientFromEnv parses
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

// withKeyText is WithKey of a key given as text (PAYGATE_API_KEY), parsed
// here; a malformed key fails NewClientFromEnv (the error does not echo
// it).
func withKeyText(uuid string) Option {
	k, err := ParseKey(uuid)
	if err != nil {
		return clientOption(func(*Client) error { return err })
	}
	return WithKey(k)
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
// host either way (docs/assumptions.md A-endpoints).
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

// The environment variables NewClientFromEnv reads.
const (
	EnvAgency      = "PAYGATE_AGENCY"
	EnvAPIKey      = "PAYGATE_API_KEY"
	EnvAuthToken   = "PAYGATE_AUTH_TOKEN"
	EnvCheckoutURL = "PAYGATE_CHECKOUT_URL"
	EnvReportsURL  = "PAYGATE_REPORTS_URL"
)

// deprecatedEnv are the variables of the deprecated method; any of them set
// makes NewClientFromEnv refuse.
var deprecatedEnv = [...]string{"PAYGATE_TOKEN", "PAYGATE_USERNAME", "PAYGATE_PASSWORD"}

// NewClientFromEnv builds a Client from PAYGATE_AGENCY, PAYGATE_API_KEY,
// PAYGATE_AUTH_TOKEN, PAYGATE_CHECKOUT_URL and PAYGATE_REPORTS_URL (each
// optional, an empty one counts as unset), then opts. It fails, wrapping
// ErrNoCredential, when neither URL is set by a variable or an option (a
// client with no host can make no call). Every error about a variable,
// here and in the client's later calls ("PAYGATE_CHECKOUT_URL is not
// set"), names the variable, not the Go option. If PAYGATE_TOKEN,
// PAYGATE_USERNAME or PAYGATE_PASSWORD is set it refuses with
// ErrDeprecatedAuth: the deprecated method must not be usable, not even by
// accident.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	if err := refuseDeprecatedEnv(); err != nil {
		return nil, err
	}
	env := []Option{clientOption(func(c *Client) error { c.fromEnv = true; return nil })}
	for _, e := range clientEnv {
		if v := os.Getenv(e.name); v != "" {
			env = append(env, wrapEnv(e.name, e.option, e.opt(v)))
		}
	}
	c, err := NewClient(append(env, opts...)...)
	if err != nil {
		return nil, err
	}
	if c.checkoutURL == nil && c.reportsURL == nil {
		return nil, fmt.Errorf("%w: neither %s nor %s is set: the client has no host to call", ErrNoCredential, EnvCheckoutURL, EnvReportsURL)
	}
	return c, nil
}

// KeyFromEnv parses the API key in PAYGATE_API_KEY (EnvAPIKey), the
// variable NewClientFromEnv reads, so that a Client and a CallbackHandler
// are configured from one place:
//
//	key, err := paygate.KeyFromEnv()
//	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, ...}
//
// An unset or empty variable is an error wrapping ErrNoCredential, a
// malformed key one wrapping ErrInvalidKey; both name the variable and
// what it must hold, never its value.
func KeyFromEnv() (Key, error) {
	v := os.Getenv(EnvAPIKey)
	if v == "" {
		return Key{}, fmt.Errorf("%w: %s is not set: want the agency's API key, a UUID (32 hex digits, dashes optional)", ErrNoCredential, EnvAPIKey)
	}
	k, err := ParseKey(v)
	if err != nil {
		return Key{}, newEnvError(EnvAPIKey, "ParseKey", err)
	}
	return k, nil
}

// clientEnv maps each variable NewClientFromEnv reads to the option it
// stands for (named in the option's own errors). Read-only.
var clientEnv = [...]struct {
	name, option string
	opt          func(string) Option
}{
	{EnvAgency, "WithAgency", WithAgency},
	{EnvAPIKey, "WithKey", withKeyText},
	{EnvAuthToken, "WithAuthToken", WithAuthToken},
	{EnvCheckoutURL, "WithCheckoutURL", WithCheckoutURL},
	{EnvReportsURL, "WithReportsURL", WithReportsURL},
}

// setting names a client setting in an error: the Go option (opt), or for
// a client built by NewClientFromEnv the variable that sets it.
func (c *Client) setting(opt string) string {
	if c.fromEnv {
		for _, e := range clientEnv {
			if e.option == opt {
				return e.name
			}
		}
	}
	return opt
}

// refuseDeprecatedEnv fails with ErrDeprecatedAuth when a variable of the
// deprecated method is set.
func refuseDeprecatedEnv() error {
	for _, name := range deprecatedEnv {
		if _, set := os.LookupEnv(name); set {
			return fmt.Errorf("%w (%s is set; unset it)", ErrDeprecatedAuth, name)
		}
	}
	return nil
}

// wrapEnv names the variable in an option's error, instead of the option
// (option) the error may name: "paygate: PAYGATE_API_KEY: invalid API key".
// The error still matches what the option's error matches (errors.Is).
func wrapEnv(name, option string, o Option) Option {
	return clientOption(func(c *Client) error {
		if err := o.applyClient(c); err != nil {
			return newEnvError(name, option, err)
		}
		return nil
	})
}

// newEnvError rewords err, which may name the setting as option, to name
// the variable instead.
func newEnvError(name, option string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "paygate: ")
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, option+": "), option+" ")
	return &envError{msg: "paygate: " + name + ": " + msg, err: err}
}

// envError is an option's error reworded to name a variable.
type envError struct {
	msg string
	err error
}

func (e *envError) Error() string { return e.msg }
func (e *envError) Unwrap() error { return e.err }

// endpoint joins a configured base URL and a path, or fails before any
// request when the base is missing.
func endpoint(base *url.URL, opt, path string) (string, error) {
	if base == nil {
		return "", fmt.Errorf("%w: %s is not set", ErrNoCredential, opt)
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
		return "", fmt.Errorf("%w: %s is not set", ErrNoCredential, c.setting("WithCheckoutURL"))
	}
	if c.checkoutURL.Path != "" {
		return c.checkoutURL.String(), nil
	}
	return c.checkoutURL.String() + c.endpoints.Checkout, nil
}

// checkoutHost is the checkout URL's scheme and host, where the pay URL and
// the QR image page live whatever path the checkout URL has.
func (c *Client) checkoutHost(path string) (string, error) {
	if c.checkoutURL == nil {
		return "", fmt.Errorf("%w: %s is not set", ErrNoCredential, c.setting("WithCheckoutURL"))
	}
	return c.checkoutURL.Scheme + "://" + c.checkoutURL.Host + path, nil
}
