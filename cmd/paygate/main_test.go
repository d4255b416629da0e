package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// runCLI runs the tool in-process and returns its exit status and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := dispatch(env{ctx: context.Background(), stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestTopLevel(t *testing.T) {
	tests := []struct {
		args    []string
		code    int
		inError string
	}{
		{args: nil, code: exitUsage, inError: "usage: paygate"},
		{args: []string{"-h"}, code: exitOK, inError: "webhook"},
		{args: []string{"help"}, code: exitOK, inError: "exit status"},
		{args: []string{"nope"}, code: exitUsage, inError: `unknown command "nope"`},
		{args: []string{"webhook"}, code: exitUsage, inError: "usage: paygate webhook validate"},
		{args: []string{"webhook", "-h"}, code: exitOK, inError: "usage: paygate webhook validate"},
		{args: []string{"webhook", "send-all"}, code: exitUsage, inError: `unknown subcommand "send-all" (want validate or send)`},
		{args: []string{"callback", "frob"}, code: exitUsage, inError: `callback: unknown subcommand "frob" (want send)`},
		{args: []string{"sandbox", "order", "cancel"}, code: exitUsage, inError: `sandbox order: unknown subcommand "cancel" (want create or settle)`},
		{args: []string{"sandbox", "order", "-help"}, code: exitOK, inError: "usage: paygate sandbox order settle"},
		{args: []string{"webhook", "validate"}, code: exitUsage, inError: "usage: paygate webhook validate [-agencies LIST | -brand NAME] FILE..."},
		{args: []string{"webhook", "validate", "-h"}, code: exitOK, inError: "Exit status"},
		{args: []string{"webhook", "validate", "-bogus"}, code: exitUsage, inError: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tt.args...)
			require.Equal(t, tt.code, code)
			require.Empty(t, out)
			require.Contains(t, errOut, tt.inError)
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	require.Equal(t, exitOK, code)
	require.Equal(t, "paygate "+paygate.Version+"\n", out)
	code, _, _ = runCLI(t, "", "version", "extra")
	require.Equal(t, exitUsage, code)
}

// Every subcommand speaks the same way: -h shows its flags (exit 0), usage
// and configuration errors exit 2, failed operations exit 1, no message
// doubles the "paygate:" prefix, and messages name the variables and flags
// a user sets, not Go options.
func TestCLIConsistency(t *testing.T) {
	for _, cmd := range [][]string{{"sandbox"}, {"sign"}, {"verify"}, {"callback", "send"}, {"callback"}, {"report"}, {"lookup"}, {"listen"}, {"replay"},
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
