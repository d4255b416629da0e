package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// The key and the GET vector of the package's Example (its signature was
// computed with Python's hmac).
const (
	testKey    = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
	testURL    = "https://reports.example/api/report/v1/payment?output=json&page=0"
	testSigned = "https://reports.example/api/report/v1/payment?exp=1800000060&output=json&page=0&signature=d9ab890ca3e7d26c"
)

// useSandbox starts a sandbox (with opts) and points the PAYGATE_* variables at it.
func useSandbox(t *testing.T, opts ...gatewaytest.Option) *gatewaytest.Server {
	t.Helper()
	sb := gatewaytest.NewServer(append([]gatewaytest.Option{gatewaytest.WithRetryInterval(5 * time.Millisecond)}, opts...)...)
	t.Cleanup(sb.Close)
	for k, v := range map[string]string{
		"PAYGATE_CHECKOUT_URL": sb.URL, "PAYGATE_REPORTS_URL": sb.URL, "PAYGATE_WEBHOOK_URL": sb.URL,
		"PAYGATE_AGENCY": sb.Agency, "PAYGATE_API_KEY": sb.APIKey, "PAYGATE_AUTH_TOKEN": sb.AuthToken,
		"PAYGATE_WEBHOOK_PASSWORD": sb.WebhookPassword,
	} {
		t.Setenv(k, v)
	}
	return sb
}

func TestSign(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string
		err   string
	}{
		{name: "url", args: []string{"sign", "-at", "1800000000", "-url", testURL}, stdin: "", code: exitOK, out: testSigned + "\n", err: ""},
		{name: "url explain", args: []string{"sign", "-explain", "-at", "1800000000", "-url", testURL}, stdin: "", code: exitOK,
			out: "message (rfc3986): /api/report/v1/payment?exp=1800000060&output=json&page=0\n" + testSigned + "\n", err: ""},
		{name: "form", args: []string{"sign", "-at", "1800000000", "-form", "agency=AG01&refNo=INV-1~x&amount=10.00"}, stdin: "", code: exitOK,
			out: "agency=AG01&amount=10.00&exp=1800000060&refNo=INV-1~x&signature=dac9e5ed2dd48c8a\n", err: ""},
		{name: "form on stdin", args: []string{"sign", "-at", "1800000000", "-form", "-"}, stdin: "agency=AG01&refNo=INV-1~x&amount=10.00\n", code: exitOK,
			out: "agency=AG01&amount=10.00&exp=1800000060&refNo=INV-1~x&signature=dac9e5ed2dd48c8a\n", err: ""},
		{name: "neither", args: []string{"sign"}, stdin: "", code: exitUsage, out: "", err: "usage: paygate sign"},
		{name: "both", args: []string{"sign", "-url", testURL, "-form", "a=1"}, stdin: "", code: exitUsage, out: "", err: "usage: paygate sign"},
		{name: "relative url", args: []string{"sign", "-url", "/x?a=1"}, stdin: "", code: exitUsage, out: "", err: "absolute URL"},
		{name: "help", args: []string{"sign", "-h"}, stdin: "", code: exitOK, out: "", err: "-explain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.out, out)
			require.Contains(t, errOut, tt.err)
		})
	}
	t.Setenv("PAYGATE_API_KEY", "")
	code, _, errOut := runCLI(t, "", "sign", "-url", testURL)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_API_KEY is not set")
	t.Setenv("PAYGATE_API_KEY", "not-a-key")
	code, _, errOut = runCLI(t, "", "sign", "-url", testURL)
	require.Equal(t, exitUsage, code)
	require.NotContains(t, errOut, "not-a-key")
}

func TestVerify(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	key, _ := paygate.ParseKey(testKey)
	fields := url.Values{"status": {"success"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}}
	signed, _ := paygate.SignCallback(key, fields)
	tampered, _ := url.ParseQuery(signed.Encode())
	tampered.Set("amount", "1.00")
	// The expected signatures, computed here with crypto/hmac, not the SDK.
	raw, _ := hex.DecodeString(strings.ReplaceAll(testKey, "-", ""))
	sig := func(msg string) string {
		m := hmac.New(sha256.New, raw)
		m.Write([]byte(msg))
		return hex.EncodeToString(m.Sum(nil))[:16]
	}
	explained := func(received, verdict0, amount string) string {
		out := "received signature: " + received + "\n"
		for i, m := range []string{"form", "form-php", "form-whatwg"} {
			msg := "amount=" + amount + "&refNo=INV-1~x&status=success"
			if i > 0 {
				msg = "amount=" + amount + "&refNo=INV-1%7Ex&status=success"
			}
			verdict := "differs"
			if i == 0 {
				verdict = verdict0
			}
			out += "message (" + m + "): " + msg + "\n  expected signature: " + sig(msg) + " (" + verdict + ")\n"
		}
		return out
	}
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{name: "ok", args: []string{"verify", signed.Encode()}, code: exitOK, out: "ok\n"},
		{name: "explain", args: []string{"verify", "-explain", signed.Encode()}, code: exitOK, out: explained(signed.Get("signature"), "matches", "10.00") + "ok\n"},
		{name: "explain tampered", args: []string{"verify", "-explain", tampered.Encode()}, code: exitInvalid, out: explained(signed.Get("signature"), "differs", "1.00") + "mismatch: paygate: signature mismatch\n"},
		{name: "explain unsigned", args: []string{"verify", "-explain", fields.Encode()}, code: exitInvalid, out: explained("(none)", "differs", "10.00") + "missing: no signature (the buyer's browser return; display only)\n"},
		{name: "tampered", args: []string{"verify", tampered.Encode()}, code: exitInvalid, out: "mismatch: paygate: signature mismatch\n"},
		{name: "unsigned", args: []string{"verify", fields.Encode()}, code: exitInvalid, out: "missing: no signature (the buyer's browser return; display only)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tt.args...)
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.out, out)
			require.NotContains(t, out+errOut, testKey, "never the key")
			require.NotContains(t, out+errOut, hex.EncodeToString(raw), "never the key")
		})
	}
	code, _, _ := runCLI(t, "", "verify")
	require.Equal(t, exitUsage, code)
}

func TestCallbackSend(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	key, _ := paygate.ParseKey(testKey)
	var mu sync.Mutex
	var got []string
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: func(_ context.Context, cb *paygate.Callback) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cb.RefNo+" "+cb.Amount.String())
		return nil
	}}
	shop := httptest.NewServer(h)
	defer shop.Close()
	code, out, errOut := runCLI(t, "", "callback", "send", "-url", shop.URL+"/return", "-refno", "INV-9", "-amount", "12.50")
	require.Equal(t, exitOK, code, errOut)
	require.True(t, strings.HasPrefix(out, "200 OK"), out)
	require.Equal(t, []string{"INV-9 12.50"}, got)

	code, out, _ = runCLI(t, "", "callback", "send", "-unsigned", "-url", shop.URL+"/return", "-refno", "INV-9")
	require.Equal(t, exitInvalid, code)
	require.True(t, strings.HasPrefix(out, "403 Forbidden"), out)
	require.Len(t, got, 1)

	for _, args := range [][]string{
		{"callback", "send", "-url", "https://shop.example/return", "-refno", "X"},
		{"callback", "send", "-url", shop.URL},
		{"callback", "send", "-url", shop.URL, "-refno", "X", "-amount", "1.234"},
		{"callback"},
	} {
		code, _, _ := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, args)
	}
	code, _, _ = runCLI(t, "", "callback", "-h")
	require.Equal(t, exitOK, code)
}

func TestReportAndLookup(t *testing.T) {
	sb := useSandbox(t)
	client, err := sb.Client()
	require.NoError(t, err)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer shop.Close()
	for _, ref := range []string{"A-1", "A-2", "A-3"} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 1000, Email: "a@b.co", ReturnURL: shop.URL})
		require.NoError(t, err)
	}
	require.NoError(t, sb.Pay("A-1", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("A-2", paygate.StatusFailed))
	sb.Settle()
	today := time.Now().In(time.FixedZone("MYT", 8*3600)).Format(time.DateOnly)

	code, out, errOut := runCLI(t, "", "report", "-from", today, "-to", today, "-items", "2")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[0], "agency,amount,created_at,fpx_debit_auth_code"), lines[0])
	require.Contains(t, out, "A-2,failed")
	require.Empty(t, errOut, "no progress line when stderr is not a terminal")

	code, out, _ = runCLI(t, "", "report", "-from", today, "-to", today, "-approved", "-format", "json")
	require.Equal(t, exitOK, code)
	require.Equal(t, 1, strings.Count(out, "\n"))
	require.Contains(t, out, `"seller_order_no":"A-1"`)

	for _, args := range [][]string{{"report", "-from", "22/11/2026", "-to", today}, {"report", "-from", today, "-to", today, "-format", "xml"}, {"report"}, {"report", "-from", today}} {
		code, _, _ := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code)
	}

	code, out, _ = runCLI(t, "", "lookup", "A-1")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, `"status": "success"`)
	code, _, errOut = runCLI(t, "", "lookup", "NOPE")
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errOut, "order not found")
	code, _, _ = runCLI(t, "", "lookup")
	require.Equal(t, exitUsage, code)

	t.Setenv("PAYGATE_PASSWORD", "old")
	code, _, errOut = runCLI(t, "", "report", "-from", today, "-to", today)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "deprecated")
}

// webhook send sends the valid transactions and lists the invalid ones, as
// WebhookSender.Send does; -all-or-nothing sends nothing then; the exit
// status is 0 only when every transaction was accepted.
func TestWebhookSend(t *testing.T) {
	valid := "../../testdata/webhook/valid-batch.json"
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
			out: valid + ": 3 accepted, 0 rejected, 0 unconfirmed, 0 invalid (not sent); 2 batches in 2 HTTP requests (retries included)\n", prefix: false, errOut: "", stored: 3},
		{name: "valid and invalid", args: []string{mixed}, stdin: "", password: "", code: exitInvalid,
			out: mixed + ": 3 accepted, 0 rejected, 0 unconfirmed, 2 invalid (not sent); 1 batches in 1 HTTP requests (retries included)\n" + invalidLines, prefix: false, errOut: "", stored: 3},
		{name: "all or nothing", args: []string{"-all-or-nothing", mixed}, stdin: "", password: "", code: exitInvalid,
			out: mixed + ": not sent (-all-or-nothing): 2 invalid\n" + invalidLines, prefix: false, errOut: "", stored: 0},
		{name: "all or nothing, all valid", args: []string{"-all-or-nothing", valid}, stdin: "", password: "", code: exitOK, out: valid + ": 3 accepted", prefix: true, errOut: "", stored: 3},
		{name: "not JSON", args: []string{notJSON}, stdin: "", password: "", code: exitInvalid, out: notJSON + ": not sent: 1 validation problem", prefix: true, errOut: "", stored: 0},
		{name: "wrong password", args: []string{valid}, stdin: "", password: "wrong", code: exitInvalid, out: valid + ": 0 accepted, 3 rejected", prefix: true, errOut: "", stored: 0},
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

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The sandbox command prints working credentials and stops when told to.
func TestSandboxCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- dispatch(env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, []string{"sandbox", "-retry-interval", "10ms"})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "PAYGATE_WEBHOOK_PASSWORD=") }, 5*time.Second, 10*time.Millisecond)
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	client, err := paygate.NewClient(paygate.WithReportsURL(vars["PAYGATE_REPORTS_URL"]), paygate.WithAuthToken(vars["PAYGATE_AUTH_TOKEN"]))
	require.NoError(t, err)
	_, err = client.PaymentReportPage(context.Background(), paygate.ReportQuery{}, 0)
	require.NoError(t, err)
	cancel()
	require.Equal(t, exitOK, <-done)

	code, _, errOut2 := runCLI(t, "", "sandbox", "-addr", "0.0.0.0:0")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut2, "loopback")
}

// The CSV report keeps every value as the service sent it and every column
// any row has: a 19-digit id, a number with a trailing zero, a column that
// first appears on the second page, a string with a comma and a quote.
func TestReportCSVKeepsData(t *testing.T) {
	pages := []string{
		`{"status":"OK","stats":{"total_pages":2},"data":[{"id":2611220346460000017,"amount":10.50,"ref":"INV-1"},{"id":2611220346460000018,"amount":1e2,"ref":"a,\"b\""}]}`,
		`{"status":"OK","stats":{"total_pages":2},"data":[{"id":2611220346460000019,"amount":7.00,"ref":"INV-3","refund":null,"bank":"MB2U0227"}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		_, _ = io.WriteString(w, pages[n])
	}))
	t.Cleanup(srv.Close)
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	code, out, errOut := runCLI(t, "", "report", "-from", "2026-11-01", "-to", "2026-11-30", "-items", "2")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "amount,bank,id,ref,refund\n"+
		"10.50,,2611220346460000017,INV-1,\n"+
		"1e2,,2611220346460000018,\"a,\"\"b\"\"\",\n"+
		"7.00,MB2U0227,2611220346460000019,INV-3,\n", out)
}

// Every subcommand speaks the same way: -h shows its flags (exit 0), usage
// and configuration errors exit 2, failed operations exit 1, no message
// doubles the "paygate:" prefix, and messages name the variables and flags
// a user sets, not Go options.
func TestCLIConsistency(t *testing.T) {
	for _, cmd := range [][]string{{"sandbox"}, {"sign"}, {"verify"}, {"callback", "send"}, {"callback"}, {"report"}, {"lookup"},
		{"webhook", "validate"}, {"webhook", "send"}, {"webhook"}, {"version"}} {
		code, _, errOut := runCLI(t, "", append(cmd, "-h")...)
		require.Equal(t, exitOK, code, "%v -h", cmd)
		require.Contains(t, errOut, "usage: paygate", "%v -h", cmd)
		if last := cmd[len(cmd)-1]; last != "version" && last != "validate" { // the two without flags
			require.Contains(t, errOut, "  -", "%v -h lists its flags", cmd)
		}
	}
	for k := range map[string]bool{"PAYGATE_AGENCY": true, "PAYGATE_API_KEY": true, "PAYGATE_AUTH_TOKEN": true, "PAYGATE_CHECKOUT_URL": true,
		"PAYGATE_REPORTS_URL": true, "PAYGATE_WEBHOOK_URL": true, "PAYGATE_WEBHOOK_PASSWORD": true} {
		t.Setenv(k, "")
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{args: []string{"report", "-from", "2026-11-01", "-to", "2026-11-02"}, code: exitUsage, want: "neither PAYGATE_CHECKOUT_URL (or -checkout-url) nor PAYGATE_REPORTS_URL (or -reports-url) is set"},
		{args: []string{"report", "-from", "2026-11-01", "-to", "2026-11-02", "-checkout-url", "http://127.0.0.1:1"}, code: exitUsage, want: "PAYGATE_REPORTS_URL (or -reports-url) is not set"},
		{args: []string{"lookup", "-checkout-url", "http://127.0.0.1:1", "-reports-url", "ftp://x", "X"}, code: exitUsage, want: `PAYGATE_REPORTS_URL (or -reports-url) "ftp://x": want an absolute http(s) URL`},
		{args: []string{"report", "-from", "2026-11-01", "-to", "2026-11-02", "-reports-url", "http://127.0.0.1:1"}, code: exitUsage, want: "PAYGATE_AUTH_TOKEN"},
		{args: []string{"lookup", "-reports-url", "http://127.0.0.1:1", "X"}, code: exitUsage, want: "PAYGATE_AUTH_TOKEN"},
		{args: []string{"lookup", "-by", "nothing", "X"}, code: exitUsage, want: "-by"},
		{args: []string{"webhook", "send", "x.json"}, code: exitUsage, want: "PAYGATE_WEBHOOK_URL (or -webhook-url) is not set"},
		{args: []string{"webhook", "send", "-webhook-url", "http://127.0.0.1:1", "x.json"}, code: exitUsage, want: "PAYGATE_WEBHOOK_PASSWORD is not set"},
		{args: []string{"webhook", "frob"}, code: exitUsage, want: "unknown subcommand"},
		{args: []string{"webhook", "validate", "/nonexistent.json"}, code: exitUsage, want: "/nonexistent.json"},
		{args: []string{"callback", "send", "-url", "http://127.0.0.1:1/r", "-refno", "A", "-unsigned"}, code: exitInvalid, want: "paygate callback send:"},
		// Last: run with PAYGATE_CHECKOUT_URL=ftp://env.
		{args: []string{"lookup", "X"}, code: exitUsage, want: `PAYGATE_CHECKOUT_URL (or -checkout-url): "ftp://env": want an absolute http(s) URL`},
	}
	for i, tt := range tests {
		if i == len(tests)-1 {
			t.Setenv("PAYGATE_CHECKOUT_URL", "ftp://env")
		}
		code, _, errOut := runCLI(t, "", tt.args...)
		require.Equal(t, tt.code, code, "%v: %s", tt.args, errOut)
		require.Contains(t, errOut, tt.want, "%v", tt.args)
		require.NotContains(t, errOut, "paygate: paygate:", "%v", tt.args)
		require.NotContains(t, errOut, ": paygate:", "%v", tt.args)
		require.NotRegexp(t, `\bWith[A-Z]`, errOut, "%v names a Go option", tt.args)
	}
}

func TestPing(t *testing.T) {
	useSandbox(t)
	code, out, errOut := runCLI(t, "", "ping")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "echo: ok in ")
	require.Contains(t, out, "version: "+`{"status":"OK","version":"gatewaytest"}`)

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer down.Close()
	code, _, errOut = runCLI(t, "", "ping", "-reports-url", down.URL)
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errOut, "paygate ping: ")
	require.Contains(t, errOut, "404")

	t.Setenv("PAYGATE_REPORTS_URL", "")
	code, _, errOut = runCLI(t, "", "ping")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_REPORTS_URL")
	code, _, _ = runCLI(t, "", "ping", "extra")
	require.Equal(t, exitUsage, code)
}

// A report whose stats.total_pages under-reports is written whole, with a
// warning, and the command succeeds: every row came.
func TestReportPastTotalPages(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls++; calls > 5 {
			t.Errorf("request %d: the walk does not stop", calls)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		rows := []string{}
		if page < 2 {
			rows = []string{`{"seller_order_no":"A-` + strconv.Itoa(2*page) + `"}`, `{"seller_order_no":"A-` + strconv.Itoa(2*page+1) + `"}`}
		}
		_, _ = io.WriteString(w, `{"status":"OK","data":[`+strings.Join(rows, ",")+`],"stats":{"total_pages":1}}`)
	}))
	defer srv.Close()
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	code, out, errOut := runCLI(t, "", "report", "-from", "2026-11-01", "-to", "2026-11-02", "-items", "2")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "seller_order_no\nA-0\nA-1\nA-2\nA-3\n", out)
	require.Contains(t, errOut, "warning: ")
	require.Contains(t, errOut, "stats.total_pages said 1")
	require.Equal(t, 3, calls)
}
