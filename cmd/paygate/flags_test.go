package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A missing required flag or argument is named on its own line before the
// usage, not left to the usage alone.
func TestMissingRequiredNamed(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"report"}, want: "paygate report: -from is required: first day, YYYY-MM-DD\n"},
		{args: []string{"report", "-from", "2026-11-01"}, want: "paygate report: -to is required: last day, YYYY-MM-DD\n"},
		{args: []string{"report", "-from", "2026-11-01", "-to", "2026-11-02", "extra"}, want: `paygate report: unexpected argument "extra"`},
		{args: []string{"lookup"}, want: "paygate lookup: want one REFERENCE, got 0 arguments\n"},
		{args: []string{"sign"}, want: "paygate sign: give exactly one of -url and -form\n"},
		{args: []string{"verify"}, want: "paygate verify: want one BODY (or - for standard input), got 0 arguments\n"},
		{args: []string{"callback", "send", "-refno", "X"}, want: "paygate callback send: -url is required: the merchant's returnUrl (loopback only)\n"},
		{args: []string{"callback", "send", "-url", "http://127.0.0.1:1/r"}, want: "paygate callback send: -refno is required: refNo\n"},
		{args: []string{"reconcile"}, want: "paygate reconcile: want at least one REFNO"},
		{args: []string{"webhook", "validate"}, want: "paygate webhook validate: want at least one FILE"},
		{args: []string{"webhook", "send"}, want: "paygate webhook send: want one FILE"},
		{args: []string{"ping", "extra"}, want: `paygate ping: unexpected argument "extra"`},
		{args: []string{"version", "extra"}, want: `paygate version: unexpected argument "extra"`},
		{args: []string{"sandbox", "order", "create", "-refno", "R"}, want: "paygate sandbox order create: -amount is required"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errOut, strings.Split(tc.want, "\n")[0]), "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, "usage: paygate", "%v: the usage follows", tc.args)
	}
}
