package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/watch"
)

// An order paid through FulfilTx or FulfilPgx leaves a watch on the
// Deduper's own WatchStore in the fulfilment's transaction: a trigger on
// the watch table records the transaction that deleted the row, and it is
// the one fn ran in. A fulfilment that fails leaves the order awaited. A
// watch on a store of another *sql.DB is told after the commit.
func TestFulfilmentSettlesTheWatchInItsTransaction(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pgx     bool
		fail    bool
		otherDB bool
	}{
		{name: "FulfilTx"},
		{name: "FulfilPgx", pgx: true},
		{name: "FulfilTx, fn fails", fail: true},
		{name: "FulfilPgx, fn fails", pgx: true, fail: true},
		{name: "FulfilTx, watch on another *sql.DB", otherDB: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var d *Deduper
			if tc.pgx {
				pool, err := pgxpool.New(ctx, testDSN(t))
				require.NoError(t, err)
				t.Cleanup(pool.Close)
				table := fmt.Sprintf("paygate_dedupe_test_%d", rand.Uint32())
				d, err = NewPgx(pool, WithTable(table))
				require.NoError(t, err)
				require.NoError(t, d.Migrate(ctx))
				t.Cleanup(func() { dropTable(d.db, table) })
			} else {
				d, _ = testDeduper(t)
			}
			table := fmt.Sprintf("paygate_watch_settle_%d", rand.Uint32())
			store, err := d.WatchStore(table)
			if tc.otherDB {
				store, err = NewWatchStore(openDB(t, testDSN(t)), table)
			}
			require.NoError(t, err)
			require.NoError(t, store.Migrate(ctx))
			t.Cleanup(func() { dropWatchTables(d.db, table) })
			audit := table + "_audit"
			for _, stmt := range []string{
				`CREATE TABLE ` + audit + ` (ref text, tx bigint)`,
				`CREATE FUNCTION ` + audit + `() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO ` + audit + ` VALUES (OLD.ref, txid_current()); RETURN OLD; END $$`,
				`CREATE TRIGGER ` + audit + ` AFTER DELETE ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION ` + audit + `()`,
			} {
				_, err := d.db.Exec(stmt)
				require.NoError(t, err)
			}
			t.Cleanup(func() {
				_, _ = d.db.Exec(`DROP TABLE IF EXISTS ` + audit)
				_, _ = d.db.Exec(`DROP FUNCTION IF EXISTS ` + audit + `() CASCADE`)
			})

			sb := gatewaytest.NewServer(gatewaytest.WithMaxAttempts(1))
			t.Cleanup(sb.Close)
			client, err := sb.Client()
			require.NoError(t, err)
			var fnTx int64
			fail := func() error {
				if tc.fail {
					return fmt.Errorf("the shop's write failed")
				}
				return nil
			}
			h := &paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()}, Deduper: d, Logger: slog.New(slog.DiscardHandler)}
			if tc.pgx {
				h.Fulfil = d.FulfilPgx(func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error {
					require.NoError(t, tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&fnTx))
					return fail()
				})
			} else {
				h.Fulfil = d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
					require.NoError(t, tx.QueryRowContext(ctx, `SELECT txid_current()`).Scan(&fnTx))
					return fail()
				})
			}
			w := &watch.Watch{Handler: h, Client: client, Store: store}
			h.Settler = w
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			o := paygate.Order{RefNo: "INV-1", ExtraData: "cart", Amount: 1000, Email: "a@example.com", ReturnURL: srv.URL}
			_, err = w.CreateOrder(ctx, o)
			require.NoError(t, err)
			require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess))
			sb.Settle()

			left, err := store.List(ctx, 10)
			require.NoError(t, err)
			var deleted []int64
			rows, err := d.db.Query(`SELECT tx FROM ` + audit)
			require.NoError(t, err)
			for rows.Next() {
				var tx int64
				require.NoError(t, rows.Scan(&tx))
				deleted = append(deleted, tx)
			}
			require.NoError(t, rows.Err())
			switch {
			case tc.fail:
				require.Len(t, left, 1, "a fulfilment that failed leaves the order awaited")
				require.Empty(t, deleted)
			case tc.otherDB:
				require.Empty(t, left)
				require.Len(t, deleted, 1)
				require.NotEqual(t, fnTx, deleted[0], "told after the commit")
			default:
				require.Empty(t, left)
				require.Equal(t, []int64{fnTx}, deleted, "deleted in the fulfilment's transaction, once")
			}
		})
	}
}
