package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// switchedFaults is a WebhookFaults Rand that draws the fault (0) while on
// is set and no fault (0.999) otherwise.
func switchedFaults(on *atomic.Bool) func() float64 {
	return func() float64 {
		if on.Load() {
			return 0
		}
		return 0.999
	}
}

// Each outcome of a send is recorded as the issue says: accepted done;
// refused by the service dead with the service's words; unconfirmed
// retried, then done once the service answers.
func TestRelayRecordsOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		faults     gatewaytest.WebhookFaults
		dups       gatewaytest.DuplicateAnswer
		refuse     bool // the sandbox takes other agency codes than the sender checks
		wantState  string
		wantReason string
		wantStored bool
	}{
		{name: "accepted", wantState: stateDone, wantStored: true},
		{name: "refused by the service", refuse: true, wantState: stateDead, wantReason: "rejected by the service: ", wantStored: false},
		{name: "answer lost, then stored once", faults: gatewaytest.WebhookFaults{DropAfterStore: 0.5}, wantState: stateDone, wantStored: true},
		{name: "no answer, nothing stored", faults: gatewaytest.WebhookFaults{DropBeforeStore: 0.5}, wantState: stateDone, wantStored: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var on atomic.Bool
			on.Store(true)
			tc.faults.Rand = switchedFaults(&on)
			opts := []gatewaytest.Option{gatewaytest.WithWebhookFaults(tc.faults), gatewaytest.WithWebhookDuplicates(tc.dups)}
			if tc.refuse {
				v, err := zakat.NewValidator(zakat.ADBAgencies()...)
				require.NoError(t, err)
				opts = append(opts, gatewaytest.WithWebhookValidator(v))
			}
			srv := sandbox(t, opts...)
			db := openDB(t, testDSN(t))
			sender, err := paygate.NewWebhookSender(srv.WebhookURL(), srv.WebhookPassword, paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
			require.NoError(t, err)
			o, err := New(db, sender, append([]Option{WithTable(testTable(t, db))}, fastRetries...)...)
			require.NoError(t, err)
			require.NoError(t, o.Migrate(context.Background()))
			require.NoError(t, enqueue(t, o, db, validTxs("O", 3)...))

			n, err := o.RelayOnce(context.Background()) // the fault, if any
			require.NoError(t, err)
			require.Equal(t, 3, n)
			on.Store(false)
			time.Sleep(10 * time.Millisecond) // past the backoff
			_, err = o.RelayOnce(context.Background())
			require.NoError(t, err)

			var state, reason string
			var sent bool
			require.NoError(t, db.QueryRow(`SELECT state, coalesce(reason, ''), sent FROM `+o.table+` WHERE orderno = 'O-000001'`).Scan(&state, &reason, &sent))
			require.Equal(t, tc.wantState, state)
			require.True(t, strings.HasPrefix(reason, tc.wantReason), reason)
			if tc.wantReason == "" {
				require.Empty(t, reason)
			}
			require.Equal(t, tc.wantStored, len(srv.Transactions()) == 3)
			if tc.refuse {
				dead, err := o.Dead(context.Background(), 0)
				require.NoError(t, err)
				require.Len(t, dead, 3)
				require.Contains(t, dead[0].Reason, "agency", "the service's words")
				require.Contains(t, dead[0].Reason, "ADBLZS, ADBPPZ, ADB", "the service's words")
			}
		})
	}
}

// An orderno the service held before the outbox ever sent it (another
// transaction's, perhaps) is dead for an operator, maybe stored, never
// recorded done on the strength of a resend; Retry, once the operator has
// checked, resends it and records it stored.
func TestRelayOrdernoHeldBeforeItsFirstSend(t *testing.T) {
	for _, dup := range []gatewaytest.DuplicateAnswer{gatewaytest.DuplicateConflict, gatewaytest.DuplicateUnprocessable} {
		t.Run(fmt.Sprint(dup), func(t *testing.T) {
			srv := sandbox(t, gatewaytest.WithWebhookDuplicates(dup))
			o, db := newTestOutbox(t, srv, fastRetries...)
			txs := validTxs("H", 3)
			other := txs[1]
			other.Name = "Someone Else"
			sender, err := srv.WebhookSender()
			require.NoError(t, err)
			_, err = sender.Send(context.Background(), []zakat.Transaction{other}) // outside the outbox
			require.NoError(t, err)

			require.NoError(t, enqueue(t, o, db, txs...))
			require.Equal(t, Stats{Dead: 1}, drain(t, o, 5))
			dead, err := o.Dead(context.Background(), 0)
			require.NoError(t, err)
			require.Len(t, dead, 1)
			require.Equal(t, other.OrderNo, dead[0].OrderNo)
			require.Contains(t, dead[0].Reason, "held by the service before the outbox sent it")
			require.True(t, dead[0].MaybeStored)
			held := dead[0].Transaction // what the outbox holds, to compare with the service's record
			require.True(t, held.Time.Equal(txs[1].Time))
			held.Time = txs[1].Time
			require.Equal(t, txs[1], held)
			st := states(t, o)
			require.Equal(t, stateDone, st[txs[0].OrderNo])
			require.Equal(t, stateDone, st[txs[2].OrderNo])

			n, err := o.Retry(context.Background(), other.OrderNo) // the operator checked
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Equal(t, Stats{}, drain(t, o, 5))
			require.Equal(t, stateDone, states(t, o)[other.OrderNo])
		})
	}
}

// A refusal of the request itself (the password, the URL) is not the
// transactions' fault: they stay queued, retried with backoff, never dead
// and never marked maybe stored; the round is logged at error.
func TestRelayRequestRefusedIsRetried(t *testing.T) {
	srv := sandbox(t)
	for _, tc := range []struct{ name, url, password string }{
		{name: "wrong password (401)", url: srv.WebhookURL(), password: "not-the-password"},
		{name: "wrong path (404)", url: srv.URL + "/api/nowhere/webhook", password: srv.WebhookPassword},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openDB(t, testDSN(t))
			sender, err := paygate.NewWebhookSender(tc.url, tc.password, paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
			require.NoError(t, err)
			var logs strings.Builder
			o, err := New(db, sender, append([]Option{WithTable(testTable(t, db)), WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, fastRetries...)...)
			require.NoError(t, err)
			require.NoError(t, o.Migrate(context.Background()))
			require.NoError(t, enqueue(t, o, db, validTxs("Q", 3)...))
			n, err := o.RelayOnce(context.Background())
			require.NoError(t, err)
			require.Equal(t, 3, n)
			s, err := o.Stats(context.Background())
			require.NoError(t, err)
			require.Equal(t, 3, s.Depth)
			require.Zero(t, s.Dead)
			var sent bool
			var reason string
			require.NoError(t, db.QueryRow(`SELECT sent, coalesce(reason, '') FROM `+o.table+` WHERE orderno = 'Q-000000'`).Scan(&sent, &reason))
			require.False(t, sent, "refused: not stored")
			require.Contains(t, reason, "refused the request, not this transaction")
			require.Contains(t, logs.String(), "level=ERROR")
			require.Empty(t, srv.Transactions())
		})
	}
}

// A refusal rejects only the transaction it names, or the one splitting
// isolates when it names none: that one is dead with the service's
// reason, the others of its request are done and stored.
func TestRelayIsolatesTheRefused(t *testing.T) {
	for _, tc := range []struct {
		name         string
		unattributed bool
	}{{name: "named by its pointer"}, {name: "named by none, split", unattributed: true}} {
		t.Run(tc.name, func(t *testing.T) {
			txs := validTxs("R", 10)
			bad := txs[6].OrderNo
			srv := sandbox(t, gatewaytest.WithWebhookRefusal(gatewaytest.WebhookRefusal{
				Refuse:       func(tx zakat.Transaction) bool { return tx.OrderNo == bad },
				Unattributed: tc.unattributed,
			}))
			o, db := newTestOutbox(t, srv, fastRetries...)
			require.NoError(t, enqueue(t, o, db, txs...))
			require.Equal(t, Stats{Dead: 1}, drain(t, o, 5))
			dead, err := o.Dead(context.Background(), 0)
			require.NoError(t, err)
			require.Len(t, dead, 1)
			require.Equal(t, bad, dead[0].OrderNo)
			require.Contains(t, dead[0].Reason, "refused")
			require.False(t, dead[0].MaybeStored, "a refusal proves it not stored")
			require.NotContains(t, dead[0].Reason, "transaction 6", "the relay's index means nothing to an operator")
			st := states(t, o)
			stored := srv.Transactions()
			require.Len(t, stored, 9)
			for _, tx := range stored {
				require.NotEqual(t, bad, tx.OrderNo)
				require.Equal(t, stateDone, st[tx.OrderNo], tx.OrderNo)
			}
		})
	}
}

// The resend case of issue 41: an answer lost after the service stored
// the batch, then 409 or 422 to the resend: every transaction is done,
// none dead. It rests on Resend's truth (an orderno refused as already
// stored is accepted).
func TestRelayResendAfterLostAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		dups gatewaytest.DuplicateAnswer
	}{{"409", gatewaytest.DuplicateConflict}, {"422", gatewaytest.DuplicateUnprocessable}} {
		t.Run(tc.name, func(t *testing.T) {
			var on atomic.Bool
			on.Store(true)
			srv := sandbox(t, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{DropAfterStore: 0.5, Rand: switchedFaults(&on)}),
				gatewaytest.WithWebhookDuplicates(tc.dups))
			o, db := newTestOutbox(t, srv, fastRetries...)
			require.NoError(t, enqueue(t, o, db, validTxs("L", 5)...))
			_, err := o.RelayOnce(context.Background())
			require.NoError(t, err)
			require.Len(t, srv.Transactions(), 5, "stored, answer lost")
			on.Store(false)
			require.Equal(t, Stats{}, drain(t, o, 10))
			for no, st := range states(t, o) {
				require.Equal(t, stateDone, st, no)
			}
		})
	}
}

// A relay killed after its send (the rows taken, never recorded): once
// the lease lapses another round resends them with Resend and the service
// stores each once; the dead relay's late record changes nothing.
func TestRelayKilledMidSend(t *testing.T) {
	srv := sandbox(t)
	o, db := newTestOutbox(t, srv, WithLease(200*time.Millisecond), WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, enqueue(t, o, db, validTxs("K", 4)...))
	ctx := context.Background()
	rows, err := o.take(ctx, "dead-relay")
	require.NoError(t, err)
	recs := o.send(ctx, rows) // stored at the service; the relay dies before recording
	n, err := o.RelayOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "held by the lease")
	time.Sleep(250 * time.Millisecond)
	rows2, err := o.take(ctx, "next-relay")
	require.NoError(t, err)
	require.Len(t, rows2, 4)
	for _, r := range rows2 {
		require.True(t, r.wasSent, "resent with Resend")
		require.Equal(t, 2, r.attempts)
	}
	require.NoError(t, o.record(ctx, "next-relay", rows2, o.send(ctx, rows2)))
	for i := range recs {
		recs[i] = record{kind: "dead", reason: "a late record", sent: true}
	}
	require.NoError(t, o.record(ctx, "dead-relay", rows, recs), "fenced: nothing written")
	require.Len(t, srv.Transactions(), 4)
	require.Equal(t, 8, srv.WebhookReceived())
	for no, st := range states(t, o) {
		require.Equal(t, stateDone, st, no)
	}
}

// Past the maximum age an unconfirmed transaction is dead, its reason
// naming WithMaxAge; an operator's Retry resends it (with Resend), and
// Drop deletes only dead rows.
func TestMaxAgeRetryDrop(t *testing.T) {
	var on atomic.Bool
	on.Store(true)
	srv := sandbox(t, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{DropBeforeStore: 0.5, Rand: switchedFaults(&on)}))
	o, db := newTestOutbox(t, srv, append(fastRetries, WithMaxAge(time.Microsecond))...)
	require.NoError(t, enqueue(t, o, db, validTxs("M", 3)...))
	ctx := context.Background()
	_, err := o.RelayOnce(ctx)
	require.NoError(t, err)
	s, err := o.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, Stats{Dead: 3}, s)
	dead, err := o.Dead(ctx, 2)
	require.NoError(t, err)
	require.Len(t, dead, 2)
	require.Contains(t, dead[0].Reason, "(WithMaxAge)")
	require.Contains(t, dead[0].Reason, "last attempt: unconfirmed: ")
	require.True(t, dead[0].MaybeStored)
	require.Equal(t, 1, dead[0].Attempts)

	on.Store(false)
	n, err := o.Retry(ctx, "M-000000", "M-000001", "nope")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	_, err = o.RelayOnce(ctx)
	require.NoError(t, err)
	n, err = o.Drop(ctx, "M-000000", "M-000002")
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the dead one")
	require.Equal(t, map[string]string{"M-000000": stateDone, "M-000001": stateDone}, states(t, o))
	require.NoError(t, enqueue(t, o, db, validTx("M", 2)), "a dropped orderno may be enqueued again")
	n, err = o.RetryAll(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

// A pending transaction not yet sent takes its final status; once it may
// have reached the service, a change is an error naming the assumption
// (docs/assumptions.md A-webhook-status-change); a final status never
// changes. The service stores only the status the outbox sent, under each
// reading of a changed status the sandbox offers.
func TestStatusChange(t *testing.T) {
	with := func(s zakat.Status) zakat.Transaction {
		tx := validTx("C", 1)
		tx.Status = s
		return tx
	}
	for _, tc := range []struct {
		name       string
		first      zakat.Status
		sendFirst  bool
		then       zakat.Status
		wantErr    bool
		wantStored zakat.Status
	}{
		{name: "pending then success before sending", first: zakat.StatusPending, then: zakat.StatusSuccess, wantStored: zakat.StatusSuccess},
		{name: "pending then failed before sending", first: zakat.StatusPending, then: zakat.StatusFailed, wantStored: zakat.StatusFailed},
		{name: "pending sent then success", first: zakat.StatusPending, sendFirst: true, then: zakat.StatusSuccess, wantErr: true, wantStored: zakat.StatusPending},
		{name: "success then failed before sending", first: zakat.StatusSuccess, then: zakat.StatusFailed, wantErr: true, wantStored: zakat.StatusSuccess},
		{name: "success then pending", first: zakat.StatusSuccess, sendFirst: true, then: zakat.StatusPending, wantErr: true, wantStored: zakat.StatusSuccess},
		{name: "pending twice", first: zakat.StatusPending, then: zakat.StatusPending, wantStored: zakat.StatusPending},
	} {
		for _, reading := range []gatewaytest.StatusChange{gatewaytest.StatusChangeAsDuplicate, gatewaytest.StatusChangeUpdated, gatewaytest.StatusChangeIgnored} {
			t.Run(fmt.Sprintf("%s/reading %d", tc.name, reading), func(t *testing.T) {
				srv := sandbox(t, gatewaytest.WithWebhookStatusChange(reading), gatewaytest.WithWebhookDuplicates(gatewaytest.DuplicateUnprocessable))
				o, db := newTestOutbox(t, srv, fastRetries...)
				require.NoError(t, enqueue(t, o, db, with(tc.first)))
				if tc.sendFirst {
					drain(t, o, 5)
				}
				err := enqueue(t, o, db, with(tc.then))
				if tc.wantErr {
					var ce *ConflictError
					require.ErrorAs(t, err, &ce)
					require.True(t, ce.StatusChange)
					require.Equal(t, tc.first, ce.From)
					require.ErrorContains(t, err, "A-webhook-status-change")
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, Stats{}, drain(t, o, 5))
				stored := srv.Transactions()
				require.Len(t, stored, 1)
				require.Equal(t, tc.wantStored, stored[0].Status)
			})
		}
	}
}

// EnqueuePgx, on the bank's pgx transaction, keeps Enqueue's rules.
func TestEnqueuePgx(t *testing.T) {
	srv := sandbox(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testDSN(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	sender, err := srv.WebhookSender()
	require.NoError(t, err)
	db := openDB(t, testDSN(t))
	o, err := NewPgx(pool, sender, append([]Option{WithTable(testTable(t, db))}, fastRetries...)...)
	require.NoError(t, err)
	require.NoError(t, o.Migrate(ctx))
	changed := validTx("P", 0)
	changed.Name = "Other"
	for _, batch := range [][]zakat.Transaction{validTxs("P", 3), validTxs("P", 4), {changed}} {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		err = o.EnqueuePgx(ctx, tx, batch...)
		if errors.Is(err, ErrConflict) {
			require.ErrorContains(t, err, `"P-000000"`)
			require.NoError(t, tx.Rollback(ctx))
			continue
		}
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
	}
	require.Equal(t, Stats{}, drain(t, o, 5))
	require.Len(t, srv.Transactions(), 4)
}

// The retry waits double from the first to the most, each drawn between
// half and all of its step.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{n: 1, r: 0, want: 500 * time.Millisecond},
		{n: 1, r: 0.999999, want: time.Second - time.Microsecond},
		{n: 2, r: 0, want: time.Second},
		{n: 4, r: 0.5, want: 6 * time.Second},
		{n: 10, r: 0, want: 5 * time.Second},
		{n: 1000, r: 0.999999, want: 10*time.Second - 5*time.Microsecond},
	} {
		got := backoff(time.Second, 10*time.Second, tc.n, func() float64 { return tc.r })
		require.InDelta(t, float64(tc.want), float64(got), float64(10*time.Microsecond), "attempt %d", tc.n)
	}
}

// A transaction not sent (nothing reached the service) is retried with
// Send, as before: its sent mark is restored; so a pending one may still
// take its final status.
func TestRelayNotSent(t *testing.T) {
	srv := sandbox(t)
	db := openDB(t, testDSN(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/api/bank/webhook"
	require.NoError(t, ln.Close()) // connections refused: nothing sent
	sender, err := paygate.NewWebhookSender(dead, srv.WebhookPassword, paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	o, err := New(db, sender, append([]Option{WithTable(testTable(t, db))}, fastRetries...)...)
	require.NoError(t, err)
	require.NoError(t, o.Migrate(context.Background()))
	pending := validTx("N", 1)
	pending.Status = zakat.StatusPending
	require.NoError(t, enqueue(t, o, db, pending))
	_, err = o.RelayOnce(context.Background())
	require.NoError(t, err)
	var state, reason string
	var sent bool
	var attempts int
	require.NoError(t, db.QueryRow(`SELECT state, reason, sent, attempts FROM `+o.table).Scan(&state, &reason, &sent, &attempts))
	require.Equal(t, stateQueued, state)
	require.True(t, strings.HasPrefix(reason, "not sent: "), reason)
	require.False(t, sent)
	require.Equal(t, 1, attempts)
	final := pending
	final.Status = zakat.StatusSuccess
	require.NoError(t, enqueue(t, o, db, final), "never reached the service: the final status supersedes")
}

// A pending transaction whose first attempt may have reached the service
// (the answer lost) keeps its status: a final one is an error at enqueue
// (docs/assumptions.md A-webhook-status-change).
func TestStatusChangeAfterUnconfirmed(t *testing.T) {
	var on atomic.Bool
	on.Store(true)
	srv := sandbox(t, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{DropAfterStore: 0.5, Rand: switchedFaults(&on)}))
	o, db := newTestOutbox(t, srv, WithBackoff(time.Hour, time.Hour))
	pending := validTx("U", 1)
	pending.Status = zakat.StatusPending
	require.NoError(t, enqueue(t, o, db, pending))
	_, err := o.RelayOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, map[string]string{"U-000001": stateQueued}, states(t, o), "unconfirmed, to be retried")
	final := pending
	final.Status = zakat.StatusFailed
	require.ErrorIs(t, enqueue(t, o, db, final), ErrConflict)
}

// The relay takes the rows first due first.
func TestRelayTakesOldestFirst(t *testing.T) {
	srv := sandbox(t)
	o, db := newTestOutbox(t, srv, WithBatchSize(1))
	for i := range 3 {
		require.NoError(t, enqueue(t, o, db, validTx("F", i))) // one transaction each: later due_at
	}
	for i := range 3 {
		_, err := o.RelayOnce(context.Background())
		require.NoError(t, err)
		require.Contains(t, storedNos(srv), validTx("F", i).OrderNo)
		require.Len(t, srv.Transactions(), i+1)
	}
}

// A relay stopped mid-send (its context ended) leaves what it could not
// confirm due at once for another replica, not after the backoff.
func TestRelayStoppedMidSend(t *testing.T) {
	srv := sandbox(t, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{Latency: time.Second}))
	o, db := newTestOutbox(t, srv, WithBackoff(time.Hour, time.Hour))
	require.NoError(t, enqueue(t, o, db, validTxs("Q", 2)...))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.WebhookRequests() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	n, err := o.RelayOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	var due int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+o.table+` WHERE state = 'queued' AND sent AND due_at <= now()`).Scan(&due))
	require.Equal(t, 2, due)
}

// A round's send ends before its lease does, so that no other relay
// takes a row still in flight: a service slower than the lease leaves
// the rows unconfirmed, to be resent.
func TestRelaySendBoundedByLease(t *testing.T) {
	srv := sandbox(t, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{Latency: time.Second}))
	o, db := newTestOutbox(t, srv, WithLease(200*time.Millisecond), WithBackoff(time.Hour, time.Hour))
	require.NoError(t, enqueue(t, o, db, validTx("B", 1)))
	_, err := o.RelayOnce(context.Background())
	require.NoError(t, err)
	var state, reason string
	require.NoError(t, db.QueryRow(`SELECT state, reason FROM `+o.table).Scan(&state, &reason))
	require.Equal(t, stateQueued, state)
	require.True(t, strings.HasPrefix(reason, "unconfirmed: "), reason)
}
