package pgstore

// Guards of the Deduper's promises that no other test held (issue 42):
// each fails on the defect its comment names.

import (
	"context"
	"database/sql"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// A fulfilled event is never taken over, on every path, however far past
// its retention its row is while Purge has not run: a replay (here without
// a fpxTxnTime, so that the replay bound does not hold it back first) is
// answered 200 and never fulfilled again. Defects caught: a claim that
// takes over an expired done row (lapsedRow without NOT t.done, or
// FulfilTx's claim taking over any expired row).
func TestFulfilledEventNeverTakenOverPastItsRetention(t *testing.T) {
	type path struct {
		name    string
		open    func(t testing.TB) (*sql.DB, []Option)
		handler func(s *txShop) *paygate.CallbackHandler
	}
	sqlOpen := func(t testing.TB) (*sql.DB, []Option) { return openDB(t, testDSN(t)), nil }
	paths := []path{
		{name: "lease", open: sqlOpen, handler: func(s *txShop) *paygate.CallbackHandler {
			return s.handler(s.d, 0, func(ctx context.Context, cb *paygate.Callback) error {
				s.calls.Add(1)
				_, err := s.db.ExecContext(ctx, `INSERT INTO `+s.ledger+` (ref_no, order_no, by_replica) VALUES ($1, $2, 'A')`, cb.RefNo, cb.OrderNo)
				return err
			})
		}},
		{name: "HookTx", open: sqlOpen, handler: func(s *txShop) *paygate.CallbackHandler {
			return s.handler(s.d, 0, s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error { return s.insert(ctx, tx, cb, "A") }))
		}},
	}
	for _, p := range fulfilPaths() {
		paths = append(paths, path{name: p.name, open: p.open, handler: p.ledgerHandlerOf})
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			h := p.handler(s)
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			age(t, s.d, paygate.DefaultRetention+24*time.Hour)
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"), "a replay past the retention, before a purge")
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
			require.EqualValues(t, 1, s.calls.Load())
			c, err := s.d.Lookup(context.Background(), "fulfil|INV-1")
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimDone, c.State)
		})
	}
}

// ledgerHandlerOf is ledgerHandler as a path's handler.
func (p fulfilPath) ledgerHandlerOf(s *txShop) *paygate.CallbackHandler { return s.ledgerHandler(p) }

// waitKeyFree waits until no connection holds key's advisory lock on s's
// table: a connection PostgreSQL terminated keeps its locks until its
// backend has exited, a moment after the client saw it gone.
func waitKeyFree(t testing.TB, s *txShop, key string) {
	t.Helper()
	q := `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
AND ((classid::bigint << 32) | objid::bigint) = ` + keyLock(s.d.table, "$1::text")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var held int
		require.NoError(t, s.db.QueryRow(q, key).Scan(&held))
		if held == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s: its lock still held 30 s after its connection was terminated", key)
		time.Sleep(5 * time.Millisecond)
	}
}
