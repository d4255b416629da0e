package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// A replica's turn at the expiry index leaves nothing behind: the lock is
// given back (a lock kept stays with the pooled connection's session, and
// a later Migrate that finds the index invalid would wait on it for
// ever), and an index another replica built while this one waited for the
// lock is kept as it is, never dropped and built again.
func TestExpiryIndexTurnLeavesNoTrace(t *testing.T) {
	for _, tt := range []struct {
		name string
		// turn runs the turn on a table whose index is valid.
		turn     func(ctx context.Context, d *Deduper, db *sql.DB) error
		wantSame bool // the index is the one there before
	}{
		{name: "built now by Migrate", turn: func(ctx context.Context, d *Deduper, db *sql.DB) error {
			if _, err := db.ExecContext(ctx, `DROP INDEX `+d.expiryIndex); err != nil {
				return err
			}
			return d.Migrate(ctx)
		}},
		{name: "built meanwhile by another replica", wantSame: true, turn: func(ctx context.Context, d *Deduper, db *sql.DB) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			return d.buildExpiryIndex(ctx, conn) // as a Migrate that held the lock after it
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, db := testDeduper(t)
			ctx := context.Background()
			indexOID := func() (oid int64) {
				require.NoError(t, db.QueryRow(`SELECT to_regclass($1)::oid::bigint`, d.expiryIndex).Scan(&oid))
				return oid
			}
			before := indexOID()
			require.NoError(t, tt.turn(ctx, d, db))
			requireExpiryIndex(t, db, d)
			if tt.wantSame {
				require.Equal(t, before, indexOID(), "the valid index was dropped and built again")
			}
			other, err := openDB(t, testDSN(t)).Conn(ctx) // another session
			require.NoError(t, err)
			defer other.Close()
			var got bool
			require.NoError(t, other.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, expiryLock(d.table)).Scan(&got))
			require.True(t, got, "the expiry index's lock is still held")
			_, err = other.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, expiryLock(d.table))
			require.NoError(t, err)
		})
	}
}

// migrationRows is how many completed events the table of the migration
// test holds before it is migrated.
const migrationRows = 5000

// The migration from a table of an earlier version (no claim function, no
// expiry index) runs online: with 5,000 rows in it and claims running from
// eight goroutines on three replicas, four replicas run Migrate at the
// same instant. No claim fails, every key is acquired exactly once, every
// old event still answers done, the index ends valid and Purge walks it.
func TestMigrateOnlineUnderClaims(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	admin := openDB(t, dsn)
	table := fmt.Sprintf("paygate_dedupe_online_%d", rand.Uint32())
	t.Cleanup(func() { dropTable(admin, table) })
	_, err := admin.Exec(`CREATE TABLE ` + table + handMadeTable)
	require.NoError(t, err)
	_, err = admin.Exec(`INSERT INTO `+table+` (key, token, done, result, expires_at)
SELECT 'fulfil|OLD-' || i, NULL, true, 'GW-' || i, now() + interval '300 days' FROM generate_series(1, $1::int) AS i`, migrationRows)
	require.NoError(t, err)
	replicas := make([]*Deduper, 4)
	for i := range replicas {
		replicas[i], err = New(openDB(t, dsn), WithTable(table))
		require.NoError(t, err)
	}

	const claimers, keys = 8, 400
	var acquired [keys]atomic.Int32
	var claimErrs atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		claimErrs.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	stop := make(chan struct{})
	var claims sync.WaitGroup
	for g := range claimers {
		d := replicas[g%3]
		claims.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					if i >= keys { // every key claimed at least once
						return
					}
				default:
				}
				k := (i*claimers + g) % keys
				c, err := d.Claim(ctx, fmt.Sprint("fulfil|NEW-", k), time.Minute)
				if err != nil {
					fail(err)
					continue
				}
				if c.State == paygate.ClaimAcquired {
					acquired[k].Add(1)
					if err := d.Complete(ctx, fmt.Sprint("fulfil|NEW-", k), c.Token, "GW"); err != nil {
						fail(err)
					}
				}
				old, err := d.Claim(ctx, fmt.Sprint("fulfil|OLD-", 1+rand.IntN(migrationRows)), time.Minute)
				if err != nil {
					fail(err)
				} else if old.State != paygate.ClaimDone {
					fail(fmt.Errorf("an old event answered %v", old.State))
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // claims under way on the old table
	errs := make([]error, len(replicas))
	start := make(chan struct{})
	var migrations sync.WaitGroup
	for i, d := range replicas {
		migrations.Go(func() {
			<-start
			errs[i] = d.Migrate(ctx)
		})
	}
	close(start)
	migrations.Wait()
	time.Sleep(100 * time.Millisecond) // claims on the migrated table
	close(stop)
	claims.Wait()
	for i, err := range errs {
		require.NoError(t, err, "replica %d", i)
	}
	require.Zero(t, claimErrs.Load(), "claims failed during the migration; the first: %v", firstErr.Load())
	for k := range acquired {
		require.EqualValues(t, 1, acquired[k].Load(), "fulfil|NEW-%d acquired", k)
	}
	requireExpiryIndex(t, admin, replicas[0])
}

// requireExpiryIndex: d's expiry index exists, is valid, and Purge's
// statement can walk it (a test table is small enough for a sequential
// scan to be cheaper, so sequential scans are priced out here; the plan
// at a million rows is bench's TestDedupePlans).
func requireExpiryIndex(t *testing.T, db *sql.DB, d *Deduper) {
	t.Helper()
	var valid bool
	var def string
	require.NoError(t, db.QueryRow(`SELECT indisvalid, pg_get_indexdef(indexrelid) FROM pg_index WHERE indexrelid = to_regclass($1)`, d.expiryIndex).Scan(&valid, &def))
	require.True(t, valid, "the expiry index is valid")
	require.Contains(t, def, "(expires_at)")
	tx, err := db.Begin()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec(`SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	rows, err := tx.Query(`EXPLAIN ` + strings.ReplaceAll(d.purgeSQL, "$1::int", "2000"))
	require.NoError(t, err)
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan.WriteString(line + "\n")
	}
	require.NoError(t, rows.Err())
	require.Contains(t, plan.String(), " "+unqualified(d.expiryIndex), "Purge's plan:\n%s", plan.String())
	require.NotContains(t, plan.String(), "Seq Scan", "Purge's plan:\n%s", plan.String())
}

// A build of the expiry index that died midway leaves an invalid index of
// its name; Migrate drops it and builds the index again. Here the invalid
// index is a unique one on a column with duplicates, whose concurrent
// build fails as a killed one would.
func TestMigrateRebuildsAnInvalidExpiryIndex(t *testing.T) {
	d, db := testDeduper(t)
	ctx := context.Background()
	_, err := db.Exec(`DROP INDEX ` + d.expiryIndex)
	require.NoError(t, err)
	for _, k := range []string{"a", "b"} {
		c, err := d.Claim(ctx, k, time.Minute)
		require.NoError(t, err)
		require.NoError(t, d.Complete(ctx, k, c.Token, "GW"))
	}
	_, err = db.Exec(`CREATE UNIQUE INDEX CONCURRENTLY ` + unqualified(d.expiryIndex) + ` ON ` + d.table + ` (done)`)
	require.Error(t, err, "the build fails on duplicates")
	var valid bool
	require.NoError(t, db.QueryRow(`SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, d.expiryIndex).Scan(&valid))
	require.False(t, valid, "the failed build left an invalid index")
	require.NoError(t, d.Migrate(ctx))
	requireExpiryIndex(t, db, d)
}

// Purge deletes every expired row, in batches, and nothing else: lapsed
// claims and completed keys past the retention go, a live claim and a key
// completed within the retention stay.
func TestPurgeInBatches(t *testing.T) {
	d, db := testDeduper(t)
	ctx := context.Background()
	expired := 2*purgeBatch + 17
	_, err := db.Exec(`INSERT INTO `+d.table+` (key, token, done, result, expires_at)
SELECT 'old-' || i, NULL, true, 'GW', now() - interval '1 second' FROM generate_series(1, $1::int) AS i`, expired)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO ` + d.table + ` (key, token, done, result, expires_at) VALUES ('lapsed', 't', false, NULL, now() - interval '1 second'),
('kept', NULL, true, 'GW', now() + interval '1 day'), ('live', 't', false, NULL, now() + interval '1 minute')`)
	require.NoError(t, err)
	n, err := d.Purge(ctx)
	require.NoError(t, err)
	require.EqualValues(t, expired+1, n)
	var left []string
	rows, err := db.Query(`SELECT key FROM ` + d.table + ` ORDER BY key`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		left = append(left, k)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"kept", "live"}, left)
	n, err = d.Purge(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to purge")
}

// A lapsed claim that a new claim takes over while a batch of Purge waits
// on its row is left alone: the batch chose the row while it was expired,
// and deletes it only if it still is once the takeover committed (the
// recheck of the expiry on the row itself).
func TestPurgeLeavesAClaimTakenOverMeanwhile(t *testing.T) {
	d, db := testDeduper(t)
	ctx := context.Background()
	_, err := db.Exec(`INSERT INTO ` + d.table + ` (key, token, done, result, expires_at) VALUES ('lapsed', 'crashed', false, NULL, now() - interval '1 second')`)
	require.NoError(t, err)
	takeover, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = takeover.Rollback() }()
	var took bool
	require.NoError(t, takeover.QueryRowContext(ctx, `SELECT `+d.claimFunc+`('lapsed', 'next', $1::bigint)`, time.Hour.Microseconds()).Scan(&took))
	require.True(t, took, "the new claim takes the lapsed one over")

	type purged struct {
		n   int64
		err error
	}
	done := make(chan purged, 1)
	go func() {
		n, err := d.Purge(ctx)
		done <- purged{n, err}
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) { // a bound, not a measure
		var waiting bool
		require.NoError(t, db.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND starts_with(query, 'DELETE FROM ' || $1::text))`, d.table).Scan(&waiting))
		if waiting {
			break
		}
		require.True(t, time.Now().Before(deadline), "the purge never waited on the row the takeover holds")
	}
	require.NoError(t, takeover.Commit())
	res := <-done
	require.NoError(t, res.err)
	require.Zero(t, res.n, "the claim taken over is not purged")
	var token string
	require.NoError(t, db.QueryRow(`SELECT token FROM `+d.table+` WHERE key = 'lapsed'`).Scan(&token))
	require.Equal(t, "next", token)
}
