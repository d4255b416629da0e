package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// webhook send sends the valid transactions and lists the invalid ones, as
// WebhookSender.Send does; -all-or-nothing sends nothing then; the exit
// status is 0 only when every transaction was accepted.
func TestWebhookSend(t *testing.T) {
	valid := "../../zakat/testdata/webhook/valid-batch.json"
	raw, err := os.ReadFile(valid)
	require.NoError(t, err)
	var batch map[string]any
	require.NoError(t, json.Unmarshal(raw, &batch))
	txs := batch["transactions"].([]any)
	bad := map[string]any{}
	for k, v := range txs[1].(map[string]any) {
		bad[k] = v
	}
	bad["orderno"], bad["amount"] = "ORD-BAD", -1
	batch["transactions"] = []any{txs[0], bad, txs[1], txs[0], txs[2]} // a bad amount at 1, a repeated orderno at 3
	mixedBody, err := json.Marshal(batch)
	require.NoError(t, err)
	mixed := filepath.Join(t.TempDir(), "mixed.json")
	require.NoError(t, os.WriteFile(mixed, mixedBody, 0o600))
	notJSON := filepath.Join(t.TempDir(), "broken.json")
	require.NoError(t, os.WriteFile(notJSON, []byte(`{"transactions":[`), 0o600))
	invalidLines := "  invalid /transactions/1 (orderno \"ORD-BAD\"), not sent:\n    /transactions/1/amount: must be >= 0 (value \"-1\")\n" +
		"  invalid /transactions/3 (orderno \"ORD-000001\"), not sent:\n    /transactions/3/orderno: must be unique in the batch (also at /transactions/0/orderno) (value \"ORD-000001\")\n"
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		password string // "": the sandbox's
		code     int
		out      string // the whole of stdout, or its start when prefix
		prefix   bool
		errOut   string
		stored   int
	}{
		{name: "valid", args: []string{"-batch", "2", valid}, stdin: "", password: "", code: exitOK,
			out: valid + ": 3 accepted, 0 rejected, 0 unconfirmed, 0 not sent, 0 invalid (not sent); 2 batches in 2 HTTP requests (retries included)\n", prefix: false, errOut: "", stored: 3},
		{name: "valid and invalid", args: []string{mixed}, stdin: "", password: "", code: exitInvalid,
			out: mixed + ": 3 accepted, 0 rejected, 0 unconfirmed, 0 not sent, 2 invalid (not sent); 1 batches in 1 HTTP requests (retries included)\n" + invalidLines, prefix: false, errOut: "", stored: 3},
		{name: "all or nothing", args: []string{"-all-or-nothing", mixed}, stdin: "", password: "", code: exitInvalid,
			out: mixed + ": not sent (-all-or-nothing): 2 invalid\n" + invalidLines, prefix: false, errOut: "", stored: 0},
		{name: "all or nothing, all valid", args: []string{"-all-or-nothing", valid}, stdin: "", password: "", code: exitOK, out: valid + ": 3 accepted", prefix: true, errOut: "", stored: 3},
		{name: "not JSON", args: []string{notJSON}, stdin: "", password: "", code: exitInvalid, out: notJSON + ": not sent: 1 validation problem", prefix: true, errOut: "", stored: 0},
		{name: "wrong password", args: []string{valid}, stdin: "", password: "wrong", code: exitInvalid, out: valid + ": 0 accepted, 3 rejected", prefix: true, errOut: "", stored: 0},
		{name: "deadline passed", args: []string{"-batch", "2", "-timeout", "1ns", valid}, stdin: "", password: "", code: exitInvalid,
			out: valid + ": 0 accepted, 0 rejected, 0 unconfirmed, 3 not sent, 0 invalid (not sent); 2 batches in 0 HTTP requests (retries included)\n" +
				"  batch from ORD-000001 (2 transactions): not sent: the send's deadline (1ns, WithSendTimeout) passed before the request reached the service: ", prefix: true,
			errOut: "webhook send: send incomplete: 0 of 3 transactions accepted", stored: 0},
		{name: "too large", args: []string{"-"}, stdin: strings.Repeat(" ", maxSendFile+1), password: "", code: exitUsage, out: "", prefix: false, errOut: "-: larger than 16 MiB: split it", stored: 0},
		{name: "no file", args: nil, stdin: "", password: "", code: exitUsage, out: "", prefix: false, errOut: "paygate webhook send: want one FILE", stored: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := useSandbox(t)
			if tc.password != "" {
				t.Setenv("PAYGATE_WEBHOOK_PASSWORD", tc.password)
			}
			code, out, errOut := runCLI(t, tc.stdin, append([]string{"webhook", "send"}, tc.args...)...)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errOut)
			if tc.prefix {
				require.True(t, strings.HasPrefix(out, tc.out), "stdout:\n%s\nwant prefix:\n%s", out, tc.out)
			} else {
				require.Equal(t, tc.out, out)
			}
			require.Contains(t, errOut, tc.errOut)
			require.Len(t, sb.Transactions(), tc.stored)
		})
	}

	useSandbox(t)
	t.Setenv("PAYGATE_WEBHOOK_PASSWORD", "")
	code, _, errOut := runCLI(t, "", "webhook", "send", valid)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_WEBHOOK_PASSWORD is not set")
	t.Setenv("PAYGATE_WEBHOOK_PASSWORD", "pw")
	t.Setenv("PAYGATE_WEBHOOK_URL", "http://remote.example")
	code, _, errOut = runCLI(t, "", "webhook", "send", valid)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_WEBHOOK_URL (or -webhook-url)")
}

func TestWebhookValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	valid := "../../zakat/testdata/webhook/valid-batch.json"
	invalid := "../../zakat/testdata/webhook/invalid-batch.json"
	oneBad := write("one.json", `{"transactions":[{"agency":"BANK","orderno":"1","amount":1,"name":"a","email":"a@b.co","time":"2026-11-22T10:00:00+08:00","status":"ok","data":{}}]}`)
	notJSON := write("broken.json", `{"transactions": [`)
	missing := filepath.Join(dir, "missing.json")

	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string
		err   string
	}{
		{name: "valid", args: []string{valid}, stdin: "", code: exitOK, out: valid + ": ok\n", err: ""},
		{name: "one problem", args: []string{oneBad}, stdin: "", code: exitInvalid,
			out: oneBad + ": 1 problem\n  /transactions/0/status: must be one of success, pending, failed (value \"ok\")\n", err: ""},
		{name: "many problems", args: []string{invalid}, stdin: "", code: exitInvalid, out: invalid + ": 4 problems\n" +
			"  /transactions/0/amount: must be >= 0 (value \"-1\")\n" +
			"  /transactions/1/time: must be ISO 8601 with a timezone offset (Z, +08:00 or +0800), e.g. 2026-11-22T10:30:00+08:00 (value \"2026-11-22 10:30\")\n" +
			"  /transactions/1/orderno: must be unique in the batch (also at /transactions/0/orderno) (value \"ORD-000001\")\n" +
			"  /transactions/2/data/zakat_ic_no: must be 12 digits (value \"1234\")\n", err: ""},
		{name: "not JSON", args: []string{notJSON}, stdin: "", code: exitInvalid, out: notJSON + ": 1 problem\n  (body): must be valid JSON: offset 18: unexpected end of input, want a JSON value\n", err: ""},
		{name: "valid and invalid", args: []string{valid, oneBad}, stdin: "", code: exitInvalid, out: valid + ": ok\n" + oneBad + ": 1 problem\n", err: ""},
		{name: "missing file", args: []string{missing, valid}, stdin: "", code: exitUsage, out: valid + ": ok\n", err: missing + ": open " + missing},
		{name: "stdin", args: []string{"-"}, stdin: `{"transactions":[]}`, code: exitOK, out: "-: ok\n", err: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, append([]string{"webhook", "validate"}, tt.args...)...)
			require.Equal(t, tt.code, code, "stderr: %s", errOut)
			require.True(t, strings.HasPrefix(out, tt.out), "stdout:\n%s\nwant prefix:\n%s", out, tt.out)
			require.Contains(t, errOut, tt.err)
		})
	}
}

// webhook send -h says how long a send may take by default and what is
// listed when its deadline passes.
func TestWebhookSendTimeoutHelp(t *testing.T) {
	code, out, errOut := runCLI(t, "", "webhook", "send", "-h")
	require.Equal(t, exitOK, code)
	require.Empty(t, out)
	help := strings.Join(strings.Fields(errOut), " ")
	for _, want := range []string{
		"(paygate.WithSendTimeout, whose default, 5m0s, is this flag's)",
		"the request under way is listed as unconfirmed (not sent if none of it reached the service)",
		"the batches not yet sent as not sent: both safe to send again (default 5m0s)",
	} {
		require.Contains(t, help, want)
	}
}

// webhook send names the transaction a refusal pointed at, with its
// field and rule, and stores the others of its batch.
func TestWebhookSendNamesTheRefused(t *testing.T) {
	valid := "../../zakat/testdata/webhook/valid-batch.json"
	sb := useSandbox(t, gatewaytest.WithWebhookRefusal(gatewaytest.WebhookRefusal{
		Refuse: func(tx zakat.Transaction) bool { return tx.OrderNo == "ORD-000002" }, Rule: "payer blocked", Field: "email"}))
	code, out, errOut := runCLI(t, "", "webhook", "send", valid)
	require.Equal(t, exitInvalid, code, errOut)
	require.Contains(t, out, valid+": 2 accepted, 1 rejected, 0 unconfirmed")
	require.Contains(t, out, "  rejected ORD-000002: transaction 1 (orderno \"ORD-000002\") refused by the service (HTTP 400): field email breaks the rule \"payer blocked\"\n")
	require.Len(t, sb.Transactions(), 2)
}
