package paygate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// shopLog records what a merchant's hooks did.
type shopLog struct {
	mu       sync.Mutex
	fulfils  map[string]int
	statuses map[string][]*paygate.Callback
	doubles  int
}

func newShopLog() *shopLog {
	return &shopLog{fulfils: map[string]int{}, statuses: map[string][]*paygate.Callback{}}
}

// handler is a merchant's CallbackHandler recording into l.
func (l *shopLog) handler(key paygate.Key, d paygate.Deduper) *paygate.CallbackHandler {
	return &paygate.CallbackHandler{
		Keys: []paygate.Key{key}, Deduper: d, Logger: slog.New(slog.DiscardHandler), ReconcileInterval: -1,
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.fulfils[cb.RefNo]++
			return nil
		}),
		OnStatus: func(_ context.Context, cb *paygate.Callback) error {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.statuses[cb.RefNo] = append(l.statuses[cb.RefNo], cb)
			return nil
		},
		OnDoublePayment: func(context.Context, *paygate.Callback, string) error {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.doubles++
			return nil
		},
	}
}

// down is a merchant endpoint that answers every callback 503: the
// merchant is down longer than the gateway retries.
var down = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })

// Each awaited reference is looked up and run through the callback path:
// a paid order whose callback never arrived is fulfilled, once, however
// often it is reconciled; pending, failed, unknown references and one
// fulfilled by its callback are reported as such.
func TestReconcile(t *testing.T) {
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(time.Millisecond), gatewaytest.WithMaxAttempts(1))
	defer sb.Close()
	log := newShopLog()
	h := log.handler(sb.Key(), &paygate.MemoryDeduper{})
	up := httptest.NewServer(h)
	defer up.Close()
	gone := httptest.NewServer(down)
	defer gone.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	ctx := context.Background()

	orders := []struct {
		ref, returnURL string
		pay            []paygate.Status
	}{
		{ref: "MISSED-1", returnURL: gone.URL, pay: []paygate.Status{paygate.StatusSuccess}},
		{ref: "MISSED-2~cart 9", returnURL: gone.URL, pay: []paygate.Status{paygate.StatusSuccess}},
		{ref: "DELIVERED", returnURL: up.URL, pay: []paygate.Status{paygate.StatusSuccess}},
		{ref: "WAITING", returnURL: gone.URL, pay: []paygate.Status{paygate.StatusPending}},
		{ref: "DECLINED", returnURL: gone.URL, pay: []paygate.Status{paygate.StatusFailed}},
		{ref: "UNPAID", returnURL: gone.URL},
	}
	for _, o := range orders {
		base, extra := paygate.SplitRefNo(o.ref)
		_, err := client.CreateOrder(ctx, paygate.Order{RefNo: base, ExtraData: extra, Amount: 1990, Email: "a@example.com", ReturnURL: o.returnURL})
		require.NoError(t, err, o.ref)
		for _, st := range o.pay {
			require.NoError(t, sb.Pay(o.ref, st))
		}
	}
	sb.Settle()
	require.Equal(t, map[string]int{"DELIVERED": 1}, log.fulfils, "only the delivered callback was fulfilled")

	refs := []string{"MISSED-1", "MISSED-2~cart 9", "DELIVERED", "WAITING", "DECLINED", "UNPAID", "NEVER-CREATED"}
	want := []paygate.Outcome{paygate.OutcomeFulfilled, paygate.OutcomeFulfilled, paygate.OutcomeAlreadyFulfilled,
		paygate.OutcomePending, paygate.OutcomeFailed, paygate.OutcomePending, paygate.OutcomeNotFound}
	rec, err := h.Reconcile(ctx, client, refs)
	require.NoError(t, err)
	require.Len(t, rec.Entries, len(refs))
	for i, e := range rec.Entries {
		require.Equal(t, refs[i], e.RefNo)
		require.Equal(t, want[i], e.Outcome, "%s: %+v", e.RefNo, e)
	}
	require.Equal(t, map[string]int{"DELIVERED": 1, "MISSED-1": 1, "MISSED-2": 1}, log.fulfils)
	require.Len(t, log.statuses["WAITING"], 1)
	require.Len(t, log.statuses["UNPAID"], 1, "an undecided order reads pending")
	require.Equal(t, paygate.SourceLookup, log.statuses["WAITING"][0].Source)
	require.True(t, errors.Is(rec.Entries[6].Err, paygate.ErrOrderNotFound))
	require.Equal(t, 2, rec.Counts[paygate.OutcomeFulfilled])

	// Again: nothing is fulfilled twice, nothing is called again.
	rec, err = h.Reconcile(ctx, client, refs)
	require.NoError(t, err)
	require.Equal(t, 3, rec.Counts[paygate.OutcomeAlreadyFulfilled], fmt.Sprint(rec.Counts))
	require.Equal(t, map[string]int{"DELIVERED": 1, "MISSED-1": 1, "MISSED-2": 1}, log.fulfils)
	require.Len(t, log.statuses["WAITING"], 1)

	// The report window finds the same payments: all fulfilled already.
	day := time.Now().In(paygate.MalaysiaTime())
	rep, err := h.ReconcileReport(ctx, client, paygate.ReportQuery{Start: day, End: day})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Counts[paygate.OutcomeAlreadyFulfilled], fmt.Sprint(rep.Counts))
	require.Equal(t, map[string]int{"DELIVERED": 1, "MISSED-1": 1, "MISSED-2": 1}, log.fulfils)
}

// ReconcileReport fulfils the paid rows of a day that no callback brought.
func TestReconcileReport(t *testing.T) {
	sb := gatewaytest.NewServer(gatewaytest.WithMaxAttempts(1))
	defer sb.Close()
	log := newShopLog()
	h := log.handler(sb.Key(), &paygate.MemoryDeduper{})
	gone := httptest.NewServer(down)
	defer gone.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 25 {
		ref := fmt.Sprintf("R-%02d", i)
		_, err := client.CreateOrder(ctx, paygate.Order{RefNo: ref, Amount: 1000 + paygate.Amount(i), Email: "a@example.com", ReturnURL: gone.URL})
		require.NoError(t, err)
		st := paygate.StatusSuccess
		if i%5 == 0 {
			st = paygate.StatusFailed
		}
		require.NoError(t, sb.Pay(ref, st))
	}
	sb.Settle()
	day := time.Now().In(paygate.MalaysiaTime())
	rep, err := h.ReconcileReport(ctx, client, paygate.ReportQuery{Start: day, End: day, ItemsPerPage: 7})
	require.NoError(t, err)
	require.Equal(t, 20, rep.Counts[paygate.OutcomeFulfilled], fmt.Sprint(rep.Counts))
	require.Equal(t, 5, rep.Counts[paygate.OutcomeFailed], fmt.Sprint(rep.Counts))
	require.Len(t, log.fulfils, 20)
	for ref, n := range log.fulfils {
		require.Equal(t, 1, n, ref)
	}
}

// Reconcile stops on ctx between paced lookups and returns what it did.
func TestReconcileStopsOnContext(t *testing.T) {
	sb := gatewaytest.NewServer()
	defer sb.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	h := newShopLog().handler(sb.Key(), nil)
	h.ReconcileInterval = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rec, err := h.Reconcile(ctx, client, []string{"A", "B", "C"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, rec.Entries, 1)
	_, err = h.Reconcile(context.Background(), nil, []string{"A"})
	require.Error(t, err)
}
