package paygate

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/paygate-go/paygate/zakat"
	"github.com/stretchr/testify/require"
)

// setEnv clears every variable the SDK reads, then sets env, for the test.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, e := range envVars {
		t.Setenv(e.name, "")
		os.Unsetenv(e.name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// fullEnv is a valid value for every variable.
func fullEnv() map[string]string {
	return map[string]string{
		EnvAgency: testAgency, EnvAPIKey: testKeyUUID, EnvAuthToken: "tok-zq7x9k-secret",
		EnvCheckoutURL: "https://pay.tulus.my/", EnvReportsURL: testReports, EnvPayURL: "https://snapnpay.my",
		EnvWebhookURL: "https://pay.tulus.my/api/adb/webhook", EnvWebhookPassword: testPassword, EnvWebhookAgencies: "ADBLZS,ADBPPZ,ADB",
	}
}

// The environment configures the client, the handler's key and the
// sender alike.
func TestEnvConfiguresAll(t *testing.T) {
	setEnv(t, fullEnv())
	cfg, err := readEnv(forAll)
	require.NoError(t, err)

	c, err := cfg.client()
	require.NoError(t, err)
	require.Equal(t, testAgency, c.agency)
	require.True(t, c.key.valid())
	require.Equal(t, "tok-zq7x9k-secret", c.authToken.reveal())
	require.Equal(t, "https://pay.tulus.my/", c.checkoutURL.String())
	require.Equal(t, testReports, c.reportsURL.String())
	link, err := c.PayURL(PayLink{Category: "fpx", RefNo: "INV-1", Amount: 1000})
	require.NoError(t, err)
	require.Equal(t, "https://snapnpay.my/pay/"+testAgency+"/fpx/INV-1/10.00", link)

	key, err := cfg.apiKey()
	require.NoError(t, err)
	signed, err := signCallback(key, map[string][]string{"refNo": {"INV-1"}})
	require.NoError(t, err)
	require.NoError(t, VerifyCallback(signed, mustKey(t, testKeyUUID)))

	s, err := cfg.webhookSender()
	require.NoError(t, err)
	require.Equal(t, "https://pay.tulus.my/api/adb/webhook", s.endpoint)
	require.Equal(t, testPassword, s.password.reveal())
	require.NotEqual(t, zakat.Agencies(), s.rules.Agencies(), "PAYGATE_WEBHOOK_AGENCIES sets the sender's agency codes")

	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, cfg)
		for _, secret := range []string{"tok-zq7x9k-secret", testPassword, testKeyUUID, strings.ReplaceAll(testKeyUUID, "-", "")} {
			require.NotContains(t, out, secret, verb)
		}
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg)
	require.NotContains(t, logged.String(), testPassword)
	require.NotContains(t, logged.String(), "tok-zq7x9k-secret")
}

// Every variable's malformed value is an error naming the variable and
// what it must hold, never the value or a secret in it; the whole table
// reports them all at once, and each constructor the ones it reads.
func TestEnvMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		says        string
		secret      string // must not appear in the error
		build       func() error
	}{
		{name: EnvAPIKey, value: "3f2504e0-zf89-11d3-9a0c-0305e82c3301", says: "PAYGATE_API_KEY: invalid API key: non-hex character at position 10 (want the agency's API key, a UUID", secret: "3f2504e0",
			build: func() error { _, err := KeyFromEnv(); return err }},
		{name: EnvAuthToken, value: "tok en-zq7x9k", says: "PAYGATE_AUTH_TOKEN: empty, or holds white space (want the Bearer AuthToken", secret: "zq7x9k",
			build: func() error { _, err := NewClientFromEnv(); return err }},
		{name: EnvCheckoutURL, value: "https://user:hunter2@pay.example", says: "PAYGATE_CHECKOUT_URL: ", secret: "hunter2",
			build: func() error { _, err := NewClientFromEnv(); return err }},
		{name: EnvReportsURL, value: "http://remote.example", says: `PAYGATE_REPORTS_URL: "http://remote.example": plain http is allowed only to a loopback host (want the reports host, an absolute https URL`,
			build: func() error { _, err := NewClientFromEnv(); return err }},
		{name: EnvPayURL, value: "ftp://snapnpay.my", says: `PAYGATE_PAY_URL: "ftp://snapnpay.my": want an absolute http(s) URL (want the host of pay links`,
			build: func() error { _, err := NewClientFromEnv(); return err }},
		{name: EnvWebhookURL, value: "https://bank:hunter2@pay.example", says: "PAYGATE_WEBHOOK_URL: ", secret: "hunter2",
			build: func() error { _, err := NewWebhookSenderFromEnv(); return err }},
		{name: EnvWebhookPassword, value: "pw\nzq7x9k", says: "PAYGATE_WEBHOOK_PASSWORD: empty or holds a line break (want the API password", secret: "zq7x9k",
			build: func() error { _, err := NewWebhookSenderFromEnv(); return err }},
		{name: EnvWebhookAgencies, value: "ADB,,ADBPPZ", says: `PAYGATE_WEBHOOK_AGENCIES: "": want`,
			build: func() error { _, err := NewWebhookSenderFromEnv(); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := fullEnv()
			env[tc.name] = tc.value
			setEnv(t, env)
			_, err := readEnv(forAll)
			require.ErrorContains(t, err, tc.says)
			for _, e := range []error{err, tc.build()} {
				require.ErrorContains(t, e, tc.says)
				if tc.secret != "" {
					require.NotContains(t, e.Error(), tc.secret)
					require.NotContains(t, fmt.Sprintf("%+v", e), tc.secret)
				}
			}
		})
	}
}

// Every malformed variable a constructor reads is reported at once.
func TestEnvReportsAll(t *testing.T) {
	setEnv(t, map[string]string{EnvAPIKey: "short", EnvCheckoutURL: "ftp://x", EnvAuthToken: "a b"})
	_, err := NewClientFromEnv()
	require.ErrorIs(t, err, ErrInvalidKey)
	for _, name := range []string{EnvAPIKey, EnvCheckoutURL, EnvAuthToken} {
		require.ErrorContains(t, err, name+": ")
	}
	// Each constructor reads only its own variables.
	setEnv(t, map[string]string{EnvWebhookPassword: "a\nb", EnvCheckoutURL: testCheckout})
	_, err = NewClientFromEnv()
	require.NoError(t, err, "a malformed webhook variable does not stop a merchant's client")
	setEnv(t, map[string]string{EnvAPIKey: "short", EnvWebhookURL: testWebhookBase, EnvWebhookPassword: testPassword})
	_, err = NewWebhookSenderFromEnv()
	require.NoError(t, err, "a malformed API key does not stop a bank's sender")
}

// A variable a use needs and that is not set is an error wrapping
// ErrNoCredential that names it and what it must hold.
func TestConfigUnsetVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		use  func(cfg envConfig) error
		says string
	}{
		{name: "API key for the handler", use: func(cfg envConfig) error { _, err := cfg.apiKey(); return err },
			says: "PAYGATE_API_KEY is not set: want the agency's API key, a UUID (32 hex digits, dashes optional)"},
		{name: "a host for the client", use: func(cfg envConfig) error { _, err := cfg.client(); return err },
			says: "neither PAYGATE_CHECKOUT_URL nor PAYGATE_REPORTS_URL is set: the client has no host to call (want the checkout URL, an absolute https URL"},
		{name: "checkout URL for a pay link", env: map[string]string{EnvReportsURL: testReports, EnvAgency: testAgency},
			use: func(cfg envConfig) error {
				c, err := cfg.client()
				require.NoError(t, err)
				_, err = c.PayURL(PayLink{Category: "fpx", RefNo: "R", Amount: 100})
				return err
			}, says: "PAYGATE_CHECKOUT_URL is not set: want the checkout URL"},
		{name: "reports URL for a report", env: map[string]string{EnvCheckoutURL: testCheckout, EnvAuthToken: "tok"},
			use: func(cfg envConfig) error {
				c, err := cfg.client()
				require.NoError(t, err)
				_, err = c.Echo(context.Background())
				return err
			}, says: "PAYGATE_REPORTS_URL is not set: want the reports host"},
		{name: "API key for a signed call", env: map[string]string{EnvReportsURL: testReports},
			use: func(cfg envConfig) error {
				c, err := cfg.client()
				require.NoError(t, err)
				_, err = c.LookupOrder(context.Background(), "S-1")
				return err
			}, says: "needs an API key (PAYGATE_API_KEY)"},
		{name: "webhook URL", env: map[string]string{EnvWebhookPassword: testPassword}, use: func(cfg envConfig) error { _, err := cfg.webhookSender(); return err },
			says: "PAYGATE_WEBHOOK_URL is not set: want the bank webhook's URL"},
		{name: "webhook password", env: map[string]string{EnvWebhookURL: testWebhookBase}, use: func(cfg envConfig) error { _, err := cfg.webhookSender(); return err },
			says: "PAYGATE_WEBHOOK_PASSWORD is not set: want the API password the operator issued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			cfg, err := readEnv(forAll)
			require.NoError(t, err)
			err = tc.use(cfg)
			require.ErrorIs(t, err, ErrNoCredential)
			require.ErrorContains(t, err, tc.says)
		})
	}
}

// The zero envConfig has nothing set: each use says what is missing.
func TestZeroEnvConfig(t *testing.T) {
	var cfg envConfig
	_, err := cfg.apiKey()
	require.ErrorIs(t, err, ErrNoCredential)
	_, err = cfg.webhookSender()
	require.ErrorIs(t, err, ErrNoCredential)
	c, err := cfg.client(WithCheckoutURL(testCheckout))
	require.NoError(t, err, "an option may give what the environment does not")
	require.Equal(t, testCheckout, c.checkoutURL.String())
}
