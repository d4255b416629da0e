package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/gatewaytest"
)

// fastProbe lets the CLI's probe run without its 2-a-second pacing.
func fastProbe(t *testing.T) {
	t.Helper()
	old := probeInterval
	probeInterval = time.Microsecond
	t.Cleanup(func() { probeInterval = old })
}

func TestProbeCommand(t *testing.T) {
	fastProbe(t)
	dir := t.TempDir()
	tests := []struct {
		name     string
		opts     []gatewaytest.Option
		args     []string
		code     int
		contains string
	}{
		{name: "read-only, holds", args: []string{"-o", "-"}, code: exitOK, contains: "A-banklist: holds"},
		{name: "create, a switch on: differs", opts: []gatewaytest.Option{gatewaytest.WithB2BMinimumRefused()}, args: []string{"-create", "-o", "-"},
			code: exitInvalid, contains: "A-b2b-minimum: differs"},
		{name: "without -create the creating checks are named", args: []string{"-o", "-"}, code: exitOK,
			contains: "A-b2b-minimum: cannot be checked from here\n  why:  creates an order: run with -create"},
		{name: "plain http elsewhere: usage", args: []string{"-reports-url", "http://gateway.example"}, code: exitUsage, contains: "plain http"},
		{name: "a bad -since", args: []string{"-since", "yesterday"}, code: exitUsage, contains: "YYYY-MM-DD"},
		{name: "an argument", args: []string{"extra"}, code: exitUsage, contains: "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useSandbox(t, tt.opts...)
			code, out, errOut := runCLI(t, "", append([]string{"probe"}, tt.args...)...)
			require.Equal(t, tt.code, code, "%s\n%s", out, errOut)
			require.Contains(t, out+errOut, tt.contains)
		})
	}

	t.Run("JSON to a file", func(t *testing.T) {
		useSandbox(t)
		path := filepath.Join(dir, "report.json")
		code, out, errOut := runCLI(t, "", "probe", "-json", "-o", path)
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, "report: "+path)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var rep struct {
			Results []struct{ ID, Verdict string }
		}
		require.NoError(t, json.Unmarshal(raw, &rep))
		require.NotEmpty(t, rep.Results)
	})

	t.Run("no credential: usage", func(t *testing.T) {
		useSandbox(t)
		t.Setenv("PAYGATE_API_KEY", "")
		t.Setenv("PAYGATE_AUTH_TOKEN", "")
		code, _, errOut := runCLI(t, "", "probe", "-o", "-")
		require.Equal(t, exitUsage, code, errOut)
	})
}
