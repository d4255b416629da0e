package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/gatewaytest"
)

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

func TestPingPrintsTheClockOffset(t *testing.T) {
	useSandbox(t, gatewaytest.WithClock(func() time.Time { return time.Now().Add(5 * time.Minute) }))
	code, out, errOut := runCLI(t, "", "ping")
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `clock: offset \+(4m59s|5m0s|5m1s): the service's clock is \S+ ahead of this machine's \(Date header\); signatures are dated on the service's clock`, out)
}

func TestClockLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		offset   time.Duration
		measured bool
		want     string
	}{
		{"no Date", 0, false, "offset unknown"},
		{"in step", -2 * time.Second, true, "offset -2s: in step with the service (within 5s)"},
		{"ahead", 5 * time.Minute, true, "offset +5m0s: the service's clock is 5m0s ahead of this machine's (Date header); signatures are dated on the service's clock"},
		{"behind", -5 * time.Minute, true, "5m0s behind this machine's"},
		{"too far", 2 * time.Hour, true, "more than the 1h0m0s the client corrects for: set this machine's clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, clockLine(tc.offset, tc.measured), tc.want)
		})
	}
}
