package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

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

// sandbox -h shows the address the sandbox really listens on by default.
func TestSandboxHelpShowsItsAddress(t *testing.T) {
	code, _, errOut := runCLI(t, "", "sandbox", "-h")
	require.Equal(t, exitOK, code)
	require.Contains(t, errOut, "usage: paygate sandbox [-addr 127.0.0.1:0]")
	require.Contains(t, errOut, `(default "127.0.0.1:0")`)
	require.NotContains(t, errOut, "8085]", "the usage line names the default, not an example")
}
