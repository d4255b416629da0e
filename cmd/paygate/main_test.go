package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
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
		{nil, exitUsage, "usage: paygate"},
		{[]string{"-h"}, exitOK, "webhook"},
		{[]string{"help"}, exitOK, "exit status"},
		{[]string{"nope"}, exitUsage, `unknown command "nope"`},
		{[]string{"webhook"}, exitUsage, "usage: paygate webhook validate"},
		{[]string{"webhook", "-h"}, exitOK, "usage: paygate webhook validate"},
		{[]string{"webhook", "send-all"}, exitUsage, `unknown subcommand "send-all" (want validate or send)`},
		{[]string{"callback", "frob"}, exitUsage, `callback: unknown subcommand "frob" (want send)`},
		{[]string{"sandbox", "order", "cancel"}, exitUsage, `sandbox order: unknown subcommand "cancel" (want create or settle)`},
		{[]string{"sandbox", "order", "-help"}, exitOK, "usage: paygate sandbox order settle"},
		{[]string{"webhook", "validate"}, exitUsage, "usage: paygate webhook validate [-agencies LIST] FILE..."},
		{[]string{"webhook", "validate", "-h"}, exitOK, "Exit status"},
		{[]string{"webhook", "validate", "-bogus"}, exitUsage, "flag provided but not defined"},
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

func TestWebhookValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	valid := "../../testdata/webhook/valid-batch.json"
	invalid := "../../testdata/webhook/invalid-batch.json"
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
		{"valid", []string{valid}, "", exitOK, valid + ": ok\n", ""},
		{"one problem", []string{oneBad}, "", exitInvalid,
			oneBad + ": 1 problem\n  /transactions/0/status: must be one of success, pending, failed (value \"ok\")\n", ""},
		{"many problems", []string{invalid}, "", exitInvalid, invalid + ": 4 problems\n" +
			"  /transactions/0/amount: must be >= 0 (value \"-1\")\n" +
			"  /transactions/1/time: must be ISO 8601 with a timezone offset (Z, +08:00 or +0800), e.g. 2026-11-22T10:30:00+08:00 (value \"2026-11-22 10:30\")\n" +
			"  /transactions/1/orderno: must be unique in the batch (also at /transactions/0/orderno) (value \"ORD-000001\")\n" +
			"  /transactions/2/data/zakat_ic_no: must be 12 digits (value \"1234\")\n", ""},
		{"not JSON", []string{notJSON}, "", exitInvalid, notJSON + ": 1 problem\n  (body): must be valid JSON: offset 18: unexpected end of input, want a JSON value\n", ""},
		{"valid and invalid", []string{valid, oneBad}, "", exitInvalid, valid + ": ok\n" + oneBad + ": 1 problem\n", ""},
		{"missing file", []string{missing, valid}, "", exitUsage, valid + ": ok\n", missing + ": open " + missing},
		{"stdin", []string{"-"}, `{"transactions":[]}`, exitOK, "-: ok\n", ""},
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

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	require.Equal(t, exitOK, code)
	require.Equal(t, "paygate "+paygate.Version+"\n", out)
	code, _, _ = runCLI(t, "", "version", "extra")
	require.Equal(t, exitUsage, code)
}
