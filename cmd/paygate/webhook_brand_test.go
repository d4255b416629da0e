package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
	"github.com/stretchr/testify/require"
)

// adbBatch writes the valid test batch with the bank webhook page's agency
// codes (BANK... becomes ADB...) and PHP DATE_ISO8601 times, and returns
// its path.
func adbBatch(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../zakat/testdata/webhook/valid-batch.json")
	require.NoError(t, err)
	body := strings.ReplaceAll(string(raw), `"agency": "BANK`, `"agency": "ADB`)
	body = strings.ReplaceAll(body, `:00+08:00"`, `:00+0800"`)
	require.NotEqual(t, string(raw), body)
	path := filepath.Join(t.TempDir(), "adb-batch.json")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

// webhook validate and send take the agency codes from -agencies or
// PAYGATE_WEBHOOK_AGENCIES, and send posts to a webhook URL with a path as
// given.
func TestWebhookCommandsWithAgencies(t *testing.T) {
	file := adbBatch(t)
	code, out, _ := runCLI(t, "", "webhook", "validate", file)
	require.Equal(t, exitInvalid, code)
	// One line for the batch's brand, not one per transaction, naming the switch.
	require.Equal(t, file+": 3 problems\n  3 transactions carry the real service's agency codes (ADBLZS, ADBPPZ, ADB) but the codes in force are BANKLZS, BANKPPZ, BANK: "+
		"the brand is one switch, set it with -brand ADB for the real service, or -brand BANK (the default) for the document's\n", out)
	code, out, errOut := runCLI(t, "", "webhook", "validate", "-agencies", "ADBLZS,ADBPPZ,ADB", file)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, file+": ok\n", out)
	code, _, errOut = runCLI(t, "", "webhook", "validate", "-agencies", "ADB,,X", file)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, paygate.EnvWebhookAgencies)

	adb, err := zakat.NewValidator(zakat.ADBAgencies()...)
	require.NoError(t, err)
	sb := gatewaytest.NewServer(gatewaytest.WithWebhookPath("/api/adb/webhook"), gatewaytest.WithWebhookValidator(adb))
	t.Cleanup(sb.Close)
	t.Setenv(paygate.EnvWebhookURL, sb.URL+"/api/adb/webhook")
	t.Setenv(paygate.EnvWebhookPassword, sb.WebhookPassword)
	code, out, _ = runCLI(t, "", "webhook", "send", file)
	require.Equal(t, exitInvalid, code, "the document's codes by default: not sent")
	require.Contains(t, out, "not sent")
	require.Zero(t, sb.WebhookRequests())

	t.Setenv(paygate.EnvWebhookAgencies, "ADBLZS,ADBPPZ,ADB")
	code, out, errOut = runCLI(t, "", "webhook", "send", file)
	require.Equal(t, exitOK, code, errOut+out)
	require.Contains(t, out, "3 accepted, 0 rejected, 0 unconfirmed")
	require.Len(t, sb.Transactions(), 3)
}

// The sandbox command serves the webhook at -webhook-path with -agencies
// and prints the endpoint's URL and the codes, which a sender uses as they
// are; -brand ADB (or the real codes by -agencies) alone is the one
// switch: the real codes and the real path, unless -webhook-path is given.
func TestSandboxCommandWebhookBrand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		path string
	}{
		{args: []string{"-webhook-path", "/api/adb/webhook", "-agencies", "ADBLZS,ADBPPZ,ADB"}, path: "/api/adb/webhook"},
		{args: []string{"-brand", "ADB"}, path: "/api/adb/webhook"},
		{args: []string{"-agencies", "ADBLZS,ADBPPZ,ADB"}, path: "/api/adb/webhook"},
		{args: []string{"-agencies", "ADB,ADBPPZ,ADBLZS"}, path: "/api/adb/webhook"},
		{args: []string{"-brand", "ADB", "-webhook-path", "/api/bank/webhook"}, path: "/api/bank/webhook"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { sandboxWebhookBrand(t, tc.args, tc.path) })
	}

	code, _, errOut2 := runCLI(t, "", "sandbox", "-agencies", "A B")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut2, "agency")
}

// sandboxWebhookBrand runs the sandbox command with args and sends one
// transaction of the real brand through the URL and codes it prints,
// requiring the URL's path to be path.
func sandboxWebhookBrand(t *testing.T, args []string, path string) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- dispatch(env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errOut},
			append([]string{"sandbox"}, args...))
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "PAYGATE_WEBHOOK_PASSWORD=") }, 5*time.Second, 10*time.Millisecond)
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	require.True(t, strings.HasSuffix(vars[paygate.EnvWebhookURL], path), vars[paygate.EnvWebhookURL])
	require.ElementsMatch(t, []string{"ADBLZS", "ADBPPZ", "ADB"}, strings.Split(vars[paygate.EnvWebhookAgencies], ","))
	for k, v := range vars {
		t.Setenv(k, v)
	}
	sender, err := paygate.NewWebhookSenderFromEnv()
	require.NoError(t, err)
	tx := zakat.Transaction{Agency: "ADBPPZ", OrderNo: "S1", Amount: 100, Name: "A", Email: "a@b.co",
		Time: time.Now(), Status: zakat.StatusSuccess}
	report, err := sender.Send(context.Background(), []zakat.Transaction{tx})
	require.NoError(t, err)
	require.Equal(t, []string{"S1"}, report.Accepted)
	// The sandbox logs each batch it takes and what it answered.
	require.Contains(t, errOut.String(), `msg="webhook batch" count=1 first=S1 fault=none status=200`)
	require.NotContains(t, errOut.String(), vars["PAYGATE_WEBHOOK_PASSWORD"])
	cancel()
	require.Equal(t, exitOK, <-done)
}

// -brand NAME is a brand's three codes (zakat.BrandAgencies), instead of
// -agencies, and overrides PAYGATE_WEBHOOK_AGENCIES as -agencies does.
func TestWebhookBrandFlag(t *testing.T) {
	file := adbBatch(t)
	tests := []struct {
		name     string
		env      string
		args     []string
		code     int
		out, err string
	}{
		{name: "ADB", args: []string{"-brand", "ADB"}, code: exitOK, out: file + ": ok\n"},
		{name: "ADB over the variable", env: "BANKLZS,BANKPPZ,BANK", args: []string{"-brand", "ADB"}, code: exitOK, out: file + ": ok\n"},
		{name: "BANK", args: []string{"-brand", "BANK"}, code: exitInvalid, out: "3 transactions carry the real service's agency codes (ADBLZS, ADBPPZ, ADB) but the codes in force are BANKLZS, BANKPPZ, BANK: the brand is one switch"},
		{name: "another brand", args: []string{"-brand", "XYZ"}, code: exitInvalid, out: "the codes in force are XYZLZS, XYZPPZ, XYZ: the brand is one switch, set it with -brand ADB"},
		{name: "both", args: []string{"-brand", "ADB", "-agencies", "ADB"}, code: exitUsage, err: "give -agencies or -brand, not both"},
		{name: "bad brand", args: []string{"-brand", "A B"}, code: exitUsage, err: `-brand: webhook agency "A BLZS"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(paygate.EnvWebhookAgencies, tt.env)
			code, out, errOut := runCLI(t, "", append(append([]string{"webhook", "validate"}, tt.args...), file)...)
			require.Equal(t, tt.code, code, errOut)
			require.Contains(t, out, tt.out)
			require.Contains(t, errOut, tt.err)
		})
	}
	_, _, help := runCLI(t, "", "webhook", "send", "-h")
	require.Contains(t, help, "-brand ADB: ADBLZS,ADBPPZ,ADB, the real service's")
}
