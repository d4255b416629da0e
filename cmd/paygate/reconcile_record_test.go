package main

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/pgstore"
)

// recordTable makes a fresh pgstore table on the test PostgreSQL
// (PAYGATE_TEST_POSTGRES_DSN; skipped without it), dropped afterwards, and
// returns the DSN, the Deduper and its table's name.
func recordTable(t *testing.T) (string, *sql.DB, *pgstore.Deduper, string) {
	t.Helper()
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("no PostgreSQL: set PAYGATE_TEST_POSTGRES_DSN (bash -c 'source .ci/postgres.sh && go test ./cmd/paygate/...')")
	}
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	table := fmt.Sprintf("paygate_reconcile_test_%d", rand.Uint32())
	d, err := pgstore.New(db, pgstore.WithTable(table))
	require.NoError(t, err)
	require.NoError(t, d.Migrate(context.Background()))
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
		_, _ = db.Exec("DROP FUNCTION IF EXISTS " + table + "_claim(text, text, bigint)")
	})
	return dsn, db, d, table
}

// verdicts runs paygate reconcile (CSV) on refs and returns the verdict of
// each reference.
func verdicts(t *testing.T, args ...string) map[string]string {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"reconcile", "-interval", "0", "-format", "csv"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[0]] = r[6]
	}
	return got
}

// With PAYGATE_DEDUPE_DSN the dry run reads the merchant's record, the
// one its CallbackHandler wrote through pgstore: an order whose callback
// was fulfilled is already fulfilled, not to fulfil; one whose callback
// was lost is still to fulfil. It writes nothing to the record.
func TestReconcileReadsTheRecord(t *testing.T) {
	dsn, db, d, table := recordTable(t)
	sb := useSandbox(t, gatewaytest.WithCallbackLoss(func(ref string) bool { return ref == "LOST-1~cart" }))
	shop := httptest.NewServer(&paygate.CallbackHandler{
		Keys:    []paygate.Key{sb.Key()},
		Deduper: d,
		Logger:  slog.New(slog.DiscardHandler),
		Fulfil:  paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil }),
	})
	t.Cleanup(shop.Close)
	client, err := sb.Client()
	require.NoError(t, err)
	for _, ref := range []string{"PAID-1", "LOST-1"} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, ExtraData: "cart", Amount: 2590, Email: "a@example.com", ReturnURL: shop.URL})
		require.NoError(t, err)
		require.NoError(t, sb.Pay(ref, paygate.StatusSuccess))
	}
	sb.Settle()
	rowCount := func() (n int) {
		require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
		return n
	}
	before := rowCount()
	require.Equal(t, 1, before, "PAID-1's fulfilment, recorded by its callback")

	refs := []string{"PAID-1~cart", "LOST-1~cart", "NOPE-1"}
	require.Equal(t, map[string]string{"PAID-1~cart": "fulfil", "LOST-1~cart": "fulfil", "NOPE-1": "not found"}, verdicts(t, refs...),
		"without the record, each as if nothing had been fulfilled")
	t.Setenv(envDedupeDSN, dsn)
	require.Equal(t, map[string]string{"PAID-1~cart": "already fulfilled", "LOST-1~cart": "fulfil", "NOPE-1": "not found"},
		verdicts(t, append([]string{"-dedupe-table", table}, refs...)...))
	require.Equal(t, before, rowCount(), "the dry run wrote nothing")
	require.Equal(t, map[string]string{"PAID-1~cart": "already fulfilled", "LOST-1~cart": "fulfil", "NOPE-1": "not found"},
		verdicts(t, append([]string{"-dedupe-table", table}, refs...)...), "and a second run says the same")

	code, _, errOut := runCLI(t, "", "reconcile", "-dedupe-table", table+"_missing", "PAID-1~cart")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_DEDUPE_DSN: reading table "+table+"_missing")
}

// A record that cannot be opened is a configuration error, named by its
// variable, without the DSN's password.
func TestReconcileRecordErrors(t *testing.T) {
	useSandbox(t)
	for _, tc := range []struct {
		name, dsn, table, want string
	}{
		{name: "unreachable", dsn: "postgres://shop:s3cret@127.0.0.1:1/shop?connect_timeout=2", table: "paygate_dedupe", want: "PAYGATE_DEDUPE_DSN: reading table paygate_dedupe"},
		{name: "not a DSN", dsn: "postgres://shop:s3cret@%zz", table: "paygate_dedupe", want: "PAYGATE_DEDUPE_DSN"},
		{name: "bad table", dsn: "postgres://shop:s3cret@127.0.0.1:1/shop", table: "Bad-Name", want: "-dedupe-table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envDedupeDSN, tc.dsn)
			code, out, errOut := runCLI(t, "", "reconcile", "-dedupe-table", tc.table, "PAID-1")
			require.Equal(t, exitUsage, code, errOut)
			require.Contains(t, errOut, tc.want)
			require.NotContains(t, out+errOut, "s3cret", "the DSN's password is never printed")
		})
	}
}
