package gatewaytest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/zakat"
	"github.com/stretchr/testify/require"
)

// post sends a raw webhook body to url with the sandbox's password and
// returns the status and body.
func post(t *testing.T, sb *Server, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-API-Password", sb.WebhookPassword)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// A sender given the endpoint URL of the bank webhook page's form
// (.../api/adb/webhook, used as given) and its agency codes (ADBLZS,
// ADBPPZ, ADB) reaches a sandbox serving that path with those codes, which
// stores every record; the document's path is not served and the
// document's codes are refused by both sides.
func TestWebhookBrandEndToEnd(t *testing.T) {
	adb, err := zakat.NewValidator(zakat.ADBAgencies()...)
	require.NoError(t, err)
	sb := NewServer(WithWebhookPath("/api/adb/webhook"), WithWebhookValidator(adb))
	t.Cleanup(sb.Close)
	require.Equal(t, sb.URL+"/api/adb/webhook", sb.WebhookURL())

	sender, err := paygate.NewWebhookSender(sb.URL+"/api/adb/webhook", sb.WebhookPassword,
		paygate.WithWebhookValidator(adb), paygate.WithBatchSize(4))
	require.NoError(t, err)
	txs := testTxs(9)
	for i := range txs {
		txs[i].Agency = adb.Agencies()[i%3]
	}
	report, err := sender.Send(context.Background(), txs)
	require.NoError(t, err)
	require.Len(t, report.Accepted, 9)
	require.Equal(t, 3, sb.WebhookRequests(), "the server saw every request at its path")
	stored := sb.Transactions()
	require.Len(t, stored, 9)
	for _, tx := range stored {
		require.Contains(t, []zakat.Agency{"ADBLZS", "ADBPPZ", "ADB"}, tx.Agency)
	}

	// The sandbox's own sender agrees with it.
	own, err := sb.WebhookSender()
	require.NoError(t, err)
	more := testTxs(12)[9:]
	for i := range more {
		more[i].Agency = "ADBPPZ"
	}
	report, err = own.Send(context.Background(), more)
	require.NoError(t, err)
	require.Len(t, report.Accepted, 3)

	// The document's path is not served here; the document's codes are
	// refused by the sender (not sent) and by the server (400).
	status, _ := post(t, sb, sb.URL+paths.Webhook, `{"transactions":[]}`)
	require.Equal(t, http.StatusNotFound, status)
	bank := testTxs(1)
	bank[0].OrderNo = "BANK-ONLY"
	report, err = sender.Send(context.Background(), bank)
	require.Error(t, err)
	require.Len(t, report.Invalid, 1)
	require.Equal(t, "must be one of ADBLZS, ADBPPZ, ADB (the codes in force; set them with zakat.NewValidator, PAYGATE_WEBHOOK_AGENCIES or the CLI's -agencies)",
		report.Invalid[0].Problems[0].Rule)
	status, body := post(t, sb, sb.WebhookURL(), `{"transactions":[{"agency":"BANKLZS","orderno":"X","amount":1,"name":"A","email":"a@b.co","time":"2026-11-22T10:30:00+0800","status":"success","data":{}}]}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "must be one of ADBLZS, ADBPPZ, ADB")
	require.Len(t, sb.Transactions(), 12)
}

// The sandbox's defaults are the document's path and codes, and its
// WebhookURL is a URL a sender uses as given.
func TestWebhookDefaultsAndPathOption(t *testing.T) {
	sb := newSandbox(t)
	require.Equal(t, sb.URL+paths.Webhook, sb.WebhookURL())
	sender, err := sb.WebhookSender()
	require.NoError(t, err)
	report, err := sender.Send(context.Background(), testTxs(2))
	require.NoError(t, err)
	require.Len(t, report.Accepted, 2)

	for _, p := range []string{"", "/", "api/adb/webhook", "/api/{x}", "/api/adb/webhook?x", "/a b", "/api/../webhook"} {
		_, err := Start(WithWebhookPath(p))
		require.ErrorContains(t, err, "webhook path", p)
	}
}

// Times in every ISO 8601 form with an offset are stored as the instant and
// offset they name, a PHP DATE_ISO8601 time included; one without an
// offset is refused (docs/assumptions.md A-webhook-time).
func TestWebhookTimeForms(t *testing.T) {
	sb := newSandbox(t)
	tests := []struct {
		time   string
		status int
		want   time.Time
	}{
		{time: "2024-01-02T03:04:05+0800", status: http.StatusOK, want: time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("", 8*3600))},
		{time: "2024-01-02T03:04+08:00", status: http.StatusOK, want: time.Date(2024, 1, 2, 3, 4, 0, 0, time.FixedZone("", 8*3600))},
		{time: "2024-01-01T19:04:05.25Z", status: http.StatusOK, want: time.Date(2024, 1, 1, 19, 4, 5, 250_000_000, time.UTC)},
		{time: "2024-01-02T03:04:05", status: http.StatusBadRequest, want: time.Time{}},
	}
	for i, tt := range tests {
		orderno := "T" + string(rune('A'+i))
		status, body := post(t, sb, sb.WebhookURL(), `{"transactions":[{"agency":"BANK","orderno":"`+orderno+
			`","amount":1,"name":"A","email":"a@b.co","time":"`+tt.time+`","status":"success","data":{}}]}`)
		require.Equal(t, tt.status, status, "%s: %s", tt.time, body)
		if tt.status != http.StatusOK {
			require.Contains(t, body, "/transactions/0/time")
			continue
		}
		var got time.Time
		for _, tx := range sb.Transactions() {
			if tx.OrderNo == orderno {
				got = tx.Time
			}
		}
		require.True(t, tt.want.Equal(got), "%s stored as %v", tt.time, got)
		_, off := got.Zone()
		_, wantOff := tt.want.Zone()
		require.Equal(t, wantOff, off)
	}
}

// A record breaking the fitrah product rule is held back with its problem;
// the other records of the same send are sent and stored (docs/assumptions.md
// A-webhook-fitrah).
func TestWebhookFitrahRuleHoldsBackOnlyItsRecord(t *testing.T) {
	sb := newSandbox(t)
	sender, err := sb.WebhookSender(paygate.WithBatchSize(2))
	require.NoError(t, err)
	txs := testTxs(5)
	txs[1].Data = zakat.Data{Type: zakat.ZakatFitrah, Rate: "7.00", Dependants: "3"} // 21.00, amount is 2.00
	txs[3].Data = zakat.Data{Type: zakat.Fitrah, Rate: "2.5", Dependants: "4"}
	txs[3].Amount = 1000 // 2.5 x 4 = 10.00: valid
	report, err := sender.Send(context.Background(), txs)
	require.Error(t, err)
	require.Len(t, report.Invalid, 1)
	require.Equal(t, 1, report.Invalid[0].Index)
	require.Equal(t, "/transactions/1/amount", report.Invalid[0].Problems[0].Field)
	require.Contains(t, report.Invalid[0].Problems[0].Rule, "must equal zakat_rate x zakat_dependant (7.00 x 3 = 21.00)")
	require.ElementsMatch(t, []string{txs[0].OrderNo, txs[2].OrderNo, txs[3].OrderNo, txs[4].OrderNo}, report.Accepted)
	require.Len(t, sb.Transactions(), 4)
	require.Empty(t, report.Rejected)
	require.Empty(t, report.Unconfirmed)
}

// A webhook path the router cannot serve, or that is no URL path, is
// refused with Start's error: an unclean one (//, /./, a trailing /.)
// made http.ServeMux panic inside Start, which promises an error, and in
// paygate sandbox -webhook-path; one with a bad escape started a sandbox
// whose WebhookURL no sender takes.
func TestWebhookPathUnroutable(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{path: "/a//b"},
		{path: "/a/./b"},
		{path: "/a/."},
		{path: "//a"},
		{path: "/a%zz"},
		{path: "/a%"},
		{path: "/api/adb/webhook", ok: true},
		{path: "/api/adb/webhook/", ok: true},
		{path: "/a%20b", ok: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			var sb *Server
			var err error
			require.NotPanics(t, func() { sb, err = Start(WithWebhookPath(tc.path)) })
			if !tc.ok {
				require.ErrorContains(t, err, "webhook path")
				return
			}
			require.NoError(t, err)
			defer sb.Close()
			sender, err := sb.WebhookSender()
			require.NoError(t, err)
			report, err := sender.Send(context.Background(), testTxs(1))
			require.NoError(t, err)
			require.Len(t, report.Accepted, 1)
		})
	}
}
