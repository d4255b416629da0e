package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// dsnVar names the environment variable with the test server's DSN.
const dsnVar = "PAYGATE_TEST_POSTGRES_DSN"

// testDSN is the test server's DSN. Without one it skips on a developer's
// machine and fails in CI.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(dsnVar)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run these tests against a real PostgreSQL (.ci/run starts one)", dsnVar)
		}
		t.Skipf("%s is not set: skipping the PostgreSQL tests", dsnVar)
	}
	return dsn
}

// openDB opens dsn with pgx's database/sql driver, closed after the test.
func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	t.Cleanup(func() { db.Close() })
	return db
}

// testTable is a fresh table name, dropped after the test.
func testTable(t testing.TB, db *sql.DB) string {
	table := fmt.Sprintf("paygate_outbox_test_%d", rand.Uint32())
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	return table
}

// fastRetries are the options of a test relay: retries at once, a short
// lease.
var fastRetries = []Option{WithBackoff(time.Millisecond, 5*time.Millisecond), WithLease(5 * time.Second), WithPollInterval(10 * time.Millisecond)}

// newTestOutbox makes an outbox on a fresh table of the test database,
// sending to srv's webhook.
func newTestOutbox(t testing.TB, srv *gatewaytest.Server, opts ...Option) (*Outbox, *sql.DB) {
	t.Helper()
	db := openDB(t, testDSN(t))
	return newOutboxOn(t, db, srv, opts...), db
}

// newOutboxOn makes an outbox on a fresh table of db.
func newOutboxOn(t testing.TB, db *sql.DB, srv *gatewaytest.Server, opts ...Option) *Outbox {
	t.Helper()
	sender, err := srv.WebhookSender(paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	o, err := New(db, sender, append([]Option{WithTable(testTable(t, db))}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, o.Migrate(context.Background()))
	require.NoError(t, o.Migrate(context.Background()), "Migrate is idempotent")
	return o
}

// sandbox starts a sandbox, closed after the test.
func sandbox(t testing.TB, opts ...gatewaytest.Option) *gatewaytest.Server {
	srv := gatewaytest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// validTx is a transaction that passes every rule; tests change one thing.
func validTx(prefix string, i int) zakat.Transaction {
	return zakat.Transaction{
		Agency:  zakat.AgencyLZS,
		OrderNo: fmt.Sprintf("%s-%06d", prefix, i),
		Amount:  1050,
		Name:    "Ahmad bin Ali",
		Email:   "ahmad@example.com",
		Time:    time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("", 8*3600)),
		Status:  zakat.StatusSuccess,
		Data: zakat.Data{
			Email: "ahmad@example.com", Name: "Ahmad bin Ali", ICNo: "900101145678",
			State: zakat.Selangor, Type: zakat.ZakatFitrah, Year: "2026", Phone: "0123456789",
			Address: "1 Jalan Satu", Postcode: "40000", City: "Shah Alam", Amount: "10.50",
			Rate: "2.625", Dependants: "4",
		},
	}
}

// validTxs is n valid transactions.
func validTxs(prefix string, n int) []zakat.Transaction {
	txs := make([]zakat.Transaction, n)
	for i := range txs {
		txs[i] = validTx(prefix, i)
	}
	return txs
}

// enqueue enqueues txs in a transaction of its own and commits it.
func enqueue(t testing.TB, o *Outbox, db *sql.DB, txs ...zakat.Transaction) error {
	t.Helper()
	tx, err := db.Begin()
	require.NoError(t, err)
	if err := o.Enqueue(context.Background(), tx, txs...); err != nil {
		require.NoError(t, tx.Rollback())
		return err
	}
	return tx.Commit()
}

// drain runs relay rounds until nothing is due and nothing queued is
// left but what waits (at most rounds rounds).
func drain(t testing.TB, o *Outbox, rounds int) Stats {
	t.Helper()
	ctx := context.Background()
	for range rounds {
		s, err := o.Stats(ctx)
		require.NoError(t, err)
		if s.Depth == 0 {
			return s
		}
		_, err = o.RelayOnce(ctx)
		require.NoError(t, err)
		time.Sleep(5 * time.Millisecond) // the fast backoff's wait
	}
	s, err := o.Stats(ctx)
	require.NoError(t, err)
	return s
}

// states reads every row's state by orderno.
func states(t testing.TB, o *Outbox) map[string]string {
	t.Helper()
	rows, err := o.db.Query(`SELECT orderno, state FROM ` + o.table)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var no, st string
		require.NoError(t, rows.Scan(&no, &st))
		out[no] = st
	}
	require.NoError(t, rows.Err())
	return out
}

// storedNos is the ordernos the sandbox holds.
func storedNos(srv *gatewaytest.Server) map[string]zakat.Transaction {
	out := map[string]zakat.Transaction{}
	for _, tx := range srv.Transactions() {
		out[tx.OrderNo] = tx
	}
	return out
}
