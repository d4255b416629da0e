package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paygate-go/paygate/zakat"
)

// Stats is the state of the outbox.
type Stats struct {
	// Depth counts the transactions not yet accepted nor dead.
	Depth int
	// OldestAge is the age of the oldest of them (since its enqueue or
	// its operator's Retry); 0 when there is none.
	OldestAge time.Duration
	// Dead counts the dead transactions, left for an operator.
	Dead int
}

// Stats reads the depth, the age of the oldest queued transaction and the
// dead count.
func (o *Outbox) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	var age float64
	if err := o.db.QueryRowContext(ctx, o.statsSQL).Scan(&s.Depth, &age, &s.Dead); err != nil {
		return Stats{}, fmt.Errorf("outbox: stats: %w", err)
	}
	s.OldestAge = time.Duration(age * float64(time.Second))
	return s, nil
}

// DeadTransaction is a dead transaction and why.
type DeadTransaction struct {
	// OrderNo is the transaction's orderno.
	OrderNo string
	// Reason is why it is dead: the service's refusal (its rule, field
	// and words), a validation problem, or the maximum age and the last
	// attempt's error.
	Reason string
	// Attempts counts the sends tried.
	Attempts int
	// MaybeStored is set when an attempt may have reached the service: a
	// Retry resends it with Resend, which cannot store it twice.
	MaybeStored bool
	// EnqueuedAt is when it was enqueued (or last retried); DiedAt when
	// it became dead.
	EnqueuedAt, DiedAt time.Time
	// Transaction is what the outbox holds to send, for an operator to
	// compare with the service's record (a zero value if it cannot be
	// read, which Reason then says).
	Transaction zakat.Transaction
}

// Dead lists up to limit dead transactions (limit < 1: all), oldest
// first.
func (o *Outbox) Dead(ctx context.Context, limit int) ([]DeadTransaction, error) {
	q := `SELECT orderno, coalesce(reason, ''), attempts, sent, enqueued_at, due_at, body, status FROM ` + o.table + ` WHERE state = 'dead' ORDER BY due_at, orderno`
	args := []any{}
	if limit > 0 {
		q += ` LIMIT $1`
		args = append(args, limit)
	}
	rows, err := o.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("outbox: dead: %w", err)
	}
	defer rows.Close()
	var out []DeadTransaction
	for rows.Next() {
		var d DeadTransaction
		var body, status string
		if err := rows.Scan(&d.OrderNo, &d.Reason, &d.Attempts, &d.MaybeStored, &d.EnqueuedAt, &d.DiedAt, &body, &status); err != nil {
			return nil, fmt.Errorf("outbox: dead: %w", err)
		}
		if json.Unmarshal([]byte(body), &d.Transaction) == nil {
			d.Transaction.Status = zakat.Status(status)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: dead: %w", err)
	}
	return out, nil
}

// Retry makes the given dead transactions due now, after an operator's
// fix (of the service's rule, the sender's settings or the network), and
// returns how many it found dead. Their maximum age starts again; one an
// attempt may have reached is resent with Resend.
func (o *Outbox) Retry(ctx context.Context, orderNos ...string) (int, error) {
	return o.exec(ctx, "retry", `UPDATE `+o.table+` SET state = 'queued', due_at = now(), enqueued_at = now(), reason = NULL
WHERE state = 'dead' AND orderno = ANY($1::text[])`, orderNos)
}

// RetryAll is Retry of every dead transaction.
func (o *Outbox) RetryAll(ctx context.Context) (int, error) {
	return o.exec(ctx, "retry", `UPDATE `+o.table+` SET state = 'queued', due_at = now(), enqueued_at = now(), reason = NULL
WHERE state = 'dead'`)
}

// Drop deletes the given dead transactions, which are then never sent,
// and returns how many it deleted; a transaction not dead is left as it
// is. The same orderno may then be enqueued again.
func (o *Outbox) Drop(ctx context.Context, orderNos ...string) (int, error) {
	return o.exec(ctx, "drop", `DELETE FROM `+o.table+` WHERE state = 'dead' AND orderno = ANY($1::text[])`, orderNos)
}

// Purge deletes done transactions older than the retention
// (WithRetention) and returns how many. Run calls it about once an hour.
func (o *Outbox) Purge(ctx context.Context) (int, error) {
	return o.exec(ctx, "purge", `DELETE FROM `+o.table+` WHERE state = 'done' AND due_at <= now() - $1::bigint * interval '1 microsecond'`, us(o.retention))
}

// exec runs one statement and returns the rows it affected.
func (o *Outbox) exec(ctx context.Context, what, query string, args ...any) (int, error) {
	res, err := o.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("outbox: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("outbox: %s: %w", what, err)
	}
	return int(n), nil
}
