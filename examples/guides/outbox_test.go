package guides

// The bank's durable outbox: README.md's bank section and the top of
// docs/bank-sender.md.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/zakat"
	"github.com/paygate-go/paygate/zakat/outbox"
)

// startOutbox is the outbox's set-up, once per replica: the table made
// and the relay running until ctx ends.
func startOutbox(ctx context.Context, db *sql.DB) (*outbox.Outbox, error) {
	// code: outbox-setup
	sender, err := paygate.NewWebhookSenderFromEnv() // PAYGATE_WEBHOOK_URL, _PASSWORD, _AGENCIES
	if err != nil {
		return nil, err
	}
	box, err := outbox.New(db, sender) // db: the bank's own *sql.DB (pgx's stdlib driver)
	if err != nil {
		return nil, err
	}
	if err := box.Migrate(ctx); err != nil { // every replica may run it at once
		return nil, err
	}
	go box.Run(ctx) // on every replica: sends what is due, records each outcome, retries for days
	// end: outbox-setup
	return box, nil
}

// recordPayment is the bank's own transaction: its record of the payment
// and the webhook's transaction, both committed or neither.
func recordPayment(ctx context.Context, db *sql.DB, box *outbox.Outbox, tx zakat.Transaction) error {
	// code: outbox-enqueue
	dbtx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer dbtx.Rollback() // a no-op once committed
	if _, err := dbtx.ExecContext(ctx, `INSERT INTO zakat_payments (orderno, amount_sen) VALUES ($1, $2)`,
		tx.OrderNo, int64(tx.Amount)); err != nil {
		return err
	}
	// Validated first: an invalid transaction is an error naming its field
	// and rule, and nothing is enqueued. The same orderno with the same
	// content is one transaction; with other content, outbox.ErrConflict.
	if err := box.Enqueue(ctx, dbtx, tx); err != nil {
		return err
	}
	return dbtx.Commit() // sent by the relay once committed; never if rolled back
	// end: outbox-enqueue
}

// operate is an operator's look at the outbox: what waits, the dead and
// why, a retry after a fix.
func operate(ctx context.Context, box *outbox.Outbox, out io.Writer) error {
	// code: outbox-operate
	s, err := box.Stats(ctx) // or: paygate outbox status (PAYGATE_OUTBOX_DSN)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "queued %d, oldest %v, dead %d\n", s.Depth, s.OldestAge.Round(time.Second), s.Dead)
	dead, err := box.Dead(ctx, 100) // paygate outbox dead
	if err != nil {
		return err
	}
	for _, d := range dead { // refused by the service (its rule, field and words), or too old
		fmt.Fprintln(out, d.OrderNo, d.Reason)
	}
	// After a fix: paygate outbox retry ORDERNO... (or -all); paygate outbox drop ORDERNO...
	_, err = box.RetryAll(ctx)
	// end: outbox-operate
	return err
}

// The guide's outbox on the sandbox: a payment recorded and enqueued in
// one transaction is stored once; one rolled back is never sent; an
// invalid one is refused at enqueue; the operator sees an empty outbox.
func TestOutboxGuide(t *testing.T) {
	db := fleetDB(t)
	_, err := db.Exec(`CREATE TABLE zakat_payments (orderno text PRIMARY KEY, amount_sen bigint NOT NULL)`)
	require.NoError(t, err)
	sb := sandboxEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	box, err := startOutbox(ctx, db)
	require.NoError(t, err)
	myt := time.FixedZone("MYT", 8*3600)
	tx := zakat.Transaction{Agency: zakat.AgencyLZS, OrderNo: "ZK-2001", Amount: 12000, Name: "Ali", Email: "ali@example.com",
		Time: time.Date(2026, 11, 22, 10, 30, 0, 0, myt), Status: zakat.StatusSuccess,
		Data: zakat.Data{Type: zakat.ZakatPendapatan, State: zakat.Selangor, Year: "2026"}}
	require.NoError(t, recordPayment(ctx, db, box, tx))
	again, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, box.Enqueue(ctx, again, tx), "the same transaction again is the same one")
	require.NoError(t, again.Commit())
	bad := tx
	bad.OrderNo, bad.Email = "ZK-2002", "not-an-address"
	err = recordPayment(ctx, db, box, bad)
	var ve *zakat.ValidationError
	require.ErrorAs(t, err, &ve)
	require.ErrorContains(t, err, "/transactions/0/email")
	require.Eventually(t, func() bool { return len(sb.Transactions()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		s, err := box.Stats(ctx)
		return err == nil && s.Depth == 0
	}, 10*time.Second, 10*time.Millisecond)
	var out strings.Builder
	require.NoError(t, operate(ctx, box, &out))
	require.Equal(t, "queued 0, oldest 0s, dead 0\n", out.String())
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM zakat_payments`).Scan(&n))
	require.Equal(t, 1, n, "the invalid one rolled back with the bank's record")
}
