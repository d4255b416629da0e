package guides

import (
	"testing"

	"github.com/paygate-go/paygate/gatewaytest"
)

// sandboxEnv starts a sandbox and sets the PAYGATE_* variables the
// merchant's and the bank's code read, as `paygate sandbox` prints them.
func sandboxEnv(t *testing.T, opts ...gatewaytest.Option) *gatewaytest.Server {
	t.Helper()
	sb := gatewaytest.NewServer(opts...)
	t.Cleanup(sb.Close)
	for name, value := range map[string]string{
		"PAYGATE_AGENCY":           sb.Agency,
		"PAYGATE_API_KEY":          sb.APIKey,
		"PAYGATE_AUTH_TOKEN":       sb.AuthToken,
		"PAYGATE_CHECKOUT_URL":     sb.URL,
		"PAYGATE_REPORTS_URL":      sb.URL,
		"PAYGATE_WEBHOOK_URL":      sb.WebhookURL(),
		"PAYGATE_WEBHOOK_PASSWORD": sb.WebhookPassword,
	} {
		t.Setenv(name, value)
	}
	return sb
}
