package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/dedupetest"
	"github.com/paygate-go/paygate/gatewaytest"
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
	t.Cleanup(func() { dropTable(db, table) })
	return d, db
}

// dropTable drops a test table and its claim function.
func dropTable(db *sql.DB, table string) {
	_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
	_, _ = db.Exec("DROP FUNCTION IF EXISTS " + table + "_claim(text, text, bigint)")
}

// handMadeTable is the DDL of a table made without Migrate (by an earlier
// version, or by hand from these docs): it has no claim function.
const handMadeTable = ` (key text PRIMARY KEY, token text, done boolean NOT NULL DEFAULT false, result text, expires_at timestamptz NOT NULL)`

// A table with no claim function (Migrate not run since the upgrade)
// keeps the whole contract, at one more round trip per claim.
func TestClaimWithoutClaimFunction(t *testing.T) {
	newUnmigrated := func(t *testing.T, db *sql.DB, opts ...Option) *Deduper {
		table := fmt.Sprintf("paygate_dedupe_hand_%d", rand.Uint32())
		_, err := db.Exec(`CREATE TABLE ` + table + handMadeTable)
		require.NoError(t, err)
		t.Cleanup(func() { dropTable(db, table) })
		d, err := New(db, append([]Option{WithTable(table)}, opts...)...)
		require.NoError(t, err)
		return d
	}
	for _, tc := range []struct {
		name   string
		native bool
	}{
		{name: "pgx", native: true},
		{name: "other driver", native: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dedupetest.Run(t, func(t *testing.T) paygate.Deduper {
				db, _ := openCountingDB(t, tc.native)
				return newUnmigrated(t, db)
			})
		})
	}

	ctx := context.Background()
	// A key completed with a retention of an hour is done for that hour
	// on this path too (as TestDeduperRetentionAndPurge checks with the
	// function).
	hour := newUnmigrated(t, openDB(t, testDSN(t)), WithRetention(time.Hour))
	c, err := hour.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.NoError(t, hour.Complete(ctx, "k", c.Token, "GW1"))
	c, err = hour.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, c, "done within its retention, however short")

	proxy, dsn := newCountingProxy(t, testDSN(t))
	d := newUnmigrated(t, openDB(t, dsn))
	_, err = d.Claim(ctx, "warm", time.Minute) // warms the connection and pgx's statement cache
	require.NoError(t, err)
	require.EqualValues(t, 2, proxy.roundTrips(func() { c, err = d.Claim(ctx, "k", time.Minute) }), "the failed call of the missing function, then the claim")
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, c.State)
	require.NoError(t, d.Migrate(ctx))
	require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
	_, err = d.Claim(ctx, "warm", time.Minute) // prepares the statement that calls the function
	require.NoError(t, err)
	require.EqualValues(t, 1, proxy.roundTrips(func() { c, err = d.Claim(ctx, "k", time.Minute) }), "migrated: one statement")
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, c)
}

// Migrate replaces a claim function whose body differs from this
// version's (an earlier version's, or a tampered one), and leaves one that
// matches untouched, so that a replica's start-up invalidates no plan of
// the others.
func TestMigrateClaimFunction(t *testing.T) {
	ctx := context.Background()
	d, db := testDeduper(t)
	version := func() string {
		var xmin string
		require.NoError(t, db.QueryRow(`SELECT xmin::text FROM pg_proc WHERE oid = to_regprocedure($1)`, d.claimFunc+"(text,text,bigint)").Scan(&xmin))
		return xmin
	}
	before := version()
	require.NoError(t, d.Migrate(ctx))
	require.Equal(t, before, version(), "a matching function is left alone")
	_, err := db.Exec(`CREATE OR REPLACE FUNCTION ` + d.claimFunc + `(claim_key text, claim_token text, lease_us bigint)
RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN false; END $$`)
	require.NoError(t, err)
	c, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimBusy, c.State, "the stale function never acquires")
	require.NoError(t, d.Migrate(ctx))
	c, err = d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, c.State, "Migrate replaced the stale function")
}

// reloptions is table's storage parameters, sorted, space-separated.
func reloptions(t testing.TB, db *sql.DB, table string) string {
	t.Helper()
	var opts string
	require.NoError(t, db.QueryRow(`SELECT coalesce((SELECT string_agg(o, ' ' ORDER BY o) FROM unnest(reloptions) AS o), '') FROM pg_class WHERE oid = to_regclass($1)`, table).Scan(&opts))
	return opts
}

// Migrate gives the table autovacuum settings that follow a daily Purge,
// and keeps any the operator set with ALTER TABLE: each is set only when
// the table has none, so a later Migrate (every replica's start) never
// undoes an operator's choice, and takes no lock when all are there.
func TestMigrateVacuumSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		operator string // run on the migrated table, before Migrate again
		want     string
		alters   bool // Migrate must set a missing setting
	}{
		{name: "as built", want: "autovacuum_vacuum_scale_factor=0.002 autovacuum_vacuum_threshold=1000"},
		{name: "an operator's scale factor kept", operator: "SET (autovacuum_vacuum_scale_factor = 0.05)",
			want: "autovacuum_vacuum_scale_factor=0.05 autovacuum_vacuum_threshold=1000"},
		{name: "an operator's every setting kept", operator: "SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 50000, fillfactor = 90)",
			want: "autovacuum_vacuum_scale_factor=0 autovacuum_vacuum_threshold=50000 fillfactor=90"},
		{name: "one reset is set again", operator: "RESET (autovacuum_vacuum_threshold)",
			want: "autovacuum_vacuum_scale_factor=0.002 autovacuum_vacuum_threshold=1000", alters: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			d, db := testDeduper(t)
			if tc.operator != "" {
				_, err := db.Exec(`ALTER TABLE ` + d.table + ` ` + tc.operator)
				require.NoError(t, err)
			}
			var before string
			require.NoError(t, db.QueryRow(`SELECT xmin::text FROM pg_class WHERE oid = to_regclass($1)`, d.table).Scan(&before))
			require.NoError(t, d.Migrate(ctx))
			require.Equal(t, tc.want, reloptions(t, db, d.table))
			var after string
			require.NoError(t, db.QueryRow(`SELECT xmin::text FROM pg_class WHERE oid = to_regclass($1)`, d.table).Scan(&after))
			require.Equal(t, !tc.alters, before == after, "Migrate altered the table (its pg_class row) only to set a missing setting")
		})
	}
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
		t.Skipf("%s is not set: skipping the PostgreSQL tests. Run them with %s='postgres://USER@HOST:PORT/DB?sslmode=disable' go test ./pgstore "+
			"or, as root on Debian, with a throw-away server: bash -c 'source .ci/postgres.sh && go test ./pgstore'", dsnVar, dsnVar)
	}
	return dsn
}

// The Deduper keeps the contract CallbackHandler relies on, made by New
// or by NewPgx (its claims on the pool's connections).
func TestDeduperContract(t *testing.T) {
	t.Run("New", func(t *testing.T) {
		dedupetest.Run(t, func(t *testing.T) paygate.Deduper {
			d, _ := testDeduper(t)
			return d
		})
	})
	t.Run("NewPgx", func(t *testing.T) {
		dedupetest.Run(t, func(t *testing.T) paygate.Deduper {
			pool, err := pgxpool.New(context.Background(), testDSN(t))
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			d, err := NewPgx(pool, WithTable(fmt.Sprintf("paygate_dedupe_test_%d", rand.Uint32())))
			require.NoError(t, err)
			require.NoError(t, d.Migrate(context.Background()))
			t.Cleanup(func() { dropTable(d.db, d.table) })
			return d
		})
	})
	_, err := NewPgx(nil)
	require.EqualError(t, err, "pgstore: nil *pgxpool.Pool")
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
	t.Cleanup(func() { dropTable(db, table) })
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
		t.Cleanup(func() { dropTable(dbs[0], table) })
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
		require.Equal(t, "autovacuum_vacuum_scale_factor=0.002 autovacuum_vacuum_threshold=1000", reloptions(t, dbs[0], table))
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
			Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				defer mu.Unlock()
				fulfilled[cb.RefNo]++
				return nil
			}),
		}
	}
	replicas := []*paygate.CallbackHandler{newReplica(), newReplica()}
	fields := url.Values{"status": {"success"}, "refNo": {"INV-100~x"}, "orderNo": {"GW100"}, "amount": {"10.00"},
		"fpx": {`{"fpx_debit_auth_code":"00"}`}}
	codes := make([]int, 100)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range codes {
		r, err := gatewaytest.NewCallbackRequest(key, "/return", fields)
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
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error {
		calls++
		return nil
	})}
	fields := url.Values{"status": {"success"}, "refNo": {"INV-200"}, "orderNo": {"GW200"}}
	deliver := func() int {
		r, err := gatewaytest.NewCallbackRequest(key, "/return", fields)
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
	for _, bad := range []string{"", "Robert'); DROP TABLE x;--", "a b", "1abc", "UPPER", "shop." + strings.Repeat("t", 58)} {
		_, err := New(db, WithTable(bad))
		require.Error(t, err, bad)
	}
	_, err = New(db, WithTable("shop."+strings.Repeat("t", 57)))
	require.NoError(t, err, "57 characters and _claim fit PostgreSQL's 63")
	d, err := New(db, WithTable("shop.paygate_events"))
	require.NoError(t, err)
	require.Contains(t, d.claimSQL, "shop.paygate_events_claim($1::text")
	require.Contains(t, d.claimFuncBody, "INSERT INTO shop.paygate_events AS t")
	require.Contains(t, d.claimCTESQL, "INSERT INTO shop.paygate_events AS t")
	_, err = New(db, WithRetention(0))
	require.Error(t, err)
	d, err = New(db, WithRetention(time.Nanosecond))
	require.NoError(t, err, "any positive retention is taken")
	require.Equal(t, time.Nanosecond, d.retention)
}

// age backdates every row of d's table by by: the database's clock, as
// seen by the rows, moved on.
func age(t *testing.T, d *Deduper, by time.Duration) {
	t.Helper()
	_, err := d.db.Exec(`UPDATE `+d.table+` SET expires_at = expires_at - $1::bigint * interval '1 microsecond'`, by.Microseconds())
	require.NoError(t, err)
}

// A completed key replayed after the 30 days it used to be kept, and
// after Purge, is still done.
func TestDeduperReplay(t *testing.T) {
	d, _ := testDeduper(t)
	dedupetest.Replay(t, d, dedupetest.Aging{
		Age: func(t *testing.T, by time.Duration) { age(t, d, by) },
		Purge: func(t *testing.T) {
			_, err := d.Purge(context.Background())
			require.NoError(t, err)
		},
	})
}

// A done row is never taken over, even past its retention until Purge
// deletes it, with the claim function and without it.
func TestDoneRowNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	d, db := testDeduper(t)
	bare := fmt.Sprintf("paygate_dedupe_hand_%d", rand.Uint32())
	_, err := db.Exec(`CREATE TABLE ` + bare + handMadeTable)
	require.NoError(t, err)
	t.Cleanup(func() { dropTable(db, bare) })
	unmigrated, err := New(db, WithTable(bare))
	require.NoError(t, err)
	for _, d := range []*Deduper{d, unmigrated} {
		c, err := d.Claim(ctx, "fulfil|A", time.Minute)
		require.NoError(t, err)
		require.NoError(t, d.Complete(ctx, "fulfil|A", c.Token, "GW1"))
		age(t, d, DefaultRetention+time.Hour)
		for range 2 {
			c, err = d.Claim(ctx, "fulfil|A", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, c, "a done row past its retention, on %s", d.table)
		}
		n, err := d.Purge(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "Purge deletes it once its retention has passed")
	}
}

// Migrate reports a failure at any of its steps (its transaction, the
// lock, each statement, the commit), on a new table and on one from before
// the result column, and never takes it for success.
func TestMigrateReportsEveryFailedStep(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprint("without result: ", old), func(t *testing.T) {
			db, fc := openFaultDB(t)
			fresh := func() *Deduper {
				table := fmt.Sprintf("paygate_dedupe_fault_%d", rand.Uint32())
				t.Cleanup(func() { dropTable(db, table) })
				if old {
					_, err := db.Exec(`CREATE TABLE ` + table + ` (key text PRIMARY KEY, token text, done boolean NOT NULL DEFAULT false, expires_at timestamptz NOT NULL)`)
					require.NoError(t, err)
				}
				d, err := New(db, WithTable(table))
				require.NoError(t, err)
				return d
			}
			d := fresh()
			fc.ops.Store(0)
			require.NoError(t, d.Migrate(context.Background()))
			steps := fc.ops.Load()
			require.GreaterOrEqual(t, steps, int64(5))
			for k := int64(1); k <= steps; k++ {
				d := fresh()
				fc.ops.Store(0)
				fc.failAt.Store(k)
				err := d.Migrate(context.Background())
				fc.failAt.Store(0)
				require.ErrorIs(t, err, errInjected, "step %d of %d", k, steps)
				require.ErrorContains(t, err, "pgstore: migrate", "step %d", k)
			}
		})
	}
}

// Every call on a database that cannot be reached fails with an error,
// never a panic or a success: a claim, a renewal, a release, a completion,
// a purge.
func TestUnreachableDatabaseFailsEveryCall(t *testing.T) {
	ctx := context.Background()
	d, err := New(sql.OpenDB(noDatabase{}))
	require.NoError(t, err)
	t.Cleanup(func() { d.db.Close() })
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{name: "claim", call: func() error { _, err := d.Claim(ctx, "k", time.Minute); return err }},
		{name: "renew", call: func() error { return d.Renew(ctx, "k", "t", time.Minute) }},
		{name: "release", call: func() error { return d.Release(ctx, "k", "t") }},
		{name: "complete", call: func() error { return d.Complete(ctx, "k", "t", "GW1") }},
		{name: "purge", call: func() error { _, err := d.Purge(ctx); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, tc.call(), "no database in this test")
		})
	}
}

// A renewal, release or completion whose row count cannot be read is
// reported as an error, not taken for a lost claim nor for success.
func TestUnreadRowCountIsAnError(t *testing.T) {
	ctx := context.Background()
	db, fc := openFaultDB(t)
	d, _ := testDeduperOn(t, db)
	for _, tc := range []struct {
		name string
		call func(token string) error
	}{
		{name: "renew", call: func(token string) error { return d.Renew(ctx, "k-renew", token, time.Minute) }},
		{name: "release", call: func(token string) error { return d.Release(ctx, "k-release", token) }},
		{name: "complete", call: func(token string) error { return d.Complete(ctx, "k-complete", token, "GW1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := d.Claim(ctx, "k-"+tc.name, time.Minute)
			require.NoError(t, err)
			fc.failRowsAt.Store(fc.ops.Load() + 1)
			err = tc.call(c.Token)
			fc.failRowsAt.Store(0)
			require.ErrorIs(t, err, errInjected)
			require.ErrorContains(t, err, "pgstore: "+tc.name)
		})
	}
}
