package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/watch"
	"github.com/paygate-go/paygate/watch/watchtest"
)

// testWatchStore makes a fresh WatchStore on the test database, dropped
// afterwards.
func testWatchStore(t *testing.T) *WatchStore {
	t.Helper()
	db := openDB(t, testDSN(t))
	table := fmt.Sprintf("paygate_watch_test_%d", rand.Uint32())
	s, err := NewWatchStore(db, table)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()))
	require.NoError(t, s.Migrate(context.Background()), "Migrate is idempotent")
	t.Cleanup(func() { dropWatchTables(db, table) })
	return s
}

// dropWatchTables drops a test WatchStore's tables.
func dropWatchTables(db *sql.DB, table string) {
	_, _ = db.Exec("DROP TABLE IF EXISTS " + table + ", " + table + "_budget")
}

func TestWatchStoreContract(t *testing.T) {
	watchtest.Run(t, func(t *testing.T) watch.Store { return testWatchStore(t) })
}

func TestNewWatchStoreRefuses(t *testing.T) {
	_, err := NewWatchStore(nil, "")
	require.ErrorContains(t, err, "nil *sql.DB")
	db := openDB(t, "postgres://127.0.0.1:1/none")
	_, err = NewWatchStore(db, "Bad-Name")
	require.ErrorContains(t, err, `watch table name "Bad-Name"`)
}

// A replica's take skips the rows another replica is taking at that
// instant (locked, not yet moved) instead of waiting on them: it gets the
// other due orders at once.
func TestWatchStoreTakeSkipsRowsBeingTaken(t *testing.T) {
	s := testWatchStore(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	for _, ref := range []string{"A", "B", "C"} {
		require.NoError(t, s.Add(ctx, watch.Order{RefNo: ref, Created: now, Next: now}))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	_, err = tx.ExecContext(ctx, `SELECT ref FROM `+s.table+` WHERE ref = 'A' FOR UPDATE`)
	require.NoError(t, err)

	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := s.Take(quick, now, 3, time.Minute)
	require.NoError(t, err, "a take must not wait for rows another replica holds")
	var refs []string
	for _, o := range got {
		refs = append(refs, o.RefNo)
	}
	require.ElementsMatch(t, []string{"B", "C"}, refs)
}

// Every step of Migrate and of each call reports its failure: a fault
// injected at the n-th operation (in the client, nothing sent) is the
// call's error, never a success.
func TestWatchStoreReportsEveryFailedStep(t *testing.T) {
	db, fc := openFaultDB(t)
	table := fmt.Sprintf("paygate_watch_fault_%d", rand.Uint32())
	t.Cleanup(func() { dropWatchTables(db, table) })
	s, err := NewWatchStore(db, table)
	require.NoError(t, err)
	ctx := context.Background()
	failing := func(n int64, call func() error) error {
		fc.failAt.Store(fc.ops.Load() + n)
		defer fc.failAt.Store(0)
		return call()
	}
	for n := int64(1); n <= 6; n++ { // begin, lock, table, index, budget table, commit
		require.ErrorIs(t, failing(n, func() error { return s.Migrate(ctx) }), errInjected, "Migrate, step %d", n)
	}
	require.NoError(t, s.Migrate(ctx))
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	o := watch.Order{RefNo: "INV-1", Created: now, Next: now}
	require.NoError(t, s.Add(ctx, o))
	held, err := s.Take(ctx, now, 1, time.Minute)
	require.NoError(t, err)
	o = held[0]
	for name, call := range map[string]func() error{
		"Add":        func() error { return s.Add(ctx, o) },
		"Take":       func() error { _, err := s.Take(ctx, now, 1, time.Minute); return err },
		"Reschedule": func() error { return s.Reschedule(ctx, o) },
		"Finish":     func() error { return s.Finish(ctx, o) },
		"Remove":     func() error { return s.Remove(ctx, "INV-9") },
		"List":       func() error { _, err := s.List(ctx, 5); return err },
		"Find":       func() error { _, err := s.Find(ctx, "INV-1"); return err },
		"Spend":      func() error { _, err := s.Spend(ctx, now, watch.Budget{PerSecond: 1, Burst: 1}, 1); return err },
		"Spend's update": func() error {
			fc.failAt.Store(fc.ops.Load() + 2)
			_, err := s.Spend(ctx, now, watch.Budget{PerSecond: 1, Burst: 1}, 1)
			return err
		},
	} {
		err := failing(1, call)
		if name == "Spend's update" {
			fc.failAt.Store(0)
		}
		require.ErrorIs(t, err, errInjected, name)
		require.ErrorContains(t, err, "pgstore: watch ", name)
	}
	for _, call := range []func() error{
		func() error { return s.Reschedule(ctx, o) },
		func() error { return s.Finish(ctx, o) },
	} {
		fc.failRowsAt.Store(fc.ops.Load() + 1)
		err := call()
		fc.failRowsAt.Store(0)
		require.ErrorIs(t, err, errInjected, "a row count that cannot be read is an error, not ErrLost")
		require.NotErrorIs(t, err, watch.ErrLost)
	}
}

// The store's table names: 56 characters at most (its budget table adds
// _budget within PostgreSQL's 63), optionally schema-qualified; its index
// is named after the table, in the table's schema.
func TestWatchStoreNames(t *testing.T) {
	db := openDB(t, testDSN(t))
	long := strings.Repeat("w", 56)
	_, err := NewWatchStore(db, long)
	require.NoError(t, err)
	_, err = NewWatchStore(db, long+"w")
	require.ErrorContains(t, err, "at most 56 characters")
	_, err = NewWatchStore(db, "public."+long)
	require.NoError(t, err)

	schema := fmt.Sprintf("watch_schema_%d", rand.Uint32())
	_, err = db.Exec("CREATE SCHEMA " + schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE") })
	for _, table := range []string{schema + ".awaited", fmt.Sprintf("paygate_watch_idx_%d", rand.Uint32())} {
		s, err := NewWatchStore(db, table)
		require.NoError(t, err)
		require.NoError(t, s.Migrate(context.Background()))
		t.Cleanup(func() { dropWatchTables(db, table) })
		rows, err := db.Query(`SELECT indexname FROM pg_indexes WHERE (schemaname || '.' || tablename = $1 OR schemaname = 'public' AND tablename = $1)`+
			` AND indexname <> tablename || '_pkey' ORDER BY indexname`, table)
		require.NoError(t, err, table)
		var indexes []string
		for rows.Next() {
			var index string
			require.NoError(t, rows.Scan(&index))
			indexes = append(indexes, index)
		}
		require.NoError(t, rows.Err())
		base := table[strings.LastIndexByte(table, '.')+1:]
		require.Equal(t, []string{base + "_next", base + "_ref"}, indexes, table)
	}
}

// Rows that cannot be read (a value of the wrong type, or reading that
// fails) fail Take, List and Find with an error, never a short answer.
func TestWatchStoreReportsRowsItCannotRead(t *testing.T) {
	db, fc := openFaultDB(t)
	table := fmt.Sprintf("paygate_watch_rows_%d", rand.Uint32())
	t.Cleanup(func() { dropWatchTables(db, table) })
	s, err := NewWatchStore(db, table)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Migrate(ctx))
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	for _, broken := range []bool{false, true} {
		for name, call := range map[string]func() error{
			"Take": func() error { _, err := s.Take(ctx, now, 1, time.Nanosecond); return err },
			"List": func() error { _, err := s.List(ctx, 5); return err },
			"Find": func() error { _, err := s.Find(ctx, "INV-1"); return err },
		} {
			require.NoError(t, s.Add(ctx, watch.Order{RefNo: "INV-1", Created: now, Next: now}))
			at := &fc.badRowAt
			if broken {
				at = &fc.brokenRowsAt
			}
			at.Store(fc.ops.Load() + 1)
			err := call()
			at.Store(0)
			require.Error(t, err, "%s, broken %v", name, broken)
			require.ErrorContains(t, err, "pgstore: watch ", name)
		}
	}
}
