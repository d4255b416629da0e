package sqldedup

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/dedupetest"
)

// dsnVar names the environment variable with the test server's DSN.
const dsnVar = "PAYGATE_TEST_POSTGRES_DSN"

// testDeduper opens the test database and a fresh table, dropped afterwards.
// Without a DSN it skips on a developer's machine and fails in CI.
func testDeduper(t *testing.T, opts ...Option) (*Deduper, *sql.DB) {
	t.Helper()
	return testDeduperOn(t, openDB(t, testDSN(t)), opts...)
}

// testDeduperOn makes a fresh table on db, dropped afterwards.
func testDeduperOn(t testing.TB, db *sql.DB, opts ...Option) (*Deduper, *sql.DB) {
	t.Helper()
	table := fmt.Sprintf("paygate_dedupe_test_%d", rand.Uint32())
	d, err := New(db, append([]Option{WithTable(table)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, d.Migrate(context.Background()))
	require.NoError(t, d.Migrate(context.Background()), "Migrate is idempotent")
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	return d, db
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

// testDSN is the test server's DSN. Without one it skips on a developer's
// machine and fails in CI.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(dsnVar)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run these tests against a real PostgreSQL (.ci/run starts one)", dsnVar)
		}
		t.Skipf("%s is not set: skipping the PostgreSQL tests. Run them with %s='postgres://USER@HOST:PORT/DB?sslmode=disable' go test ./sqldedup "+
			"or, as root on Debian, with a throw-away server: bash -c 'source .ci/postgres.sh && go test ./sqldedup'", dsnVar, dsnVar)
	}
	return dsn
}

// The Deduper keeps the contract CallbackHandler relies on.
func TestDeduperContract(t *testing.T) {
	dedupetest.Run(t, func(t *testing.T) paygate.Deduper {
		d, _ := testDeduper(t)
		return d
	})
}

// Completed keys are forgotten after retention; Purge removes them.
func TestDeduperRetentionAndPurge(t *testing.T) {
	ctx := context.Background()
	d, _ := testDeduper(t, WithRetention(50*time.Millisecond))
	c, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
	hour, _ := testDeduper(t, WithRetention(time.Hour))
	c, err = hour.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.NoError(t, hour.Complete(ctx, "k", c.Token, "GW1"))
	c, err = hour.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, c, "done within its retention, however short")
	time.Sleep(150 * time.Millisecond)
	n, err := d.Purge(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	c, err = d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, c.State)
}

// A table made by an earlier version (no result column) is migrated.
func TestMigrateAddsResult(t *testing.T) {
	ctx := context.Background()
	_, db := testDeduper(t)
	table := fmt.Sprintf("paygate_dedupe_old_%d", rand.Uint32())
	_, err := db.Exec(`CREATE TABLE ` + table + ` (key text PRIMARY KEY, token text, done boolean NOT NULL DEFAULT false, expires_at timestamptz NOT NULL)`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	d, err := New(db, WithTable(table))
	require.NoError(t, err)
	require.NoError(t, d.Migrate(ctx))
	c, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
	c, err = d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, c)
}

// A fleet that starts together migrates at once: 8 connections of their
// own (as 8 processes would have) run Migrate on one fresh table at the
// same instant, 20 rounds, and none fails; the table then works.
func TestMigrateConcurrent(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	const fleet, rounds = 8, 20
	dbs := make([]*sql.DB, fleet)
	for i := range dbs {
		dbs[i] = openDB(t, dsn)
		require.NoError(t, dbs[i].PingContext(ctx))
	}
	for round := range rounds {
		table := fmt.Sprintf("paygate_dedupe_fleet_%d_%d", rand.Uint32(), round)
		t.Cleanup(func() { _, _ = dbs[0].Exec("DROP TABLE IF EXISTS " + table) })
		errs := make([]error, fleet)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, db := range dbs {
			d, err := New(db, WithTable(table))
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = d.Migrate(ctx)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, process %d", round, i)
		}
		d, err := New(dbs[round%fleet], WithTable(table))
		require.NoError(t, err)
		c, err := d.Claim(ctx, "k", time.Minute)
		require.NoError(t, err)
		require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
	}
}

// Two handlers (two replicas) share one PostgreSQL-backed deduper; 100
// concurrent duplicates split between them give exactly one fulfilment.
func TestTwoReplicasOneFulfilment(t *testing.T) {
	d, _ := testDeduper(t)
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	var mu sync.Mutex
	fulfilled := map[string]int{}
	newReplica := func() *paygate.CallbackHandler {
		return &paygate.CallbackHandler{
			Keys:    []paygate.Key{key},
			Deduper: d,
			Fulfil: func(_ context.Context, cb *paygate.Callback) error {
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				defer mu.Unlock()
				fulfilled[cb.RefNo]++
				return nil
			},
		}
	}
	replicas := []*paygate.CallbackHandler{newReplica(), newReplica()}
	fields := url.Values{"status": {"success"}, "refNo": {"INV-100~x"}, "orderNo": {"GW100"}, "amount": {"10.00"},
		"fpx": {`{"fpx_debit_auth_code":"00"}`}}
	codes := make([]int, 100)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range codes {
		r, err := paygate.NewCallbackRequest(key, "/return", fields)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			w := httptest.NewRecorder()
			replicas[i%2].ServeHTTP(w, r)
			codes[i] = w.Code
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, map[string]int{"INV-100": 1}, fulfilled)
	for _, c := range codes {
		require.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, c)
	}
}

// A replica that crashed mid-fulfilment leaves a claim; once its lease ends,
// the gateway's retry is fulfilled by the other replica.
func TestCrashedReplicaLeaseExpires(t *testing.T) {
	ctx := context.Background()
	d, _ := testDeduper(t)
	key, _ := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	c, err := d.Claim(ctx, "fulfil|INV-200", 100*time.Millisecond) // the crashed replica
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, c.State)
	calls := 0
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Fulfil: func(context.Context, *paygate.Callback) error {
		calls++
		return nil
	}}
	fields := url.Values{"status": {"success"}, "refNo": {"INV-200"}, "orderNo": {"GW200"}}
	deliver := func() int {
		r, err := paygate.NewCallbackRequest(key, "/return", fields)
		require.NoError(t, err)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusServiceUnavailable, deliver())
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, http.StatusOK, deliver())
	require.Equal(t, http.StatusOK, deliver())
	require.Equal(t, 1, calls)
}

func TestNewOptions(t *testing.T) {
	_, err := New(nil)
	require.Error(t, err)
	db := &sql.DB{}
	for _, bad := range []string{"", "Robert'); DROP TABLE x;--", "a b", "1abc", "UPPER"} {
		_, err := New(db, WithTable(bad))
		require.Error(t, err, bad)
	}
	d, err := New(db, WithTable("shop.paygate_events"))
	require.NoError(t, err)
	require.Contains(t, d.claimSQL, "INSERT INTO shop.paygate_events AS t")
	_, err = New(db, WithRetention(0))
	require.Error(t, err)
}
