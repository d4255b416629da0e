package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shellQuote's output, eval'd by sh, gives the value back as it was, with
// nothing in it expanded.
func TestShellQuote(t *testing.T) {
	for _, v := range []string{"", "plain", "it's", "''", `$(echo pwned)`, "`id`", `a\b`, "two\nlines", "$HOME", `"quoted"`, "*"} {
		out, err := exec.Command("sh", "-c", "eval \"V=$1\"; printf '%s' \"$V\"", "sh", shellQuote(v)).Output()
		require.NoError(t, err, v)
		require.Equal(t, v, string(out), "%q", v)
	}
}

// paygate sandbox -export prints lines sh can eval into working settings,
// and the sandbox prints one line per callback attempt (the handler's
// answer and time) and per lookup it answers, on stderr.
func TestSandboxExportAndLog(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- dispatch(env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errOut},
			[]string{"sandbox", "-export", "-duplicates", "2", "-retry-interval", "10ms"})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "export PAYGATE_WEBHOOK_PASSWORD=") }, 5*time.Second, 10*time.Millisecond)
	env, err := exec.Command("sh", "-c", out.String()+"\nenv").Output()
	require.NoError(t, err, "sh evals what -export prints:\n%s", out.String())
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "PAYGATE_") {
			t.Setenv(k, v)
		}
	}
	merchant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer merchant.Close()
	code, stdout, stderr := runCLI(t, "", "sandbox", "order", "create", "-refno", "L-1", "-extra", "cart", "-amount", "1", "-return-url", merchant.URL)
	require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
	code, stdout, stderr = runCLI(t, "", "sandbox", "order", "settle", "-refno", "L-1")
	require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
	code, stdout, stderr = runCLI(t, "", "lookup", "L-1~cart")
	require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
	for _, want := range []string{
		`msg=callback refNo=L-1~cart status=success attempt=1 duplicate=1/2 answer=503 took=\S+`,
		`msg=callback refNo=L-1~cart status=success attempt=2 duplicate=2/2 answer=503 took=\S+`,
		`msg=lookup refNo=L-1~cart status=200 answer=OK took=\S+`,
	} {
		re := regexp.MustCompile(want)
		require.Eventually(t, func() bool { return re.MatchString(errOut.String()) }, 5*time.Second, 10*time.Millisecond,
			"no line matching %s in\n%s", want, errOut.String())
	}
	cancel()
	require.Equal(t, exitOK, <-done)
}
