package pgstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// fulfilPath is one way to wire the transactional path, as the tests
// drive it: FulfilTx on database/sql, FulfilPgx on pgx's connection of a
// *sql.DB opened with sql.Open("pgx"), or on a pgxpool (NewPgx).
type fulfilPath struct {
	name string
	// open opens the database, with the Options of the path's Deduper.
	open func(t testing.TB) (*sql.DB, []Option)
	wire func(d *Deduper, fn pathFn) paygate.TxFulfiller
}

// pathFn is a test's fn on any path.
type pathFn func(ctx context.Context, tx pathTx, cb *paygate.Callback) error

// pathTx is fn's transaction on any path: exec runs a statement in it, end
// commits it (or rolls it back) as fn could on that path.
type pathTx struct {
	exec func(ctx context.Context, query string, args ...any) error
	end  func(ctx context.Context, commit bool) error
}

// fulfilPaths are the transactional paths every test of this file runs on.
func fulfilPaths() []fulfilPath {
	sqlOpen := func(t testing.TB) (*sql.DB, []Option) { return openDB(t, testDSN(t)), nil }
	return []fulfilPath{
		{name: "FulfilTx", open: sqlOpen, wire: wireSQL},
		{name: "FulfilPgx", open: sqlOpen, wire: wirePgx},
		{name: "FulfilPgx on a pgxpool", open: openPoolDB, wire: wirePgx},
	}
}

// wireSQL is FulfilTx as a fulfilPath wires it.
func wireSQL(d *Deduper, fn pathFn) paygate.TxFulfiller {
	if fn == nil {
		return d.FulfilTx(nil)
	}
	return d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		return fn(ctx, pathTx{
			exec: func(ctx context.Context, q string, args ...any) error {
				_, err := tx.ExecContext(ctx, q, args...)
				return err
			},
			end: func(_ context.Context, commit bool) error {
				if commit {
					return tx.Commit()
				}
				return tx.Rollback()
			},
		}, cb)
	})
}

// wirePgx is FulfilPgx as a fulfilPath wires it.
func wirePgx(d *Deduper, fn pathFn) paygate.TxFulfiller {
	if fn == nil {
		return d.FulfilPgx(nil)
	}
	return d.FulfilPgx(func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error {
		return fn(ctx, pathTx{
			exec: func(ctx context.Context, q string, args ...any) error { _, err := tx.Exec(ctx, q, args...); return err },
			end: func(ctx context.Context, commit bool) error {
				_, err := tx.Exec(ctx, map[bool]string{true: "commit", false: "rollback"}[commit])
				return err
			},
		}, cb)
	})
}

// openPoolDB opens the test database as a merchant on pgx would: a
// *pgxpool.Pool, and a *sql.DB on it (stdlib.OpenDBFromPool), with a
// Deduper as NewPgx makes it.
func openPoolDB(t testing.TB) (*sql.DB, []Option) {
	pool, err := pgxpool.New(context.Background(), testDSN(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	return db, []Option{withPool(pool)}
}

// handlerOn serves path's fulfilment of fn on deduper (s.d unless given).
func (s *txShop) handlerOn(p fulfilPath, deduper paygate.Deduper, fn pathFn) *paygate.CallbackHandler {
	return &paygate.CallbackHandler{Keys: []paygate.Key{s.key}, Deduper: deduper, Fulfil: p.wire(s.d, fn),
		HookTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}
}

// pathInsert adds cb's ledger row through tx, by replica.
func (s *txShop) pathInsert(ctx context.Context, tx pathTx, cb *paygate.Callback, replica string) error {
	s.calls.Add(1)
	return tx.exec(ctx, `INSERT INTO `+s.ledger+` (ref_no, order_no, by_replica) VALUES ($1, $2, $3)`, cb.RefNo, cb.OrderNo, replica)
}

// ledgerHandler serves path's fulfilment on s.d, its fn one ledger row
// by replica "A".
func (s *txShop) ledgerHandler(p fulfilPath) *paygate.CallbackHandler {
	return s.handlerOn(p, s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
		return s.pathInsert(ctx, tx, cb, "A")
	})
}

// The claim, the effect and the completion commit together: one ledger
// row, the event done with its orderNo; duplicates, sequential and
// concurrent, are answered 200 (after 503 while one is in flight) and
// never run fn again.
func TestFulfilTxOnce(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			h := s.ledgerHandler(p)
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for s.deliver(t, h, "INV-2") != http.StatusOK {
						time.Sleep(5 * time.Millisecond)
					}
				})
			}
			wg.Wait()
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
			require.Equal(t, []string{"A"}, s.rows(t, "INV-2"))
			require.EqualValues(t, 2, s.calls.Load())
			c, err := s.d.Claim(ctx, "fulfil|INV-1", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW-INV-1"}, c)
		})
	}
}

// A TxFulfiller behind a wrapper that hides FulfilOnce (a middleware that
// logs or traces Fulfil) leaves the handler on the lease path: its Fulfil
// runs fn fenced on the lease claim, as HookTx does, once; a claim taken
// over before it commits rolls fn's effect back; outside a handler it
// writes nothing.
func TestFulfilTxBehindAWrapper(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			inner := p.wire(s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
				return s.pathInsert(ctx, tx, cb, "A")
			})
			var wrapped atomic.Int32
			h := s.handlerOn(p, s.d, nil)
			h.Fulfil = paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error {
				wrapped.Add(1)
				return inner.Fulfil(ctx, cb)
			})
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-W"))
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-W"))
			require.Equal(t, []string{"A"}, s.rows(t, "INV-W"))
			require.EqualValues(t, 1, wrapped.Load(), "the duplicate ran the wrapper")
			c, err := s.d.Claim(ctx, "fulfil|INV-W", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW-INV-W"}, c)

			// The claim taken over (its token changed) before fn's
			// transaction commits: rolled back, ErrClaimLost, no row.
			taken := paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error {
				hc, ok := paygate.HookClaimFrom(ctx)
				require.True(t, ok)
				_, err := db.ExecContext(ctx, `UPDATE `+s.d.table+` SET token = 'another' WHERE key = $1`, hc.Key)
				require.NoError(t, err)
				err = inner.Fulfil(ctx, cb)
				require.ErrorIs(t, err, paygate.ErrClaimLost)
				return err
			})
			h.Fulfil = taken
			require.Equal(t, http.StatusInternalServerError, s.deliver(t, h, "INV-L"))
			require.Empty(t, s.rows(t, "INV-L"))

			require.ErrorIs(t, inner.Fulfil(ctx, &paygate.Callback{RefNo: "INV-X"}), ErrNoHookClaim)
			require.Empty(t, s.rows(t, "INV-X"))
		})
	}
}

// What fn does to its transaction decides, and nothing is left to lapse:
// an error, a panic or a lost connection (the replica's crash, as
// PostgreSQL sees it) rolls the claim back with the effect, and the very
// next delivery fulfils; fn ending tx itself, or swallowing the error of a
// statement that failed, is answered 500 and never fulfils twice.
func TestFulfilTxRollbackLeavesTheEventFree(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t)
			for _, tc := range []struct {
				name string
				// fault is what fn does after its INSERT, on its first call.
				fault    func(ctx context.Context, tx pathTx) error
				wantRows int // after the first delivery
			}{
				{name: "error", fault: func(context.Context, pathTx) error { return errors.New("stock service down") }},
				{name: "panic", fault: func(context.Context, pathTx) error { panic("stock service returned garbage") }},
				{name: "connection lost", fault: func(ctx context.Context, tx pathTx) error {
					return tx.exec(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
				}},
				{name: "fn rolls back", fault: func(ctx context.Context, tx pathTx) error { return tx.end(ctx, false) }},
				{name: "fn commits", fault: func(ctx context.Context, tx pathTx) error { return tx.end(ctx, true) }, wantRows: 1},
				{name: "statement error swallowed", fault: func(ctx context.Context, tx pathTx) error {
					_ = tx.exec(ctx, `SELECT 1/0`)
					return nil
				}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					s := newTxShop(t, db, opts...)
					first := true
					h := s.handlerOn(p, s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
						if err := s.pathInsert(ctx, tx, cb, "A"); err != nil {
							return err
						}
						if !first {
							return nil
						}
						first = false
						return tc.fault(ctx, tx)
					})
					require.Equal(t, http.StatusInternalServerError, s.deliver(t, h, "INV-1"))
					require.Len(t, s.rows(t, "INV-1"), tc.wantRows)
					// A terminated connection's backend holds the event's
					// lock until it has exited: the next delivery is
					// answered 503 until then (the gateway's retry).
					waitKeyFree(t, s, "fulfil|INV-1")
					require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"), "the next delivery, once the lock is free")
					require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
					require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
					require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
				})
			}
		})
	}
}

// A delivery in flight holds the event by its transaction: a duplicate, and
// a status event of the same refNo (whose lease claim meets the same lock),
// are answered 503 while the first is still inside fn, without waiting for
// it; afterwards the duplicate gets 200 and the status is judged stale.
func TestFulfilTxInFlightAnswersAtOnce(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			entered, proceed := make(chan struct{}), make(chan struct{})
			letGo := sync.OnceFunc(func() { close(proceed) })
			t.Cleanup(letGo) // a failed assertion must not leave fn blocked for the package's timeout
			h := s.handlerOn(p, s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
				if err := s.pathInsert(ctx, tx, cb, "A"); err != nil {
					return err
				}
				close(entered)
				<-proceed
				return nil
			})
			var stale []bool
			h.OnStatus = func(_ context.Context, cb *paygate.Callback) error { stale = append(stale, cb.Stale); return nil }
			first := make(chan int, 1)
			go func() { first <- s.deliver(t, h, "INV-1") }()
			waitFor(t, entered, "the first delivery's fn")
			start := time.Now()
			require.Equal(t, http.StatusServiceUnavailable, s.deliver(t, h, "INV-1"), "a duplicate")
			require.Less(t, time.Since(start), 2*time.Second, "the duplicate did not wait for the first delivery")
			require.Equal(t, http.StatusServiceUnavailable, s.deliverStatus(t, h, "INV-1", "failed"), "a status event")
			select {
			case code := <-first:
				t.Fatalf("the first delivery ended (%d) before fn was let go", code)
			default:
			}
			letGo()
			require.Equal(t, http.StatusOK, <-first)
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			require.Equal(t, http.StatusOK, s.deliverStatus(t, h, "INV-1", "failed"))
			require.Equal(t, []bool{true}, stale)
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
		})
	}
}

// A lease claim of the refNo's fulfilment key (a status event's, while its
// OnStatus runs) holds the fulfilment off while it lives; once lapsed (its
// replica crashed) the fulfilment takes it over.
func TestFulfilTxMeetsALeaseClaim(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			h := s.ledgerHandler(p)
			c, err := s.d.Claim(ctx, "fulfil|INV-1", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimAcquired, c.State)
			require.Equal(t, http.StatusServiceUnavailable, s.deliver(t, h, "INV-1"))
			require.Empty(t, s.rows(t, "INV-1"))
			_, err = s.db.Exec(`UPDATE `+s.d.table+` SET expires_at = now() - interval '1 second' WHERE key = $1`, "fulfil|INV-1")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
			require.ErrorIs(t, s.d.Complete(ctx, "fulfil|INV-1", c.Token, "late"), paygate.ErrClaimLost, "the lapsed claim's holder is fenced off")
		})
	}
}

// A second payment of a fulfilled refNo (another orderNo) goes to
// OnDoublePayment with the orderNo the fulfilment recorded, never to fn.
func TestFulfilTxDoublePayment(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			h := s.ledgerHandler(p)
			var paid []string
			h.OnDoublePayment = func(_ context.Context, cb *paygate.Callback, paidOrderNo string) error {
				paid = append(paid, cb.OrderNo+" after "+paidOrderNo)
				return nil
			}
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			require.Equal(t, http.StatusOK, s.deliverOrder(t, h, "INV-1", "GW-OTHER"))
			require.Equal(t, []string{"GW-OTHER after GW-INV-1"}, paid)
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
		})
	}
}

// Mis-wiring is refused at the first paid callback, with nothing written:
// a fulfilment on a handler whose Deduper is another one (the in-memory
// default, another table), a nil fn, and
// FulfilPgx on a *sql.DB whose driver is not pgx's.
func TestFulfilTxMisWired(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			other, _ := testDeduperOn(t, db, opts...)
			fn := func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
				return s.pathInsert(ctx, tx, cb, "A")
			}
			cases := []struct {
				name    string
				handler *paygate.CallbackHandler
				want    string
			}{
				{name: "default Deduper", handler: s.handlerOn(p, nil, fn), want: "Deduper is *paygate.MemoryDeduper"},
				{name: "another table", handler: s.handlerOn(p, other, fn), want: "Deduper is *pgstore.Deduper"},
				{name: "nil fn", handler: s.handlerOn(p, s.d, nil), want: "nil fn"},
			}
			if p.name != "FulfilTx" {
				foreign, _ := openCountingDB(t, false) // pgx's connections, hidden: another driver
				fs := newTxShop(t, foreign)
				cases = append(cases, struct {
					name    string
					handler *paygate.CallbackHandler
					want    string
				}{name: "another driver", handler: fs.handlerOn(p, fs.d, fn), want: "needs a Deduper of NewPgx, or a *sql.DB of pgx's driver"})
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					var logs bytes.Buffer // one delivery at a time
					tc.handler.Logger = slog.New(slog.NewTextHandler(&logs, nil))
					require.Equal(t, http.StatusInternalServerError, s.deliver(t, tc.handler, "INV-"+tc.name))
					require.Contains(t, logs.String(), tc.want)
					require.NotContains(t, logs.String(), "lease")
					require.Empty(t, s.rows(t, "INV-"+tc.name))
				})
			}
		})
	}
}

// deliverOrder posts the success callback of ref under orderNo to h.
func (s *txShop) deliverOrder(t testing.TB, h http.Handler, ref, orderNo string) int {
	return s.post(t, h, url.Values{"status": {"success"}, "refNo": {ref + "~cart"}, "orderNo": {orderNo}, "amount": {"10.00"}})
}

// deliverStatus posts a callback of ref with status (pending or failed).
func (s *txShop) deliverStatus(t testing.TB, h http.Handler, ref, status string) int {
	return s.post(t, h, url.Values{"status": {status}, "refNo": {ref + "~cart"}, "orderNo": {"GW-" + ref}, "amount": {"10.00"}})
}

// post posts the signed callback of fields to h and returns the status.
func (s *txShop) post(t testing.TB, h http.Handler, fields url.Values) int {
	t.Helper()
	r, err := gatewaytest.NewCallbackRequest(s.key, "/return", fields)
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// An unreachable database on the transactional path is the store's
// outage, as on the lease path: 503 with Retry-After, logged as the
// store's, never as the hook's failure, and fn never runs.
func TestFulfilTxStoreUnreachable(t *testing.T) {
	const dead = "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1" // nothing listens on port 1
	sqlDB := func(t *testing.T) *Deduper {
		db, err := sql.Open("pgx", dead)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		d, err := New(db)
		require.NoError(t, err)
		return d
	}
	for _, tt := range []struct {
		name string
		d    func(t *testing.T) *Deduper
		wire func(d *Deduper, fn pathFn) paygate.TxFulfiller
	}{
		{name: "FulfilTx", d: sqlDB, wire: wireSQL},
		{name: "FulfilPgx", d: sqlDB, wire: wirePgx},
		{name: "FulfilPgx on a pgxpool", d: func(t *testing.T) *Deduper {
			pool, err := pgxpool.New(context.Background(), dead)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			d, err := NewPgx(pool)
			require.NoError(t, err)
			return d
		}, wire: wirePgx},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d(t)
			var logs bytes.Buffer
			ran := false
			h := &paygate.CallbackHandler{Keys: []paygate.Key{crashKey(t)}, Deduper: d, HookTimeout: 10 * time.Second,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: tt.wire(d, func(context.Context, pathTx, *paygate.Callback) error { ran = true; return nil })}
			r, err := gatewaytest.NewCallbackRequest(crashKey(t), "/return", url.Values{"status": {"success"}, "refNo": {"INV-DOWN"}, "orderNo": {"GW-1"}, "amount": {"10.00"}})
			require.NoError(t, err)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, http.StatusServiceUnavailable, w.Code, logs.String())
			require.Equal(t, "30", w.Header().Get("Retry-After"))
			require.Contains(t, logs.String(), "dedupe store unreachable; nothing written")
			require.NotContains(t, logs.String(), "callback hook failed")
			require.False(t, ran, "fn ran without its claim")
		})
	}
}

// A transactional fulfiler without its fn is refused at the handler's first
// event, whatever the event: a status event too gets 500, so that the
// gateway keeps it until the handler can fulfil (Check), and Check says so
// when asked directly.
func TestFulfilTxWithoutFnRefusedAtFirstUse(t *testing.T) {
	db := openDB(t, testDSN(t))
	s := newTxShop(t, db)
	for _, p := range fulfilPaths()[:2] {
		t.Run(p.name, func(t *testing.T) {
			require.ErrorContains(t, p.wire(s.d, nil).Check(s.d), "nil fn")
			var status int
			h := s.handlerOn(p, s.d, nil)
			h.OnStatus = func(context.Context, *paygate.Callback) error { status++; return nil }
			require.Equal(t, http.StatusInternalServerError, s.deliverStatus(t, h, "INV-NOFN", "pending"))
			require.Zero(t, status, "OnStatus ran on a handler that cannot fulfil")
		})
	}
}

// FulfilOnce called directly, outside a handler's first-use check, still
// refuses a claim of another Deduper before it writes anything.
func TestFulfilOnceRefusesAnotherDeduper(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			tf := p.wire(s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
				return s.pathInsert(ctx, tx, cb, "A")
			})
			claim := paygate.HookClaim{Key: "fulfil|INV-OD", Result: "GW-1", Deduper: &paygate.MemoryDeduper{}}
			res, err := tf.FulfilOnce(context.Background(), claim, &paygate.Callback{RefNo: "INV-OD", OrderNo: "GW-1"})
			require.ErrorIs(t, err, ErrOtherDeduper)
			require.Equal(t, paygate.ClaimResult{}, res)
			require.Empty(t, s.rows(t, "INV-OD"))
		})
	}
}
