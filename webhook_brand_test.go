package paygate

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/paths"
	"github.com/paygate-go/paygate/zakat"
)

// WithADBBrand is the one switch for the real service: its agency codes
// and, for a bare host, its path; a URL with a path stays as given.
func TestWithADBBrand(t *testing.T) {
	for _, tc := range []struct {
		url, endpoint string
		opts          []SenderOption
	}{
		{url: testWebhookBase, endpoint: testWebhookBase + paths.ADBWebhook, opts: []SenderOption{WithADBBrand()}},
		{url: testWebhookBase + "/", endpoint: testWebhookBase + paths.ADBWebhook, opts: []SenderOption{WithADBBrand()}},
		{url: testWebhookBase + "/hooks/zakat", endpoint: testWebhookBase + "/hooks/zakat", opts: []SenderOption{WithADBBrand()}},
		{url: testWebhookBase, endpoint: testWebhookBase + paths.Webhook},
	} {
		s, err := NewWebhookSender(tc.url, testPassword, tc.opts...)
		require.NoError(t, err)
		require.Equal(t, tc.endpoint, s.endpoint)
		require.Equal(t, len(tc.opts) > 0, s.rules.Accepts(zakat.AgencyADBLZS))
		require.Equal(t, len(tc.opts) == 0, s.rules.Accepts(zakat.AgencyLZS))
	}
}

// A batch written with the other brand's codes is one mistake: Send's
// error says it once, naming the switch, while the report still lists
// every transaction invalid and the error still unwraps to the
// validation error.
func TestSendOtherBrandIsOneError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []SenderOption
		agent zakat.Agency
		found string
	}{
		{name: "document's codes to the real service", opts: []SenderOption{WithADBBrand()}, agent: zakat.AgencyLZS, found: "the document's placeholder agency codes (BANKLZS)"},
		{name: "real codes without the switch", agent: zakat.AgencyADBPPZ, found: "the real service's agency codes (ADBPPZ)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t, tc.opts...)
			mt.RegisterResponder(http.MethodPost, s.endpoint, httpmock.NewStringResponder(200, ""))
			txs := validTxs(250)
			for i := range txs {
				txs[i].Agency = tc.agent
			}
			txs[7].Amount = -1 // another problem, told after
			report, err := s.Send(context.Background(), txs)
			require.Len(t, report.Invalid, 250)
			require.Empty(t, report.Requests)
			var ve *zakat.ValidationError
			require.ErrorAs(t, err, &ve)
			msg := err.Error()
			require.Contains(t, msg, "250 of 250 transactions invalid, not sent: 250 transactions carry "+tc.found)
			require.Contains(t, msg, "paygate.WithADBBrand()")
			require.Contains(t, msg, "; 1 other problems, the first: /transactions/7/amount")
			require.Equal(t, 1, strings.Count(msg, "agency"), "one sentence, not one per transaction: %s", msg)
		})
	}
}
