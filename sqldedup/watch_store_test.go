package sqldedup

import (
	"context"
	"fmt"
	"math/rand/v2"
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
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table + "_budget")
	})
	return s
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
