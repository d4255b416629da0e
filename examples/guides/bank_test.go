package guides

// The bank sending zakat webhook batches: README.md's third integration
// and docs/bank-sender.md.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// sendZakat is the README's third integration: typed transactions, one
// send, and what to send again.
func sendZakat(ctx context.Context, out io.Writer) ([]zakat.Transaction, error) {
	// code: readme-bank
	// PAYGATE_WEBHOOK_URL and _PASSWORD; WithADBBrand: the real service's
	// agency codes (ADBLZS, ADBPPZ, ADB) and path (/api/adb/webhook)
	sender, err := paygate.NewWebhookSenderFromEnv(paygate.WithADBBrand())
	if err != nil {
		return nil, err // names the variable to set
	}
	myt := time.FixedZone("MYT", 8*3600)
	txs := []zakat.Transaction{{
		Agency: zakat.AgencyADBLZS, OrderNo: "ZK-1001", Amount: 12000, // sen: RM 120.00
		Name: "Ali", Email: "ali@example.com", Time: time.Date(2026, 11, 22, 10, 30, 0, 0, myt),
		Status: zakat.StatusSuccess,
		Data:   zakat.Data{Type: zakat.ZakatPendapatan, State: zakat.Selangor, Year: "2026"},
	}, {
		Agency: zakat.AgencyADBPPZ, OrderNo: "ZK-1002", Amount: 2800, // fitrah: rate x dependants exactly
		Name: "Siti", Email: "siti@example.com", Time: time.Date(2026, 11, 22, 11, 0, 0, 0, myt),
		Status: zakat.StatusSuccess,
		Data:   zakat.Data{Type: zakat.Fitrah, State: zakat.KualaLumpur, Rate: "7.00", Dependants: "4"},
	}}
	report, err := sender.Send(ctx, txs) // validates, then posts the valid ones in batches; never nil
	var resend []zakat.Transaction
	for _, o := range report.Outcomes() { // by index in txs: o.OrderNo, o.Status, o.Err (the reason)
		switch {
		case o.Status.SafeToResend(): // unconfirmed or not sent: later, sender.Resend(ctx, resend), unchanged
			resend = append(resend, txs[o.Index])
		case o.Status != zakat.SendAccepted: // invalid or rejected: fix it first
			fmt.Fprintln(out, o.OrderNo, o.Status, o.Err)
		}
	}
	if err != nil { // a *paygate.SendError carrying the same report
		fmt.Fprintln(out, err) // the counts and the first problem
	}
	// end: readme-bank
	return resend, err
}

// The README's send: both transactions accepted by the sandbox.
func TestSendZakat(t *testing.T) {
	sandboxEnv(t, gatewaytest.WithADBBrand())
	var out strings.Builder
	resend, err := sendZakat(context.Background(), &out)
	require.NoError(t, err)
	require.Empty(t, resend)
	require.Empty(t, out.String())
}

// A wrong password: nothing is accepted, both are listed, and the error
// matches ErrUnauthorized.
func TestSendZakatUnauthorized(t *testing.T) {
	sandboxEnv(t, gatewaytest.WithADBBrand())
	t.Setenv("PAYGATE_WEBHOOK_PASSWORD", "wrong-password")
	var out strings.Builder
	resend, err := sendZakat(context.Background(), &out)
	var se *paygate.SendError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, paygate.ErrUnauthorized)
	require.Empty(t, resend)
	require.Contains(t, out.String(), "ZK-1001 rejected")
	require.Contains(t, out.String(), "send incomplete")
}

// brandedSender is the guide's sender for the real service's endpoint and
// agency codes.
func brandedSender(url, password string) (*paygate.WebhookSender, error) {
	// code: bank-real-service
	// url: "https://pay.tulus.my/api/adb/webhook", or the bare host
	// "https://pay.tulus.my", which WithADBBrand gives its path;
	// or PAYGATE_WEBHOOK_URL and paygate.NewWebhookSenderFromEnv(paygate.WithADBBrand()).
	sender, err := paygate.NewWebhookSender(url, password,
		paygate.WithADBBrand(),     // the real service's codes, ADBLZS, ADBPPZ, ADB, and path
		paygate.WithBatchSize(100), // the default
	)
	if err != nil {
		return nil, err
	}
	// end: bank-real-service
	return sender, nil
}

// bankSandboxTest is the guide's test of a bank's feed against the sandbox
// with the real service's shape.
func bankSandboxTest(t *testing.T) *zakat.SendReport {
	ctx := context.Background()
	// code: bank-sandbox-test
	sb := gatewaytest.NewServer(gatewaytest.WithADBBrand()) // the real service's path and codes
	defer sb.Close()
	sender, err := brandedSender(sb.WebhookURL(), sb.WebhookPassword) // or sb.WebhookSender()
	require.NoError(t, err)
	report, err := sender.Send(ctx, []zakat.Transaction{{
		Agency: zakat.AgencyADBLZS, OrderNo: "ZK-1", Amount: 5000, Name: "Ali", Email: "ali@example.com",
		Time: time.Now(), Status: zakat.StatusSuccess,
	}})
	require.NoError(t, err)
	require.Equal(t, []string{"ZK-1"}, report.Accepted)
	// end: bank-sandbox-test
	return report
}

// The guide's sandbox test passes in one request.
func TestBankSandbox(t *testing.T) {
	report := bankSandboxTest(t)
	require.Equal(t, 1, report.Attempts())
}

// validateFile is the guide's check of a batch file before it is sent.
func validateFile(path string, out io.Writer) error {
	// code: bank-validate
	rules := zakat.Validator{} // the zero value: the document's BANKLZS, BANKPPZ, BANK
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := rules.ValidateBatchReader(f) // streams: a 500 MB file in a few tens of MB
	var invalid *zakat.ValidationError
	if errors.As(err, &invalid) {
		for _, p := range invalid.Problems { // by JSON pointer: /transactions/3/amount ...
			fmt.Fprintln(out, p)
		}
		return err
	} else if err != nil {
		return err // not JSON, or I/O
	}
	fmt.Fprintln(out, n, "transactions, all valid")
	// end: bank-validate
	return nil
}

// A valid and an invalid file.
func TestValidateFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"transactions":[{"agency":"BANKLZS","orderno":"A1","amount":10.50,"name":"Ali","email":"ali@example.com","time":"2026-11-22T10:30:00+08:00","status":"success","data":{}}]}`), 0o600))
	require.NoError(t, os.WriteFile(bad, []byte(`{"transactions":[{"agency":"BANKLZS","orderno":"A1","amount":-1,"name":"Ali","email":"ali@example.com","time":"2026-11-22T10:30:00+08:00","status":"success","data":{}}]}`), 0o600))
	var out strings.Builder
	require.NoError(t, validateFile(good, &out))
	require.Equal(t, "1 transactions, all valid\n", out.String())
	out.Reset()
	require.Error(t, validateFile(bad, &out))
	require.Contains(t, out.String(), "/transactions/0/amount")
}
