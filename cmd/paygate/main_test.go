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
		{args: []string{"webhook", "validate"}, code: exitUsage, inError: "usage: paygate webhook validate [-agencies LIST] FILE..."},
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

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	require.Equal(t, exitOK, code)
	require.Equal(t, "paygate "+paygate.Version+"\n", out)
	code, _, _ = runCLI(t, "", "version", "extra")
	require.Equal(t, exitUsage, code)
}
