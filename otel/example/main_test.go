package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The example prints every kind of span and the metrics.
func TestRun(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out))
	for _, want := range []string{`"Name":"paygate POST /v2/checkout"`, `"Name":"paygate callback"`, `"Name":"paygate reconcile"`,
		`"Name":"paygate GET /api/report/v1/fpxrequest"`, `"Name":"paygate webhook send"`, `"Name":"paygate POST /api/bank/webhook"`,
		`"Name":"paygate.callback.claims"`, `"Name":"paygate.reconcile.entries"`, `"Name":"paygate.webhook.transactions"`} {
		require.Contains(t, out.String(), want)
	}
	require.NotContains(t, out.String(), "INV-1001")
}
