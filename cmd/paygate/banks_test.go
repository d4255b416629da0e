package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// paygate banks prints the sandbox's lists as CSV; a refusal, a missing
// host and a stray argument are reported with their statuses.
func TestBanks(t *testing.T) {
	useSandbox(t)
	for _, tc := range []struct {
		args      []string
		line, not string
	}{
		{args: nil, line: "ABB0233,Affin Bank,A,true", not: "MBB0228"},
		{args: []string{"-b2b"}, line: "MBB0228,Maybank2E,A,true", not: "MB2U0227"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"banks"}, tc.args...)...)
		require.Equal(t, exitOK, code, errOut)
		require.True(t, strings.HasPrefix(out, "code,name,status,online\n"), out)
		require.Contains(t, out, tc.line+"\n")
		require.NotContains(t, out, tc.not)
	}
	code, out, _ := runCLI(t, "", "banks")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "BIMB0340,Bank Islam,B,false", "a blocked bank is offline")

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer down.Close()
	code, _, errOut := runCLI(t, "", "banks", "-reports-url", down.URL)
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errOut, "paygate banks: ")
	require.Contains(t, errOut, "404")

	t.Setenv("PAYGATE_REPORTS_URL", "")
	code, _, errOut = runCLI(t, "", "banks")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_REPORTS_URL")
	code, _, _ = runCLI(t, "", "banks", "extra")
	require.Equal(t, exitUsage, code)
}
