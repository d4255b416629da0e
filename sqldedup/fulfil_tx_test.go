package sqldedup

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
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// The claim, the effect and the completion commit together: one ledger
// row, the event done with its orderNo; duplicates, sequential and
// concurrent, are answered 200 (after 503 while one is in flight) and
// never run fn again.
func TestFulfilTxOnce(t *testing.T) {
	ctx := context.Background()
	s := newTxShop(t, openDB(t, testDSN(t)))
	h := s.handlerTx(s.d, func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		return s.insert(ctx, tx, cb, "A")
	})
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
}

// What fn does to its transaction decides, and nothing is left to lapse:
// an error, a panic or a lost connection (the replica's crash, as
// PostgreSQL sees it) rolls the claim back with the effect, and the very
// next delivery fulfils; fn ending tx itself is answered 500 and never
// fulfils twice.
func TestFulfilTxRollbackLeavesTheEventFree(t *testing.T) {
	db := openDB(t, testDSN(t))
	for _, tc := range []struct {
		name string
		// fault is what fn does after its INSERT, on its first call.
		fault    func(ctx context.Context, tx *sql.Tx) error
		wantRows int // after the first delivery
	}{
		{name: "error", fault: func(context.Context, *sql.Tx) error { return errors.New("stock service down") }},
		{name: "panic", fault: func(context.Context, *sql.Tx) error { panic("stock service returned garbage") }},
		{name: "connection lost", fault: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
			return err
		}},
		{name: "fn rolls back", fault: func(_ context.Context, tx *sql.Tx) error { return tx.Rollback() }},
		{name: "fn commits", fault: func(_ context.Context, tx *sql.Tx) error { return tx.Commit() }, wantRows: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTxShop(t, db)
			first := true
			h := s.handlerTx(s.d, func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
				if err := s.insert(ctx, tx, cb, "A"); err != nil {
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
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"), "the next delivery, at once")
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
		})
	}
}

// A delivery in flight holds the event by its transaction: a duplicate, and
// a status event of the same refNo (whose lease claim meets the same lock),
// are answered 503 while the first is still inside fn, without waiting for
// it; afterwards the duplicate gets 200 and the status is judged stale.
func TestFulfilTxInFlightAnswersAtOnce(t *testing.T) {
	s := newTxShop(t, openDB(t, testDSN(t)))
	entered, proceed := make(chan struct{}), make(chan struct{})
	h := s.handlerTx(s.d, func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		if err := s.insert(ctx, tx, cb, "A"); err != nil {
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
	require.Equal(t, http.StatusServiceUnavailable, s.deliver(t, h, "INV-1"), "a duplicate")
	require.Equal(t, http.StatusServiceUnavailable, s.deliverStatus(t, h, "INV-1", "failed"), "a status event")
	select {
	case code := <-first:
		t.Fatalf("the first delivery ended (%d) before fn was let go", code)
	default:
	}
	close(proceed)
	require.Equal(t, http.StatusOK, <-first)
	require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
	require.Equal(t, http.StatusOK, s.deliverStatus(t, h, "INV-1", "failed"))
	require.Equal(t, []bool{true}, stale)
	require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
}

// A lease claim of the refNo's fulfilment key (a status event's, while its
// OnStatus runs) holds FulfilTx off while it lives; once lapsed (its
// replica crashed) FulfilTx takes it over.
func TestFulfilTxMeetsALeaseClaim(t *testing.T) {
	ctx := context.Background()
	s := newTxShop(t, openDB(t, testDSN(t)))
	h := s.handlerTx(s.d, func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		return s.insert(ctx, tx, cb, "A")
	})
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
}

// A second payment of a fulfilled refNo (another orderNo) goes to
// OnDoublePayment with the orderNo FulfilTx recorded, never to fn.
func TestFulfilTxDoublePayment(t *testing.T) {
	s := newTxShop(t, openDB(t, testDSN(t)))
	h := s.handlerTx(s.d, func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		return s.insert(ctx, tx, cb, "A")
	})
	var paid []string
	h.OnDoublePayment = func(_ context.Context, cb *paygate.Callback, paidOrderNo string) error {
		paid = append(paid, cb.OrderNo+" after "+paidOrderNo)
		return nil
	}
	require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
	require.Equal(t, http.StatusOK, s.deliverOrder(t, h, "INV-1", "GW-OTHER"))
	require.Equal(t, []string{"GW-OTHER after GW-INV-1"}, paid)
	require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
}

// Mis-wiring is refused at the first paid callback, with nothing written:
// FulfilTx on a handler whose Deduper is another one (the in-memory
// default, another table), both Fulfil and FulfilTx, a nil fn.
func TestFulfilTxMisWired(t *testing.T) {
	db := openDB(t, testDSN(t))
	s := newTxShop(t, db)
	other, _ := testDeduperOn(t, db)
	fn := func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error { return s.insert(ctx, tx, cb, "A") }
	for _, tc := range []struct {
		name    string
		handler *paygate.CallbackHandler
		want    string
	}{
		{name: "default Deduper", handler: s.handlerTx(nil, fn), want: "Deduper is *paygate.MemoryDeduper"},
		{name: "another table", handler: s.handlerTx(other, fn), want: "Deduper is *sqldedup.Deduper"},
		{name: "both hooks", handler: func() *paygate.CallbackHandler {
			h := s.handlerTx(s.d, fn)
			h.Fulfil = func(context.Context, *paygate.Callback) error { return nil }
			return h
		}(), want: "both Fulfil and FulfilTx"},
		{name: "nil fn", handler: s.handlerTx(s.d, nil), want: "nil fn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer // one delivery at a time
			tc.handler.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			require.Equal(t, http.StatusInternalServerError, s.deliver(t, tc.handler, "INV-"+tc.name))
			require.Contains(t, logs.String(), tc.want)
			require.NotContains(t, logs.String(), "lease")
			require.Empty(t, s.rows(t, "INV-"+tc.name))
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
	r, err := paygate.NewCallbackRequest(s.key, "/return", fields)
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}
