package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
	"github.com/paygate-go/paygate/zakat/outbox"
)

// paygate outbox status, dead, retry and drop read and act on the bank's
// outbox: two transactions the service refused are dead with its reason;
// one is retried, the other dropped.
func TestOutboxCommands(t *testing.T) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("no PostgreSQL: set PAYGATE_TEST_POSTGRES_DSN (bash -c 'source .ci/postgres.sh && go test ./cmd/paygate/...')")
	}
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	table := fmt.Sprintf("paygate_outbox_cli_%d", rand.Uint32())
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	v, err := zakat.NewValidator(zakat.ADBAgencies()...)
	require.NoError(t, err)
	srv := gatewaytest.NewServer(gatewaytest.WithWebhookValidator(v)) // refuses the document's codes
	t.Cleanup(srv.Close)
	sender, err := paygate.NewWebhookSender(srv.WebhookURL(), srv.WebhookPassword, paygate.WithBatchSize(1))
	require.NoError(t, err)
	o, err := outbox.New(db, sender, outbox.WithTable(table))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, o.Migrate(ctx))
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, o.Enqueue(ctx, tx, cliTx("OB-1"), cliTx("OB-2")))
	require.NoError(t, tx.Commit())
	_, err = o.RelayOnce(ctx)
	require.NoError(t, err)

	t.Setenv(envOutboxDSN, dsn)
	for _, tc := range []struct {
		args         []string
		code         int
		out, errText string
	}{
		{args: []string{"status"}, code: exitInvalid, out: "queued 0\noldest 0s\ndead 2\n"},
		{args: []string{"dead"}, code: exitOK, out: "rejected by the service"},
		{args: []string{"dead", "-limit", "1"}, code: exitOK, out: "OB-1"},
		{args: []string{"dead"}, code: exitOK, out: `OB-1     10.00   "Ali"  success`}, // the content held, to compare with the service's
		{args: []string{"retry"}, code: exitUsage, errText: "want -all or at least one ORDERNO"},
		{args: []string{"retry", "-all", "OB-1"}, code: exitUsage, errText: "not both"},
		{args: []string{"drop"}, code: exitUsage, errText: "want at least one ORDERNO"},
		{args: []string{"retry", "OB-1", "OB-9"}, code: exitOK, out: "retried 1\n"},
		{args: []string{"drop", "OB-1", "OB-2"}, code: exitOK, out: "dropped 1\n"},
		{args: []string{"status"}, code: exitOK, out: "queued 1\n"},
		{args: []string{"status", "-table", "Bad"}, code: exitUsage, errText: "-table"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"outbox", tc.args[0], "-table", table}, tc.args[1:]...)...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Contains(t, out, tc.out, tc.args)
		require.Contains(t, errOut, tc.errText, tc.args)
	}
	t.Setenv(envOutboxDSN, "")
	code, _, errOut := runCLI(t, "", "outbox", "status")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, envOutboxDSN+" is not set")
}

// paygate outbox dead lists at most 100 by default, -limit N at most N,
// and -limit 0 all of them.
func TestOutboxDeadLimit(t *testing.T) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("no PostgreSQL: set PAYGATE_TEST_POSTGRES_DSN (bash -c 'source .ci/postgres.sh && go test ./cmd/paygate/...')")
	}
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	table := fmt.Sprintf("paygate_outbox_cli_%d", rand.Uint32())
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	o, err := outbox.New(db, nil, outbox.WithTable(table))
	require.NoError(t, err)
	require.NoError(t, o.Migrate(context.Background()))
	_, err = db.Exec(`INSERT INTO ` + table + ` (orderno, body, status, state, reason)
SELECT 'DL-' || lpad(i::text, 3, '0'), '{}', 'success', 'dead', 'refused' FROM generate_series(1, 101) AS i`)
	require.NoError(t, err)
	t.Setenv(envOutboxDSN, dsn)
	for _, tc := range []struct {
		args []string
		rows int
	}{
		{args: nil, rows: 100},
		{args: []string{"-limit", "1"}, rows: 1},
		{args: []string{"-limit", "0"}, rows: 101},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"outbox", "dead", "-table", table}, tc.args...)...)
		require.Equal(t, exitOK, code, "%v: %s", tc.args, errOut)
		require.Equal(t, tc.rows+1, strings.Count(out, "\n"), "%v: the header and the rows", tc.args)
	}
}

// cliTx is a valid transaction (the document's codes) with orderno no.
func cliTx(no string) zakat.Transaction {
	return zakat.Transaction{Agency: zakat.AgencyLZS, OrderNo: no, Amount: 1000, Name: "Ali", Email: "ali@example.com",
		Time: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC), Status: zakat.StatusSuccess}
}
