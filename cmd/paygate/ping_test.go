package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
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
