package outbox

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paygate-go/paygate/zakat"
)

// ErrConflict is matched (errors.Is) by Enqueue's error when an orderno
// is in the outbox already with other content: a *ConflictError says
// which.
var ErrConflict = errors.New("outbox: orderno enqueued before with other content")

// ConflictError is Enqueue's error for a transaction whose orderno the
// outbox holds with other content; nothing of the call was enqueued.
type ConflictError struct {
	// OrderNo is the transaction's orderno.
	OrderNo string
	// StatusChange is set when only the status differs: a pending
	// transaction that may have reached the service, or a final status
	// (docs/assumptions.md A-webhook-status-change).
	StatusChange bool
	// From is the status held, To the status given.
	From, To zakat.Status
	// Fields names the JSON fields whose values differ, when other
	// content than the status does ("amount", "name", ...), in order.
	Fields []string
}

// Error names the orderno and, for a status change, the assumption.
func (e *ConflictError) Error() string {
	if e.StatusChange {
		return fmt.Sprintf("outbox: orderno %q: status %s after %s: a status changes only from pending, before the transaction is sent (docs/assumptions.md A-webhook-status-change)", e.OrderNo, e.To, e.From)
	}
	if len(e.Fields) == 0 {
		return fmt.Sprintf("outbox: orderno %q: enqueued before with other content", e.OrderNo)
	}
	return fmt.Sprintf("outbox: orderno %q: enqueued before with other content (differing: %s)", e.OrderNo, strings.Join(e.Fields, ", "))
}

// differing names the top-level JSON fields whose values differ between
// two bodies the outbox encoded, sorted; nil if either cannot be read.
func differing(held, given string) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal([]byte(held), &a) != nil || json.Unmarshal([]byte(given), &b) != nil {
		return nil
	}
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Is makes the error match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// prepareSQL builds the statements of o's table.
func (o *Outbox) prepareSQL() {
	t := o.table
	// One statement for every row: the arrays unnested. A pending
	// transaction not yet sent is superseded by its final status
	// (docs/assumptions.md A-webhook-status-change); any other orderno
	// already held is left as it is, locked, for existingSQL to compare.
	o.enqueueSQL = `INSERT INTO ` + t + ` AS t (orderno, body, status)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
ON CONFLICT (orderno) DO UPDATE SET status = EXCLUDED.status, due_at = now()
WHERE t.state = 'queued' AND NOT t.sent AND t.status = 'pending' AND EXCLUDED.status <> 'pending' AND t.body = EXCLUDED.body`
	o.existingSQL = `SELECT orderno, body, status FROM ` + t + ` WHERE orderno = ANY($1::text[])`
	o.prepareRelaySQL()
}

// rows are transactions as the table holds them, in three arrays.
type rows struct{ orderNos, bodies, statuses []string }

// encode validates txs with the sender's validator and encodes them.
func (o *Outbox) encode(txs []zakat.Transaction) (rows, error) {
	if err := o.rules.ValidateTransactions(txs); err != nil {
		return rows{}, fmt.Errorf("outbox: enqueue: nothing enqueued: %w", err)
	}
	r := rows{orderNos: make([]string, len(txs)), bodies: make([]string, len(txs)), statuses: make([]string, len(txs))}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, tx := range txs {
		r.orderNos[i], r.statuses[i] = tx.OrderNo, string(tx.Status)
		tx.Status = ""
		buf.Reset()
		if err := enc.Encode(tx); err != nil {
			return rows{}, fmt.Errorf("outbox: enqueue: encoding orderno %q: %w", tx.OrderNo, err)
		}
		r.bodies[i] = string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	return r, nil
}

// Enqueue adds txs to the outbox in the bank's transaction tx, beside the
// bank's own record of them: they are sent once tx commits, and never if
// it rolls back. Each is checked first with the sender's validator; any
// invalid one is an error naming its field and rule (a
// *zakat.ValidationError), and nothing is enqueued. An orderno enqueued
// before with the same content is the same transaction (no error, sent
// once); with other content it is a *ConflictError (ErrConflict), except
// that a pending transaction not yet sent takes its final status
// (docs/assumptions.md A-webhook-status-change). On an error, roll tx back.
func (o *Outbox) Enqueue(ctx context.Context, tx *sql.Tx, txs ...zakat.Transaction) error {
	if tx == nil {
		return errors.New("outbox: enqueue: nil *sql.Tx")
	}
	return o.enqueue(ctx, txs, func(r rows) (int64, error) {
		res, err := tx.ExecContext(ctx, o.enqueueSQL, r.orderNos, r.bodies, r.statuses)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}, func(nos []string) (map[string][2]string, error) {
		q, err := tx.QueryContext(ctx, o.existingSQL, nos)
		if err != nil {
			return nil, err
		}
		defer q.Close()
		return readHeld(q)
	})
}

// EnqueuePgx is Enqueue in the bank's pgx transaction.
func (o *Outbox) EnqueuePgx(ctx context.Context, tx pgx.Tx, txs ...zakat.Transaction) error {
	if tx == nil {
		return errors.New("outbox: enqueue: nil pgx.Tx")
	}
	return o.enqueue(ctx, txs, func(r rows) (int64, error) {
		tag, err := tx.Exec(ctx, o.enqueueSQL, r.orderNos, r.bodies, r.statuses)
		return tag.RowsAffected(), err
	}, func(nos []string) (map[string][2]string, error) {
		q, err := tx.Query(ctx, o.existingSQL, nos)
		if err != nil {
			return nil, err
		}
		defer q.Close()
		return readHeld(q)
	})
}

// readHeld reads the rows of existingSQL, on either driver, by orderno:
// the body and the status held.
func readHeld(q interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}) (map[string][2]string, error) {
	held := map[string][2]string{}
	for q.Next() {
		var no, body, status string
		if err := q.Scan(&no, &body, &status); err != nil {
			return nil, err
		}
		held[no] = [2]string{body, status}
	}
	return held, q.Err()
}

// enqueue is Enqueue on either driver: insert runs the enqueue statement
// and returns the rows it affected; existing reads the rows held for the
// ordernos, when some were not inserted or superseded.
func (o *Outbox) enqueue(ctx context.Context, txs []zakat.Transaction, insert func(rows) (int64, error), existing func([]string) (map[string][2]string, error)) error {
	if o.sender == nil {
		return ErrNoSender
	}
	if len(txs) == 0 {
		return nil
	}
	r, err := o.encode(txs)
	if err != nil {
		return err
	}
	n, err := insert(r)
	if err != nil {
		return fmt.Errorf("outbox: enqueue: %w", err)
	}
	if n == int64(len(txs)) {
		return nil
	}
	held, err := existing(r.orderNos)
	if err != nil {
		return fmt.Errorf("outbox: enqueue: %w", err)
	}
	for i, no := range r.orderNos {
		h := held[no]
		switch {
		case h[0] == r.bodies[i] && h[1] == r.statuses[i]:
		case h[0] == r.bodies[i]:
			return &ConflictError{OrderNo: no, StatusChange: true, From: zakat.Status(h[1]), To: zakat.Status(r.statuses[i])}
		default:
			return &ConflictError{OrderNo: no, Fields: differing(h[0], r.bodies[i])}
		}
	}
	return nil
}
