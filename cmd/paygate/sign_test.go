package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/stretchr/testify/require"
)

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
	signed, _ := gatewaytest.SignCallback(key, fields)
	noAmount, _ := gatewaytest.SignCallback(key, url.Values{"status": {"success"}, "refNo": {"INV-1~x"}})
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
	const okLine = `ok: refNo "INV-1~x", status "success", amount "10.00" (signature matches the form encoding)` + "\n"
	// The same fields signed over PHP's encoding (~ as %7E), as a gateway
	// built on http_build_query would.
	php := url.Values{"status": {"success"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}, "signature": {sig("amount=10.00&refNo=INV-1%7Ex&status=success")}}
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string
		err   string
	}{
		{name: "ok", args: []string{"verify", signed.Encode()}, code: exitOK, out: okLine},
		{name: "ok on stdin", args: []string{"verify", "-"}, stdin: signed.Encode() + "\n", code: exitOK, out: okLine},
		{name: "leading ?", args: []string{"verify", "?" + signed.Encode()}, code: exitOK, out: okLine, err: "dropped the leading ?"},
		{name: "leading ? on stdin", args: []string{"verify", "-"}, stdin: " ?" + signed.Encode(), code: exitOK, out: okLine, err: "dropped the leading ?"},
		{name: "two ?", args: []string{"verify", "??" + signed.Encode()}, code: exitInvalid, out: "mismatch: paygate: signature mismatch\n", err: "dropped the leading ?"},
		{name: "php encoding", args: []string{"verify", php.Encode()}, code: exitOK,
			out: `ok: refNo "INV-1~x", status "success", amount "10.00" (signature matches the form-php encoding)` + "\n"},
		{name: "no amount", args: []string{"verify", noAmount.Encode()}, code: exitOK,
			out: `ok: refNo "INV-1~x", status "success", amount (none) (signature matches the form encoding)` + "\n"},
		{name: "explain", args: []string{"verify", "-explain", signed.Encode()}, code: exitOK, out: explained(signed.Get("signature"), "matches", "10.00") + okLine},
		{name: "explain tampered", args: []string{"verify", "-explain", tampered.Encode()}, code: exitInvalid, out: explained(signed.Get("signature"), "differs", "1.00") + "mismatch: paygate: signature mismatch\n"},
		{name: "explain unsigned", args: []string{"verify", "-explain", fields.Encode()}, code: exitInvalid, out: explained("(none)", "differs", "10.00") + "missing: no signature (the buyer's browser return; display only)\n"},
		{name: "tampered", args: []string{"verify", tampered.Encode()}, code: exitInvalid, out: "mismatch: paygate: signature mismatch\n"},
		{name: "unsigned", args: []string{"verify", fields.Encode()}, code: exitInvalid, out: "missing: no signature (the buyer's browser return; display only)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.out, out)
			require.Contains(t, errOut, tt.err)
			if tt.err == "" {
				require.Empty(t, errOut)
			}
			require.NotContains(t, out+errOut, testKey, "never the key")
			require.NotContains(t, out+errOut, hex.EncodeToString(raw), "never the key")
		})
	}
	code, _, _ := runCLI(t, "", "verify")
	require.Equal(t, exitUsage, code)
	_, _, help := runCLI(t, "", "verify", "-h")
	require.Contains(t, help, "One leading ? (a body pasted from a URL's query) is dropped")
}

// TestFormFromStdinIsBounded: sign -form - and verify - read at most
// maxFormInput bytes of standard input, and refuse more with the limit,
// rather than read an endless stream into memory.
func TestFormFromStdinIsBounded(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	t.Setenv("PAYGATE_AGENCY", "AGENCY01")
	big := "a=" + strings.Repeat("x", maxFormInput)
	for _, args := range [][]string{{"verify", "-"}, {"sign", "-form", "-"}} {
		t.Run(args[0], func(t *testing.T) {
			code, out, errOut := runCLI(t, big, args...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, out)
			require.Contains(t, errOut, "more than 1048576 bytes")
			// At the limit it is read.
			code, _, errOut = runCLI(t, big[:maxFormInput], args...)
			require.NotContains(t, errOut, "more than")
			require.NotEqual(t, exitUsage, code, errOut)
		})
	}
}
