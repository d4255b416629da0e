package pgstore

// An awaited order leaves the watch in the transaction that fulfils it:
// FulfilTx and FulfilPgx delete its WatchStore row beside the merchant's
// effect and the completion, when the handler's Settler is a watch.Watch on
// a WatchStore of the Deduper's own *sql.DB (Deduper.WatchStore). On any
// other Settler the handler tells it after the commit.

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/watch"
)

// WatchStore returns a WatchStore on d's own *sql.DB (for NewPgx, the one
// on its pool), in table as NewWatchStore takes it. With a watch.Watch on it
// as the CallbackHandler's Settler, FulfilTx and FulfilPgx remove a
// fulfilled order from the watch in the fulfilment's transaction.
func (d *Deduper) WatchStore(table string) (*WatchStore, error) {
	return NewWatchStore(d.db, table)
}

// settleStore is the WatchStore the Settler s keeps its orders in, when it
// is on d's *sql.DB; nil otherwise.
func (d *Deduper) settleStore(s paygate.Settler) *WatchStore {
	w, ok := s.(*watch.Watch)
	if !ok {
		return nil
	}
	ws, ok := w.Store.(*WatchStore)
	if !ok || ws.db != d.db {
		return nil
	}
	return ws
}

// settleSQL removes an order from the watch, whoever holds it.
func (s *WatchStore) settleSQL() string { return `DELETE FROM ` + s.table + ` WHERE ref = $1` }

// settleTx removes cb's order from the claim's watch in tx, when it is on
// d's database; settled says it did.
func (d *Deduper) settleTx(ctx context.Context, tx *sql.Tx, claim paygate.HookClaim, cb *paygate.Callback) (settled bool, err error) {
	ws := d.settleStore(claim.Settler)
	if ws == nil {
		return false, nil
	}
	_, err = tx.ExecContext(ctx, ws.settleSQL(), cb.CreatedRefNo())
	return err == nil, wrap("settle", err)
}

// settlePgx is settleTx on pgx's Tx.
func (d *Deduper) settlePgx(ctx context.Context, tx pgx.Tx, claim paygate.HookClaim, cb *paygate.Callback) (settled bool, err error) {
	ws := d.settleStore(claim.Settler)
	if ws == nil {
		return false, nil
	}
	_, err = tx.Exec(ctx, ws.settleSQL(), cb.CreatedRefNo())
	return err == nil, wrap("settle", err)
}
