package outbox

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/observe"
	"github.com/paygate-go/paygate/zakat"
)

// prepareRelaySQL builds the relay's statements.
func (o *Outbox) prepareRelaySQL() {
	t := o.table
	// A round's take: the due rows first due, those another relay holds
	// skipped, each claimed with the round's token for the lease (its
	// due_at moved past it, so nobody else takes it meanwhile) and marked
	// sent before any byte of it goes out: a relay killed from here on
	// leaves it to be resent with Resend. was_sent keeps the value before.
	// The rows are found by primary key (= ANY of the locked ordernos), so
	// the plan is the same whatever the table's size and statistics.
	o.takeSQL = `UPDATE ` + t + ` AS t SET claim = $1, due_at = now() + $2::bigint * interval '1 microsecond', attempts = t.attempts + 1, was_sent = t.sent, sent = true
WHERE t.orderno = ANY(ARRAY(SELECT orderno FROM ` + t + ` WHERE state = 'queued' AND due_at <= now() ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED))
RETURNING t.orderno, t.body, t.status, t.was_sent, t.attempts`
	// A round's outcomes, fenced on its token (a relay whose lease lapsed
	// records nothing: the rows are another's). kind is done, dead or
	// retry; a retry past the maximum age is dead, its reason prefixed.
	// Its commit does not wait for the WAL's flush (synchronous_commit off
	// for this statement's transaction alone): a record lost with a crash
	// of PostgreSQL leaves its rows claimed and marked sent, so they come
	// back after the lease and are resent with Resend, which the
	// service's orderno uniqueness makes safe.
	o.recordSQL = `UPDATE ` + t + ` AS t SET
	state = CASE WHEN u.kind = 'done' THEN 'done' WHEN u.kind = 'dead' OR t.enqueued_at + $2::bigint * interval '1 microsecond' <= now() THEN 'dead' ELSE 'queued' END,
	reason = CASE WHEN u.kind = 'done' THEN NULL WHEN u.kind = 'retry' AND t.enqueued_at + $2::bigint * interval '1 microsecond' <= now() THEN $3 || u.reason ELSE u.reason END,
	due_at = now() + u.delay_us * interval '1 microsecond',
	sent = u.sent, claim = NULL
FROM unnest($4::text[], $5::text[], $6::bigint[], $7::text[], $8::boolean[]) AS u(orderno, kind, delay_us, reason, sent),
	(SELECT set_config('synchronous_commit', 'off', true)) AS async
WHERE t.orderno = u.orderno AND t.claim = $1`
	o.statsSQL = `SELECT (SELECT count(*) FROM ` + t + ` WHERE state = 'queued'),
	(SELECT coalesce(extract(epoch FROM now() - min(enqueued_at)), 0)::float8 FROM ` + t + ` WHERE state = 'queued'),
	(SELECT count(*) FROM ` + t + ` WHERE state = 'dead')`
}

// taken is a row a round took.
type taken struct {
	orderNo, body, status string
	wasSent               bool // an earlier attempt may have reached the service
	attempts              int  // this one included
}

// record is what a round writes of one row.
type record struct {
	kind    string // done, dead or retry
	delay   time.Duration
	reason  string
	sent    bool
	outcome zakat.SendStatus
}

// Run relays until ctx ends, then returns ctx's error; run it on every
// replica (rows are shared out with FOR UPDATE SKIP LOCKED). It runs
// WithWorkers rounds at once; each takes up to WithBatchSize due rows,
// sends them (Send for those never sent, Resend for those an attempt may
// have reached) and records each transaction's outcome: accepted is done;
// rejected or invalid is dead with its reason (logged at warning);
// unconfirmed or not sent, or a refusal of the request itself (401, 403,
// 404, 405: the password or the URL, logged at error), is retried with
// backoff until WithMaxAge, then dead. Failures of the database are logged
// and retried; nothing else stops it. It purges done
// rows past the retention about once an hour.
func (o *Outbox) Run(ctx context.Context) error {
	if o.sender == nil {
		return ErrNoSender
	}
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.work(ctx, w == 0)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// work is one of Run's workers: rounds until ctx ends, waiting the poll
// interval when none is due. The first also purges and reports the
// depth.
func (o *Outbox) work(ctx context.Context, first bool) {
	nextPurge := time.Now()
	for {
		n, err := o.RelayOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			o.logger.ErrorContext(ctx, "paygate outbox: relay round failed; retrying", "table", o.table, "error", err)
		}
		if first && !time.Now().Before(nextPurge) {
			if _, err := o.Purge(ctx); err != nil && ctx.Err() == nil {
				o.logger.ErrorContext(ctx, "paygate outbox: purge failed", "table", o.table, "error", err)
			}
			nextPurge = time.Now().Add(time.Hour)
		}
		if n > 0 && err == nil {
			continue
		}
		if first {
			o.observeStats(ctx)
		}
		t := time.NewTimer(o.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// RelayOnce is one round of Run: it takes due rows, sends them and
// records their outcomes, and returns how many it took (0: none due).
// The send is bounded by the lease; the outcomes are recorded even when
// ctx ends meanwhile.
func (o *Outbox) RelayOnce(ctx context.Context) (int, error) {
	if o.sender == nil {
		return 0, ErrNoSender
	}
	token := newToken()
	rows, err := o.take(ctx, token)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	sendCtx, cancel := context.WithTimeout(ctx, o.lease-o.lease/5)
	recs := o.send(sendCtx, rows)
	cancel()
	if ctx.Err() != nil { // shutting down: what was not sent is due at once, for another replica
		for i := range recs {
			if recs[i].kind == "retry" {
				recs[i].delay = 0
			}
		}
	}
	recCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err = o.record(recCtx, token, rows, recs)
	o.observeRound(ctx, rows, recs, err)
	if err != nil {
		return len(rows), fmt.Errorf("outbox: recording a round's outcomes (the rows come back after the lease): %w", err)
	}
	o.logRound(ctx, rows, recs) // once recorded: a dead row logged is a dead row
	return len(rows), nil
}

// take claims up to the batch size of due rows with token.
func (o *Outbox) take(ctx context.Context, token string) ([]taken, error) {
	q, err := o.db.QueryContext(ctx, o.takeSQL, token, us(o.lease), o.batchSize)
	if err != nil {
		return nil, fmt.Errorf("outbox: taking due rows: %w", err)
	}
	defer q.Close()
	var out []taken
	for q.Next() {
		var r taken
		if err := q.Scan(&r.orderNo, &r.body, &r.status, &r.wasSent, &r.attempts); err != nil {
			return nil, fmt.Errorf("outbox: taking due rows: %w", err)
		}
		out = append(out, r)
	}
	if err := q.Err(); err != nil {
		return nil, fmt.Errorf("outbox: taking due rows: %w", err)
	}
	return out, nil
}

// send sends the rows, fresh ones with Send and the others with Resend,
// and returns what to record of each, by position.
func (o *Outbox) send(ctx context.Context, rows []taken) []record {
	recs := make([]record, len(rows))
	var groups [2][]int // positions of the fresh rows, of the maybe-sent ones
	var txs [2][]zakat.Transaction
	for i, r := range rows {
		var tx zakat.Transaction
		if err := json.Unmarshal([]byte(r.body), &tx); err != nil {
			recs[i] = record{kind: "dead", reason: "the stored transaction cannot be read: " + err.Error(), sent: r.wasSent, outcome: zakat.SendInvalid}
			continue
		}
		tx.Status = zakat.Status(r.status)
		g := 0
		if r.wasSent {
			g = 1
		}
		groups[g], txs[g] = append(groups[g], i), append(txs[g], tx)
	}
	for g, send := range [2]func(context.Context, []zakat.Transaction) (*zakat.SendReport, error){o.sender.Send, o.sender.Resend} {
		if len(txs[g]) == 0 {
			continue
		}
		report, _ := send(ctx, txs[g]) // the report says what became of each
		for k, out := range report.Outcomes() {
			i := groups[g][k]
			recs[i] = o.recordOf(rows[i], out)
		}
	}
	return recs
}

// recordOf is what to record of row r given its outcome.
func (o *Outbox) recordOf(r taken, out zakat.Outcome) record {
	rec := record{sent: true, outcome: out.Status}
	reason := ""
	if out.Err != nil {
		reason = out.Err.Error()
	}
	switch out.Status {
	case zakat.SendAccepted:
		rec.kind = "done"
	case zakat.SendRejected: // proven not stored by this send: maybe stored only as before
		rec.sent = r.wasSent
		if requestRefused(out.Err) {
			rec.kind, rec.reason = "retry", "the service refused the request, not this transaction (check the webhook URL and password): "+reason
			rec.delay = backoff(o.firstBackoff, o.maxBackoff, r.attempts, rand.Float64)
			break
		}
		var refusal *zakat.Refusal
		if errors.As(out.Err, &refusal) {
			reason = refusal.Reason() // the index is the relay's, not the bank's
		}
		rec.kind, rec.reason = "dead", "rejected by the service: "+reason
	case zakat.SendInvalid: // never posted: it may be stored only if an earlier attempt was
		rec.kind, rec.reason, rec.sent = "dead", "invalid: "+reason, r.wasSent
	case zakat.SendUnconfirmed:
		if !r.wasSent && errors.Is(out.Err, zakat.ErrHeldAtFirstSend) {
			// The service held the orderno before the outbox ever sent it
			// (docs/assumptions.md A-webhook-duplicates): maybe another
			// transaction's, which a Resend would record as this one.
			rec.kind, rec.reason = "dead", "held by the service before the outbox sent it: check that the service holds this transaction, then Retry (sent again as a resend) or Drop; "+reason
			break
		}
		rec.kind, rec.reason = "retry", "unconfirmed: "+reason
		rec.delay = backoff(o.firstBackoff, o.maxBackoff, r.attempts, rand.Float64)
	case zakat.SendNotSent:
		rec.kind, rec.reason, rec.sent = "retry", "not sent: "+reason, r.wasSent
		rec.delay = backoff(o.firstBackoff, o.maxBackoff, r.attempts, rand.Float64)
	default: // anything unknown: may be stored
		rec.kind, rec.reason = "retry", "unconfirmed: "+reason
		rec.delay = backoff(o.firstBackoff, o.maxBackoff, r.attempts, rand.Float64)
	}
	return rec
}

// requestRefused reports whether a rejection is of the request rather than
// of the transaction: a 401 or 403 (the password), a 404 or 405 (the
// URL), with no refusal naming the transaction. A relay misconfigured, or
// a password rotated, retries and logs rather than makes every
// transaction dead.
func requestRefused(err error) bool {
	var refusal *zakat.Refusal
	var ae *paygate.APIError
	if errors.As(err, &refusal) || !errors.As(err, &ae) {
		return false
	}
	switch ae.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// logRound logs what an operator must see of a round: each transaction
// made dead, at warning, and a refusal of the request itself, at error.
func (o *Outbox) logRound(ctx context.Context, rows []taken, recs []record) {
	refused := ""
	for i, rec := range recs {
		switch {
		case rec.kind == "dead":
			o.logger.WarnContext(ctx, "paygate outbox: transaction dead", "table", o.table, "orderno", rows[i].orderNo, "reason", rec.reason)
		case rec.kind == "retry" && rec.outcome == zakat.SendRejected:
			refused = rec.reason
		}
	}
	if refused != "" {
		o.logger.ErrorContext(ctx, "paygate outbox: the service refused the relay's requests; retrying", "table", o.table, "reason", refused)
	}
}

// record writes a round's outcomes, fenced on its token.
func (o *Outbox) record(ctx context.Context, token string, rows []taken, recs []record) error {
	n := len(rows)
	nos, kinds, reasons := make([]string, n), make([]string, n), make([]string, n)
	delays, sent := make([]int64, n), make([]bool, n)
	for i, r := range rows {
		nos[i], kinds[i], reasons[i], delays[i], sent[i] = r.orderNo, recs[i].kind, recs[i].reason, us(recs[i].delay), recs[i].sent
	}
	agedOut := fmt.Sprintf("given up: still not accepted %v after its enqueue (WithMaxAge); it may be stored if an attempt reached the service (Retry resends it safely); last attempt: ", o.maxAge)
	_, err := o.db.ExecContext(ctx, o.recordSQL, token, us(o.maxAge), agedOut, nos, kinds, delays, reasons, sent)
	return err
}

// backoff is the wait before the retry that follows attempt n (from 1):
// first doubled n-1 times, at most most, then drawn between half and all
// of it with r (a number in [0, 1)).
func backoff(first, most time.Duration, n int, r func() float64) time.Duration {
	d := first
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	d = min(d, most)
	return d/2 + time.Duration(r()*float64(d-d/2))
}

// newToken is a round's claim token.
func newToken() string {
	b := make([]byte, 16)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

// observeRound reports a round to the observer.
func (o *Outbox) observeRound(ctx context.Context, rows []taken, recs []record, err error) {
	if o.observer == nil {
		return
	}
	e := observe.OutboxRound{Taken: len(rows), Failed: err != nil}
	for _, r := range recs {
		switch r.kind {
		case "done":
			e.Accepted++
		case "dead":
			e.Dead++
		default:
			e.Retried++
		}
	}
	o.observer.OutboxRound(ctx, e)
}

// observeStats reports the table's depth to the observer.
func (o *Outbox) observeStats(ctx context.Context) {
	if o.observer == nil {
		return
	}
	s, err := o.Stats(ctx)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			o.logger.ErrorContext(ctx, "paygate outbox: reading the depth failed", "table", o.table, "error", err)
		}
		return
	}
	o.observer.OutboxStats(ctx, observe.OutboxStats{Depth: s.Depth, OldestAge: s.OldestAge, Dead: s.Dead})
}
