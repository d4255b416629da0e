package pgstore

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// A fulfilled callback replayed after the 30 days a completed key used to
// be kept, after Purge, and (with a fpxTxnTime) after its row is purged at
// the end of the retention, is answered 200 and never fulfilled again: one
// ledger row, on the lease path and on the transactional paths.
func TestReplayNeverFulfilsTwice(t *testing.T) {
	db := openDB(t, testDSN(t))
	for _, path := range []struct {
		name    string
		handler func(s *txShop) *paygate.CallbackHandler
	}{
		{name: "lease", handler: func(s *txShop) *paygate.CallbackHandler {
			return s.handler(s.d, 0, func(ctx context.Context, cb *paygate.Callback) error {
				s.calls.Add(1)
				_, err := s.db.ExecContext(ctx, `INSERT INTO `+s.ledger+` (ref_no, order_no, by_replica) VALUES ($1, $2, 'lease')`, cb.RefNo, cb.OrderNo)
				return err
			})
		}},
		{name: "HookTx", handler: func(s *txShop) *paygate.CallbackHandler {
			return s.handler(s.d, 0, s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error { return s.insert(ctx, tx, cb, "tx") }))
		}},
		{name: "FulfilTx", handler: func(s *txShop) *paygate.CallbackHandler {
			return s.handlerTx(s.d, func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error { return s.insert(ctx, tx, cb, "tx") })
		}},
		{name: "FulfilPgx", handler: func(s *txShop) *paygate.CallbackHandler {
			return s.handlerOn(fulfilPath{wire: wirePgx}, s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
				return s.pathInsert(ctx, tx, cb, "tx")
			})
		}},
	} {
		for _, tc := range []struct {
			name string
			txn  bool
			// later are the replays' delays, each after the one before.
			later    []time.Duration
			wantHeld int32
		}{
			{name: "with fpxTxnTime", txn: true, later: []time.Duration{31 * 24 * time.Hour, paygate.DefaultRetention}, wantHeld: 2},
			{name: "without fpxTxnTime", later: []time.Duration{31 * 24 * time.Hour, 300 * 24 * time.Hour}},
		} {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				s := newTxShop(t, db)
				var clock atomic.Int64
				clock.Store(time.Now().UnixNano())
				var held atomic.Int32
				h := path.handler(s)
				h.Now = func() time.Time { return time.Unix(0, clock.Load()) }
				h.OnHeldBack = func(_ context.Context, _ *paygate.Callback, err error) error {
					require.ErrorIs(t, err, paygate.ErrHeldBack)
					held.Add(1)
					return nil
				}
				fields := url.Values{"status": {"success"}, "refNo": {"INV-1"}, "orderNo": {"GW-INV-1"}, "amount": {"10.00"}}
				if tc.txn {
					fields.Set("fpxTxnTime", h.Now().In(paygate.MalaysiaTime()).Format(time.DateTime))
				}
				deliver := func() int {
					r, err := gatewaytest.NewCallbackRequest(s.key, "/return", fields)
					require.NoError(t, err)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					return w.Code
				}
				require.Equal(t, http.StatusOK, deliver())
				for _, d := range tc.later {
					clock.Add(int64(d))
					age(t, s.d, d)
					_, err := s.d.Purge(ctx)
					require.NoError(t, err)
					require.Equal(t, http.StatusOK, deliver(), "replay %v later", d)
				}
				require.Len(t, s.rows(t, "INV-1"), 1, "ledger rows")
				require.EqualValues(t, 1, s.calls.Load())
				require.Equal(t, tc.wantHeld, held.Load())
			})
		}
	}
}
