package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// A claim that lands after its caller gave up on it is fenced: released in
// the background, so the key is free again well within its lease (a
// minute here) instead of held for it. The claim is sent into a blackhole
// (a proxy that holds every byte, and the close, until it ends); its
// caller's context ends meanwhile and pgx closes the connection, but once
// the blackhole ends PostgreSQL receives the claim before the close, runs
// and commits it. Without the fence every claim of the key within the
// test's wait answers busy.
func TestClaimLandingAfterItsCallerGaveUpIsFenced(t *testing.T) {
	dsn := testDSN(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newOutageProxy(t, u.Host)
	u.Host = proxy.addr()
	d, _ := testDeduper(t) // the table, migrated directly
	late, err := New(openDB(t, u.String()), WithTable(d.table))
	require.NoError(t, err)
	ctx := context.Background()
	const key = "status|LATE|GW-LATE|pending"
	// A connection open through the proxy, the claim's statement prepared
	// on it, and just reset (pgx's stdlib pings a connection idle for a
	// second before reusing it).
	for _, k := range []string{"warm-1", "warm-2"} {
		_, err = late.Claim(ctx, k, time.Minute)
		require.NoError(t, err)
	}

	blackholed := make(chan struct{})
	go func() {
		defer close(blackholed)
		proxy.blackhole(time.Second)
	}()
	time.Sleep(100 * time.Millisecond) // the blackhole is on
	gaveUp, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = late.Claim(gaveUp, key, time.Minute)
	cancel()
	require.Error(t, err, "the caller gave up while the claim was in the blackhole")
	<-blackholed // the claim lands now

	var res paygate.ClaimResult
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // a bound, not a measure
		res, err = d.Claim(ctx, key, time.Minute)
		require.NoError(t, err)
		if res.State != paygate.ClaimBusy {
			break
		}
	}
	require.Equal(t, paygate.ClaimAcquired, res.State, "the late claim was fenced, the key free again")
}

// One attempt of a fence ends it only once the claim can no longer hold
// its key: its row found and deleted under its token, or no row while the
// backend that ran the claim is gone. A claim with no row yet whose
// backend still lives, or is not known, may land later: the fence goes
// on. A row under another token (a claim of the key's next delivery, a
// completion) is never touched.
func TestFenceOnceEndsOnlyWhenTheClaimCannotLand(t *testing.T) {
	d, db := testDeduper(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx) // a backend that stays alive
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	var alive uint32
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&alive))
	const gone = 1 << 30 // above Linux's largest process id (2^22): no backend has it
	for i, tt := range []struct {
		name     string
		row      string // the key's row: "" none, "mine" the fenced claim's, "other" another token's, "done" a completion
		pid      uint32
		wantDone bool
	}{
		{name: "landed, its backend alive", row: "mine", pid: alive, wantDone: true},
		{name: "landed, its backend unknown", row: "mine", wantDone: true},
		{name: "landed, its backend gone", row: "mine", pid: gone, wantDone: true},
		{name: "not landed, its backend alive: it may still land", pid: alive, wantDone: false},
		{name: "not landed, its backend unknown", wantDone: false},
		{name: "not landed, its backend gone: it never will", pid: gone, wantDone: true},
		{name: "another claim holds the key, the backend alive", row: "other", pid: alive, wantDone: false},
		{name: "another claim holds the key, the backend gone", row: "other", pid: gone, wantDone: true},
		{name: "the key done, the backend gone", row: "done", pid: gone, wantDone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("status|FENCE-%d|GW|pending", i)
			switch tt.row {
			case "mine", "other":
				_, err := db.Exec(`INSERT INTO `+d.table+` (key, token, done, result, expires_at) VALUES ($1, $2, false, NULL, now() + interval '1 minute')`, key, tt.row)
				require.NoError(t, err)
			case "done":
				_, err := db.Exec(`INSERT INTO `+d.table+` (key, token, done, result, expires_at) VALUES ($1, NULL, true, 'GW', now() + interval '1 day')`, key)
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantDone, d.fenceOnce(key, "mine", tt.pid))
			var left int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+d.table+` WHERE key = $1`, key).Scan(&left))
			require.Equal(t, map[string]int{"": 0, "mine": 0, "other": 1, "done": 1}[tt.row], left, "only the fenced claim's own row is deleted")
		})
	}
}

// A claim that PostgreSQL runs to its commit after its caller gave up is
// fenced, on pgx's driver (the fence knows the claim's backend) and on
// another (database/sql alone: it deletes until it finds the row). Made
// certain rather than left to a race: the claim waits in PostgreSQL on a
// row another transaction inserted, the network is then held (the
// caller's cancel request and close with it), the caller gives up, and
// the other transaction rolls back, so the claim inserts its row and
// commits while its caller is gone. Without the fence the key stays busy
// for the whole lease (a minute).
func TestClaimCommittedAfterItsCallerGaveUpIsFenced(t *testing.T) {
	for _, tt := range []struct {
		name string
		open func(t *testing.T, dsn string) *sql.DB
	}{
		{name: "pgx's driver", open: func(t *testing.T, dsn string) *sql.DB { return openDB(t, dsn) }},
		{name: "another driver", open: func(t *testing.T, dsn string) *sql.DB {
			connector, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(dsn)
			require.NoError(t, err)
			db := sql.OpenDB(countingConnector{Connector: connector, queries: new(atomic.Int64)})
			t.Cleanup(func() { db.Close() })
			return db
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(testDSN(t))
			require.NoError(t, err)
			proxy := newOutageProxy(t, u.Host)
			u.Host = proxy.addr()
			d, db := testDeduper(t)
			late, err := New(tt.open(t, u.String()), WithTable(d.table))
			require.NoError(t, err)
			ctx := context.Background()
			const key = "status|FENCED|GW-F|pending"
			first, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer func() { _ = first.Rollback() }()
			_, err = first.ExecContext(ctx, `INSERT INTO `+d.table+` (key, token, done, result, expires_at) VALUES ($1, 'first', false, NULL, now() + interval '1 minute')`, key)
			require.NoError(t, err)

			gaveUp, cancel := context.WithCancel(ctx)
			claimed := make(chan error, 1)
			go func() {
				_, err := late.Claim(gaveUp, key, time.Minute)
				claimed <- err
			}()
			pollUntil(t, "the claim waiting on the first transaction's row", func() bool {
				var waiting bool
				require.NoError(t, db.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1::text || '_claim(%')`, d.table).Scan(&waiting))
				return waiting
			})
			proxy.mu.Lock()
			held := make(chan struct{})
			proxy.open = held
			proxy.mu.Unlock()
			cancel()
			require.Error(t, <-claimed, "the caller gave up")
			require.NoError(t, first.Rollback())
			pollUntil(t, "the claim committed", func() bool {
				var n int
				require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+d.table+` WHERE key = $1`, key).Scan(&n))
				return n == 1
			})
			close(held)
			var res paygate.ClaimResult
			pollUntil(t, "the key free again", func() bool {
				res, err = d.Claim(ctx, key, time.Minute)
				require.NoError(t, err)
				return res.State != paygate.ClaimBusy
			})
			require.Equal(t, paygate.ClaimAcquired, res.State)
		})
	}
}

// pollUntil polls cond until it holds, failing the test after 20 s (a bound,
// not a measure).
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "%s: not within 20 s", what)
	}
}
