package pgstore

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// txShop is a merchant whose fulfilment adds a ledger row, in a table with
// no unique constraint: only HookTx keeps it to one row per order.
type txShop struct {
	d      *Deduper
	db     *sql.DB
	ledger string
	key    paygate.Key
	calls  atomic.Int32
}

// newTxShop makes a fresh deduper table and ledger on db.
func newTxShop(t testing.TB, db *sql.DB, opts ...Option) *txShop {
	t.Helper()
	d, _ := testDeduperOn(t, db, opts...)
	ledger := fmt.Sprintf("ledger_test_%d", rand.Uint32())
	_, err := db.Exec(`CREATE TABLE ` + ledger + ` (ref_no text, order_no text, by_replica text)`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + ledger) })
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	return &txShop{d: d, db: db, ledger: ledger, key: key}
}

// insert adds cb's ledger row through tx, by replica.
func (s *txShop) insert(ctx context.Context, tx *sql.Tx, cb *paygate.Callback, replica string) error {
	s.calls.Add(1)
	_, err := tx.ExecContext(ctx, `INSERT INTO `+s.ledger+` (ref_no, order_no, by_replica) VALUES ($1, $2, $3)`, cb.RefNo, cb.OrderNo, replica)
	return err
}

// handler serves HookTx(fn) on deduper (s.d unless given).
func (s *txShop) handler(deduper paygate.Deduper, lease time.Duration, fulfil func(context.Context, *paygate.Callback) error) *paygate.CallbackHandler {
	return &paygate.CallbackHandler{Keys: []paygate.Key{s.key}, Deduper: deduper, Fulfil: paygate.FulfilFunc(fulfil), Lease: lease,
		HookTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}
}

// handlerTx serves FulfilTx(fn) on deduper (s.d unless given): the
// transactional path.
func (s *txShop) handlerTx(deduper paygate.Deduper, fn func(context.Context, *sql.Tx, *paygate.Callback) error) *paygate.CallbackHandler {
	return &paygate.CallbackHandler{Keys: []paygate.Key{s.key}, Deduper: deduper, Fulfil: s.d.FulfilTx(fn),
		HookTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)}
}

// deliver posts the success callback of ref to h and returns the status.
func (s *txShop) deliver(t testing.TB, h http.Handler, ref string) int {
	t.Helper()
	return s.post(t, h, url.Values{"status": {"success"}, "refNo": {ref + "~cart"},
		"orderNo": {"GW-" + ref}, "amount": {"10.00"}, "fpx": {`{"fpx_debit_auth_code":"00"}`}})
}

// rows lists the ledger rows of ref by the replica that wrote them.
func (s *txShop) rows(t testing.TB, ref string) []string {
	t.Helper()
	rs, err := s.db.Query(`SELECT by_replica FROM `+s.ledger+` WHERE ref_no = $1`, ref)
	require.NoError(t, err)
	defer rs.Close()
	var by []string
	for rs.Next() {
		var b string
		require.NoError(t, rs.Scan(&b))
		by = append(by, b)
	}
	require.NoError(t, rs.Err())
	return by
}

// The effect and the completion commit together: one ledger row, the event
// done with the orderNo, a duplicate answered 200 without calling fn, and a
// release under the committed claim's token undoes nothing.
func TestHookTxOnce(t *testing.T) {
	ctx := context.Background()
	s := newTxShop(t, openDB(t, testDSN(t)))
	var token string
	h := s.handler(s.d, 0, s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		claim, ok := paygate.HookClaimFrom(ctx)
		require.True(t, ok)
		token = claim.Token
		return s.insert(ctx, tx, cb, "A")
	}))
	require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
	require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
	require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
	require.EqualValues(t, 1, s.calls.Load())
	require.ErrorIs(t, s.d.Release(ctx, "fulfil|INV-1", token), paygate.ErrClaimLost, "a completed event is never released")
	c, err := s.d.Claim(ctx, "fulfil|INV-1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW-INV-1"}, c)
}

// A failing or panicking fn leaves neither its effect nor a completion: 500,
// the claim released, and the retry fulfils once.
func TestHookTxFailureRollsBack(t *testing.T) {
	for _, tt := range []struct {
		name string
		fail func() error
	}{
		{name: "error", fail: func() error { return errors.New("warehouse down") }},
		{name: "panic", fail: func() error { panic("stock service returned garbage") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTxShop(t, openDB(t, testDSN(t)))
			first := true
			h := s.handler(s.d, 0, s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
				if err := s.insert(ctx, tx, cb, "A"); err != nil {
					return err
				}
				if first {
					first = false
					return tt.fail()
				}
				return nil
			}))
			require.Equal(t, http.StatusInternalServerError, s.deliver(t, h, "INV-2"))
			require.Empty(t, s.rows(t, "INV-2"))
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-2"), "the claim was released")
			require.Equal(t, []string{"A"}, s.rows(t, "INV-2"))
		})
	}
}

// Outside a CallbackHandler there is no claim: an error, fn not called,
// nothing written.
func TestHookTxOutsideHandler(t *testing.T) {
	s := newTxShop(t, openDB(t, testDSN(t)))
	fulfil := s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error { return s.insert(ctx, tx, cb, "A") })
	err := fulfil(context.Background(), &paygate.Callback{RefNo: "INV-3", OrderNo: "GW-INV-3", Status: paygate.StatusSuccess})
	require.ErrorIs(t, err, ErrNoHookClaim)
	require.EqualValues(t, 0, s.calls.Load())
	require.Empty(t, s.rows(t, "INV-3"))
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM `+s.d.table).Scan(&n))
	require.Zero(t, n)
}

// deafRenewals is a replica whose renewals seem to succeed but reach nobody
// (a partition, a pause): its claim lapses while its hook runs on.
type deafRenewals struct{ paygate.Deduper }

func (deafRenewals) Renew(context.Context, string, string, time.Duration) error { return nil }

// A claim taken over makes the old holder's transaction roll back, even
// when it completes while the new holder is still in its fn: the old
// holder gets ErrClaimLost and 500, the new one commits, one ledger row.
func TestHookTxTakenOverRollsBack(t *testing.T) {
	s := newTxShop(t, openDB(t, testDSN(t)))
	const lease = 300 * time.Millisecond
	// Registered after newTxShop, so that a failing test lets both hooks go
	// (and waits for their deliveries) before the ledger is dropped: a hook
	// held open would hold its transaction, and the DROP with it, until
	// HookTimeout.
	deliveries := heldDeliveries(t)
	enteredA, proceedA := make(chan struct{}), deliveries.gate()
	enteredB, proceedB := make(chan struct{}), deliveries.gate()
	fulfilA := s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		err := s.insert(ctx, tx, cb, "A")
		close(enteredA)
		<-proceedA.ch // outlives its lease, its renewals lost
		return err
	})
	errA := make(chan error, 1)
	a := s.handler(deafRenewals{s.d}, lease, func(ctx context.Context, cb *paygate.Callback) error {
		err := fulfilA(ctx, cb)
		errA <- err
		return err
	})
	b := s.handler(s.d, lease, s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		err := s.insert(ctx, tx, cb, "B")
		close(enteredB)
		<-proceedB.ch
		return err
	}))
	codeA := deliveries.deliver(s, a, "INV-4")
	waitFor(t, enteredA, "replica A's hook to start")
	for i := 0; ; i++ { // until A's lease has lapsed
		require.Less(t, i, 100, "A's lease of %v never lapsed", lease)
		var lapsed bool
		require.NoError(t, s.db.QueryRow(`SELECT expires_at <= now() FROM `+s.d.table+` WHERE key = 'fulfil|INV-4'`).Scan(&lapsed))
		if lapsed {
			break
		}
		time.Sleep(lease / 10)
	}
	codeB := deliveries.deliver(s, b, "INV-4")
	select { // B takes the lapsed claim over
	case <-enteredB:
	case code := <-codeB:
		t.Fatalf("replica B answered %d instead of taking A's lapsed claim over", code)
	case <-time.After(10 * time.Second):
		t.Fatal("waited 10 s for replica B to take the lapsed claim over")
	}
	proceedA.open()
	require.ErrorIs(t, <-errA, paygate.ErrClaimLost)
	require.Equal(t, http.StatusInternalServerError, <-codeA)
	proceedB.open()
	require.Equal(t, http.StatusOK, <-codeB)
	require.Equal(t, []string{"B"}, s.rows(t, "INV-4"))
	require.Equal(t, http.StatusOK, s.deliver(t, b, "INV-4"))
	require.EqualValues(t, 2, s.calls.Load())
}

// A duplicate of an event in flight gets 503 while the first delivery's
// transaction is open, not after it.
func TestHookTxDuplicateInFlight(t *testing.T) {
	s := newTxShop(t, openDB(t, testDSN(t)))
	deliveries := heldDeliveries(t)
	entered, proceed := make(chan struct{}), deliveries.gate()
	h := s.handler(s.d, 0, s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		err := s.insert(ctx, tx, cb, "A")
		close(entered)
		<-proceed.ch
		return err
	}))
	first := deliveries.deliver(s, h, "INV-5")
	waitFor(t, entered, "the first delivery's hook to start")
	dup := deliveries.deliver(s, h, "INV-5")
	select {
	case code := <-dup:
		require.Equal(t, http.StatusServiceUnavailable, code)
	case <-time.After(10 * time.Second):
		t.Fatal("a duplicate in flight waited for the first delivery's hook: it must get 503 at once")
	}
	proceed.open()
	require.Equal(t, http.StatusOK, <-first)
	require.Equal(t, []string{"A"}, s.rows(t, "INV-5"))
}

// deliveries are callbacks delivered in the background whose hooks wait
// on gates. However the test ends, its cleanup opens every gate and waits
// for every delivery, so that a failing test fails at once, not after
// HookTimeout, and leaves no hook running into the next test.
type deliveries struct {
	t     testing.TB
	gates []*gate
	wg    sync.WaitGroup
}

// gate is a channel a hook waits on, opened once.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// heldDeliveries returns deliveries released by t's cleanup: call it after
// whatever must outlive them (a table they write) was set up.
func heldDeliveries(t testing.TB) *deliveries {
	ds := &deliveries{t: t}
	t.Cleanup(func() {
		for _, g := range ds.gates {
			g.open()
		}
		done := make(chan struct{})
		go func() { ds.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("a delivery did not end within 10 s of its gates opening")
		}
	})
	return ds
}

// gate is a new gate, opened by the cleanup at the latest.
func (ds *deliveries) gate() *gate {
	g := &gate{ch: make(chan struct{})}
	ds.gates = append(ds.gates, g)
	return g
}

// deliver delivers ref's success callback to h in the background; the
// channel gets its status.
func (ds *deliveries) deliver(s *txShop, h http.Handler, ref string) chan int {
	code := make(chan int, 1)
	ds.wg.Add(1)
	go func() {
		defer ds.wg.Done()
		code <- s.deliver(ds.t, h, ref)
	}()
	return code
}

// A claim is not blocked by a completion written but not yet committed:
// the completing transaction's row lock is invisible to the claim's read.
func TestClaimNotBlockedByUncommittedCompletion(t *testing.T) {
	ctx := context.Background()
	d, db := testDeduper(t)
	c, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, d.completeSQL, "k", c.Token, "GW1", d.retention.Microseconds())
	require.NoError(t, err)
	bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	busy, err := d.Claim(bounded, "k", time.Minute)
	require.NoError(t, err, "a claim waited on the completing transaction's lock")
	require.Equal(t, paygate.ClaimBusy, busy.State)
	require.NoError(t, tx.Commit())
	done, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimResult{State: paygate.ClaimDone, Result: "GW1"}, done)
}

// A COMMIT whose answer is lost (the connection cut after the server
// committed): the hook reports an error, the handler answers 500 and
// releases the claim, the release leaves the committed completion alone,
// and the retry gets 200 without calling fn again.
func TestHookTxCommitOutcomeUnknown(t *testing.T) {
	proxy, dsn := newCountingProxy(t, testDSN(t))
	s := newTxShop(t, openDB(t, dsn))
	var hookErr atomic.Value
	fulfil := s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error { return s.insert(ctx, tx, cb, "A") })
	h := s.handler(s.d, 0, func(ctx context.Context, cb *paygate.Callback) error {
		err := fulfil(ctx, cb)
		if err != nil {
			hookErr.Store(err)
		}
		return err
	})
	proxy.dropCommit.Store(true)
	require.Equal(t, http.StatusInternalServerError, s.deliver(t, h, "INV-6"))
	require.False(t, proxy.dropCommit.Load(), "the COMMIT's answer was cut")
	require.ErrorContains(t, hookErr.Load().(error), "outcome unknown")
	require.Equal(t, []string{"A"}, s.rows(t, "INV-6"), "the server committed")
	require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-6"))
	require.Equal(t, []string{"A"}, s.rows(t, "INV-6"))
	require.EqualValues(t, 1, s.calls.Load())
}

// waitFor waits for ch to close, failing after 10 s with what was awaited.
func waitFor(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("waited 10 s for %s", what)
	}
}

// noDatabase is a connector that never connects: a Deduper on it can be
// built, and any statement fails.
type noDatabase struct{}

func (noDatabase) Connect(context.Context) (driver.Conn, error) {
	return nil, errors.New("no database in this test")
}

func (noDatabase) Driver() driver.Driver { return nil }

// A HookTx hook on a handler whose Deduper is another one is refused the
// first time it runs, before it touches the database, with an error that
// names the handler's Deduper and the fix, and nothing of leases.
func TestHookTxRefusesAnotherDeduper(t *testing.T) {
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	d, err := New(sql.OpenDB(noDatabase{}))
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		deduper paygate.Deduper
	}{
		{name: "the default in-memory Deduper", deduper: nil},
		{name: "a MemoryDeduper given", deduper: &paygate.MemoryDeduper{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			called := false
			h := &paygate.CallbackHandler{
				Keys:    []paygate.Key{key},
				Deduper: tc.deduper,
				Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: paygate.FulfilFunc(d.HookTx(func(context.Context, *sql.Tx, *paygate.Callback) error {
					called = true
					return nil
				})),
			}
			req, err := gatewaytest.NewCallbackRequest(key, "/paygate/return", url.Values{
				"status": {"success"}, "refNo": {"INV-1"}, "orderNo": {"GW1"}, "amount": {"10.00"},
			})
			require.NoError(t, err)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, http.StatusInternalServerError, rec.Code)
			require.False(t, called, "fn never runs")
			require.Contains(t, logs.String(), "set CallbackHandler.Deduper to the *pgstore.Deduper whose FulfilTx or HookTx it uses")
			require.NotContains(t, logs.String(), "lease")
		})
	}
}

// On PostgreSQL: a handler whose Deduper is another pgstore.Deduper is
// refused before fn runs; one whose Deduper wraps a store that is not d
// (a decorator of a MemoryDeduper) is refused after fn, which is rolled
// back: no ledger row either way, every delivery refused alike, and no
// word of leases.
func TestHookTxRefusesAnotherDeduperOnPostgres(t *testing.T) {
	_, db := testDeduper(t)
	shop := newTxShop(t, db)
	other, _ := testDeduperOn(t, shop.db)
	for _, tc := range []struct {
		name    string
		deduper paygate.Deduper
	}{
		{name: "another pgstore.Deduper", deduper: other},
		{name: "a wrapper of a MemoryDeduper", deduper: struct{ *paygate.MemoryDeduper }{&paygate.MemoryDeduper{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := shop.handler(tc.deduper, time.Minute, shop.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
				return shop.insert(ctx, tx, cb, "A")
			}))
			h.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			for range 2 {
				require.Equal(t, http.StatusInternalServerError, shop.deliver(t, h, "INV-"+tc.name))
			}
			require.Contains(t, logs.String(), "set CallbackHandler.Deduper to the *pgstore.Deduper whose FulfilTx or HookTx it uses")
			require.NotContains(t, logs.String(), "lease")
			var rows int
			require.NoError(t, shop.db.QueryRow(`SELECT count(*) FROM `+shop.ledger).Scan(&rows))
			require.Zero(t, rows)
		})
	}
}

// HookTx reports a transaction it could not begin, a completion it could
// not write, and fn ending the transaction itself, each as what it is: the
// hook fails and the handler answers 500, so that the gateway retries.
func TestHookTxReportsFailedSteps(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failAt     int64 // the failing operation from the hook's start: begin, insert, complete
		failRowsAt int64 // the statement whose RowsAffected fails
		commitInFn bool
		want       string
	}{
		{name: "begin", failAt: 1, want: "pgstore: fulfil: begin: injected fault"},
		{name: "completion", failAt: 3, want: "pgstore: fulfil: complete fulfil|INV-F: injected fault"},
		{name: "completion's row count", failRowsAt: 3, want: "pgstore: fulfil: complete fulfil|INV-F: injected fault"},
		{name: "fn ended the transaction", commitInFn: true, want: "fn ended the transaction itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, fc := openFaultDB(t)
			db.SetMaxOpenConns(2)
			s := newTxShop(t, db)
			fulfil := s.d.HookTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
				if err := s.insert(ctx, tx, cb, "A"); err != nil || !tc.commitInFn {
					return err
				}
				return tx.Commit()
			})
			var hookErr error
			h := s.handler(s.d, 0, func(ctx context.Context, cb *paygate.Callback) error {
				if tc.failAt > 0 {
					fc.failAt.Store(fc.ops.Load() + tc.failAt)
				}
				if tc.failRowsAt > 0 {
					fc.failRowsAt.Store(fc.ops.Load() + tc.failRowsAt)
				}
				hookErr = fulfil(ctx, cb)
				fc.failAt.Store(0)
				fc.failRowsAt.Store(0)
				return hookErr
			})
			require.Equal(t, http.StatusInternalServerError, s.deliver(t, h, "INV-F"))
			require.ErrorContains(t, hookErr, tc.want)
		})
	}
}
