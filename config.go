package paygate

// The environment, read in one place: envVars is the table of every
// variable the SDK reads, what it must hold and how it is checked;
// readEnv reads the part of it one use needs (a Client's, a sender's, a
// handler's key), and each *FromEnv constructor is readEnv followed by
// the envConfig's method: the one way to configure from the environment.

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/paygate-go/paygate/zakat"
)

// The environment variables the SDK reads (NewClientFromEnv, KeyFromEnv,
// NewWebhookSenderFromEnv).
const (
	EnvAgency          = "PAYGATE_AGENCY"
	EnvAPIKey          = "PAYGATE_API_KEY"
	EnvAuthToken       = "PAYGATE_AUTH_TOKEN"
	EnvCheckoutURL     = "PAYGATE_CHECKOUT_URL"
	EnvReportsURL      = "PAYGATE_REPORTS_URL"
	EnvPayURL          = "PAYGATE_PAY_URL"
	EnvWebhookURL      = "PAYGATE_WEBHOOK_URL"
	EnvWebhookPassword = "PAYGATE_WEBHOOK_PASSWORD"
	EnvWebhookAgencies = "PAYGATE_WEBHOOK_AGENCIES"
)

// envConfig is what readEnv read: credentials it never prints (%v shows
// addresses, not values).
type envConfig struct {
	agency, checkoutURL, reportsURL, payURL, webhookURL string
	key                                                 Key
	authToken, webhookPassword                          secret
	rules                                               *zakat.Validator // PAYGATE_WEBHOOK_AGENCIES, when set
}

// client builds a Client from the configuration, then opts (which may add
// or override settings; an option's own errors name the option). It
// fails, wrapping ErrNoCredential, when neither PAYGATE_CHECKOUT_URL nor
// PAYGATE_REPORTS_URL nor an option gives a host: a client with no host
// can make no call. The client's later errors about a setting name the
// variable ("PAYGATE_CHECKOUT_URL is not set: want ...").
func (cfg envConfig) client(opts ...Option) (*Client, error) {
	env := []Option{clientOption(func(c *Client) error {
		c.fromEnv, c.agency, c.key, c.authToken = envSetting, cfg.agency, cfg.key, cfg.authToken
		return nil
	})}
	for _, u := range []struct {
		v, name string
		opt     func(string) Option
	}{{cfg.checkoutURL, EnvCheckoutURL, WithCheckoutURL}, {cfg.reportsURL, EnvReportsURL, WithReportsURL}, {cfg.payURL, EnvPayURL, WithPayURL}} {
		if u.v != "" {
			env = append(env, wrapEnv(u.name, envVarNamed(u.name).option, u.opt(u.v)))
		}
	}
	c, err := NewClient(append(env, opts...)...)
	if err != nil {
		return nil, err
	}
	if c.checkoutURL == nil && c.reportsURL == nil {
		return nil, fmt.Errorf("%w: neither %s nor %s is set: the client has no host to call (want %s)", ErrNoCredential, EnvCheckoutURL, EnvReportsURL, envVarNamed(EnvCheckoutURL).holds)
	}
	return c, nil
}

// apiKey is the API key of PAYGATE_API_KEY; unset, an error wrapping
// ErrNoCredential.
func (cfg envConfig) apiKey() (Key, error) {
	if !cfg.key.valid() {
		return Key{}, unsetEnv(EnvAPIKey)
	}
	return cfg.key, nil
}

// webhookSender builds a WebhookSender to PAYGATE_WEBHOOK_URL with
// PAYGATE_WEBHOOK_PASSWORD (both required: an unset one fails wrapping
// ErrNoCredential), checking the agency codes of PAYGATE_WEBHOOK_AGENCIES
// when it is set (WithWebhookValidator), then opts.
func (cfg envConfig) webhookSender(opts ...SenderOption) (*WebhookSender, error) {
	switch {
	case cfg.webhookURL == "":
		return nil, unsetEnv(EnvWebhookURL)
	case cfg.webhookPassword.s == nil:
		return nil, unsetEnv(EnvWebhookPassword)
	}
	if cfg.rules != nil {
		opts = append([]SenderOption{WithWebhookValidator(*cfg.rules)}, opts...)
	}
	return NewWebhookSender(cfg.webhookURL, cfg.webhookPassword.reveal(), opts...)
}

// NewClientFromEnv builds a Client from the client's variables
// (PAYGATE_AGENCY, PAYGATE_API_KEY, PAYGATE_AUTH_TOKEN, PAYGATE_*_URL),
// then opts. Each is optional, but a host is required; every malformed
// one is reported at once, naming the variable and what it must hold,
// never its value. PAYGATE_TOKEN, PAYGATE_USERNAME or PAYGATE_PASSWORD
// set is refused with ErrDeprecatedAuth.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	cfg, err := readEnv(forClient)
	if err != nil {
		return nil, err
	}
	return cfg.client(opts...)
}

// KeyFromEnv is the API key of PAYGATE_API_KEY (EnvAPIKey), for a
// CallbackHandler's Keys: an unset variable is an error wrapping ErrNoCredential, a
// malformed key one wrapping ErrInvalidKey; both name the variable and
// what it must hold, never its value.
func KeyFromEnv() (Key, error) {
	cfg, err := readEnv(forHandler)
	if err != nil {
		return Key{}, err
	}
	return cfg.apiKey()
}

// NewWebhookSenderFromEnv builds a WebhookSender from the webhook's
// variables (PAYGATE_WEBHOOK_URL and PAYGATE_WEBHOOK_PASSWORD, required;
// PAYGATE_WEBHOOK_AGENCIES), then opts: a bank's sender needs no
// merchant setting.
func NewWebhookSenderFromEnv(opts ...SenderOption) (*WebhookSender, error) {
	cfg, err := readEnv(forSender)
	if err != nil {
		return nil, err
	}
	return cfg.webhookSender(opts...)
}

// Which constructors read a variable.
const (
	forClient = 1 << iota
	forHandler
	forSender
	forAll = forClient | forHandler | forSender
)

// envVar is one variable: what it must hold (said in every error about
// it), the Go option its errors may name, and how a value is checked and
// kept in an envConfig.
type envVar struct {
	name, option, holds string
	use                 int
	set                 func(cfg *envConfig, v string) error
}

// urlHolds is what a service URL variable must hold, after what it is.
const urlHolds = ", an absolute https URL (http only to a loopback host) without query, fragment or user information"

// envVars are the variables the SDK reads, in the order readEnv
// reports them. Read-only.
var envVars = [...]envVar{
	{name: EnvAgency, option: "WithAgency", use: forClient, holds: "the agency identifier the API key belongs to",
		set: func(cfg *envConfig, v string) error { cfg.agency = v; return nil }},
	{name: EnvAPIKey, option: "WithKey", use: forClient | forHandler, holds: "the agency's API key, a UUID (32 hex digits, dashes optional)",
		set: func(cfg *envConfig, v string) (err error) { cfg.key, err = ParseKey(v); return err }},
	{name: EnvAuthToken, option: "WithAuthToken", use: forClient, holds: "the Bearer AuthToken of the merchant dashboard, without white space",
		set: func(cfg *envConfig, v string) error { cfg.authToken = newSecret(v); return applyTo(WithAuthToken(v)) }},
	{name: EnvCheckoutURL, option: "WithCheckoutURL", use: forClient, holds: "the checkout URL" + urlHolds,
		set: func(cfg *envConfig, v string) error { cfg.checkoutURL = v; return applyTo(WithCheckoutURL(v)) }},
	{name: EnvReportsURL, option: "WithReportsURL", use: forClient, holds: "the reports host" + urlHolds,
		set: func(cfg *envConfig, v string) error { cfg.reportsURL = v; return applyTo(WithReportsURL(v)) }},
	{name: EnvPayURL, option: "WithPayURL", use: forClient, holds: "the host of pay links and QR image pages (unset: the checkout host)" + urlHolds,
		set: func(cfg *envConfig, v string) error { cfg.payURL = v; return applyTo(WithPayURL(v)) }},
	{name: EnvWebhookURL, option: "webhook URL", use: forSender, holds: "the bank webhook's URL" + urlHolds,
		set: func(cfg *envConfig, v string) error { cfg.webhookURL = v; _, err := webhookEndpoint(v); return err }},
	{name: EnvWebhookPassword, option: "webhook password", use: forSender, holds: "the API password the operator issued (X-API-Password), on one line",
		set: func(cfg *envConfig, v string) error {
			cfg.webhookPassword = newSecret(v)
			return checkWebhookPassword(v)
		}},
	{name: EnvWebhookAgencies, option: "webhook agency", use: forSender, holds: "agency codes separated by commas, e.g. ADBLZS,ADBPPZ,ADB",
		set: func(cfg *envConfig, v string) error {
			rules, err := zakat.NewValidator(zakat.ParseAgencies(v)...)
			cfg.rules = &rules
			return err
		}},
}

// applyTo checks an option's value the way NewClient would.
func applyTo(o Option) error { return o.applyClient(&Client{}) }

// envVarNamed is the envVars entry of a variable the SDK reads.
func envVarNamed(name string) envVar {
	for _, e := range envVars {
		if e.name == name {
			return e
		}
	}
	panic("paygate: no environment variable " + name) // a programming error: every caller names a constant of envVars
}

// readEnv reads the variables of use; each error names its variable.
func readEnv(use int) (envConfig, error) {
	if err := refuseDeprecatedEnv(); err != nil {
		return envConfig{}, err
	}
	var cfg envConfig
	var errs []error
	for _, e := range envVars {
		v := os.Getenv(e.name)
		if e.use&use == 0 || v == "" {
			continue
		}
		if err := e.set(&cfg, v); err != nil {
			errs = append(errs, newEnvError(e.name, e.option, err))
		}
	}
	if len(errs) > 0 {
		return envConfig{}, errors.Join(errs...)
	}
	return cfg, nil
}

// unsetEnv is the error of a variable a use needs and that is not set.
func unsetEnv(name string) error {
	return fmt.Errorf("%w: %s is not set: want %s", ErrNoCredential, name, envVarNamed(name).holds)
}

// deprecatedEnv are the variables of the deprecated method; any of them set
// makes every *FromEnv constructor refuse.
var deprecatedEnv = [...]string{"PAYGATE_TOKEN", "PAYGATE_USERNAME", "PAYGATE_PASSWORD"}

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

// envSetting names the variable that sets the client option opt, and the
// error of its being unset; "" when no variable does (Client.fromEnv).
func envSetting(opt string) (string, error) {
	for _, e := range envVars {
		if e.option == opt {
			return e.name, unsetEnv(e.name)
		}
	}
	return "", nil
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
// the variable instead, and adds what the variable must hold.
func newEnvError(name, option string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "paygate: ")
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, option+": "), option+" ")
	return &envError{msg: "paygate: " + name + ": " + msg + " (want " + envVarNamed(name).holds + ")", err: err}
}

// envError is an option's error reworded to name a variable.
type envError struct {
	msg string
	err error
}

func (e *envError) Error() string { return e.msg }
func (e *envError) Unwrap() error { return e.err }
