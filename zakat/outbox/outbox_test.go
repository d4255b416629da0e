package outbox

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/zakat"
)

// Enqueue refuses an invalid transaction, naming its field and rule, and
// enqueues nothing of the call; a repeat of the same content is one
// transaction; other content under an orderno held is a ConflictError.
func TestEnqueue(t *testing.T) {
	srv := sandbox(t)
	changed := validTx("E", 1)
	changed.Name = "Aminah binti Ali"
	bad := validTx("E", 9)
	bad.Data.ICNo = "123"
	twice := changed
	twice.Email = "aminah@example.com"
	pending := validTx("E", 1)
	pending.Status = zakat.StatusPending
	for _, tc := range []struct {
		name     string
		first    []zakat.Transaction
		then     []zakat.Transaction
		wantErr  string
		conflict bool
		depth    int
	}{
		{name: "fresh", then: validTxs("E", 3), depth: 3},
		{name: "same content twice", first: validTxs("E", 3), then: validTxs("E", 3), depth: 3},
		{name: "overlap", first: validTxs("E", 2), then: validTxs("E", 4), depth: 4},
		{name: "other content", first: validTxs("E", 2), then: []zakat.Transaction{changed}, wantErr: `orderno "E-000001": enqueued before with other content (differing: name)`, conflict: true, depth: 2},
		{name: "two fields other", first: validTxs("E", 2), then: []zakat.Transaction{twice}, wantErr: `(differing: email, name)`, conflict: true, depth: 2},
		{name: "pending then other content with a final status", first: []zakat.Transaction{pending}, then: []zakat.Transaction{changed}, wantErr: `orderno "E-000001": enqueued before with other content`, conflict: true, depth: 1},
		{name: "a new one beside other content", first: validTxs("E", 2), then: []zakat.Transaction{validTx("E", 5), changed}, wantErr: `orderno "E-000001"`, conflict: true, depth: 2},
		{name: "invalid", then: []zakat.Transaction{validTx("E", 1), bad}, wantErr: "/transactions/1/data/zakat_ic_no: must be 12 digits", depth: 0},
		{name: "none", then: nil, depth: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, db := newTestOutbox(t, srv)
			if tc.first != nil {
				require.NoError(t, enqueue(t, o, db, tc.first...))
			}
			err := enqueue(t, o, db, tc.then...)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.wantErr)
				require.Equal(t, tc.conflict, errors.Is(err, ErrConflict))
				var ve *zakat.ValidationError
				require.Equal(t, !tc.conflict, errors.As(err, &ve))
			}
			s, err := o.Stats(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.depth, s.Depth)
		})
	}
}

// A failure of the database at either of Enqueue's statements is its
// error, never taken for a conflict nor for success.
func TestEnqueueDatabaseError(t *testing.T) {
	o, _ := newTestOutbox(t, sandbox(t))
	boom := errors.New("connection reset")
	for _, tc := range []struct {
		name     string
		inserted int64
		insert   error
		existing error
	}{
		{name: "insert fails", insert: boom},
		{name: "reading the rows held fails", existing: boom},
		{name: "reading fails after some were inserted", inserted: 1, existing: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := o.enqueue(context.Background(), validTxs("D", 2),
				func(rows) (int64, error) { return tc.inserted, tc.insert },
				func([]string) (map[string][2]string, error) { return nil, tc.existing })
			require.ErrorIs(t, err, boom)
			require.NotErrorIs(t, err, ErrConflict)
		})
	}
}

// A rolled-back bank transaction enqueues nothing.
func TestEnqueueRolledBack(t *testing.T) {
	o, db := newTestOutbox(t, sandbox(t))
	tx, err := db.Begin()
	require.NoError(t, err)
	require.NoError(t, o.Enqueue(context.Background(), tx, validTxs("R", 5)...))
	require.NoError(t, tx.Rollback())
	s, err := o.Stats(context.Background())
	require.NoError(t, err)
	require.Equal(t, Stats{}, s)
}

// The relay sends what was enqueued, each stored once with its content,
// every row done; enqueued again after done, it stays one transaction.
func TestRelaySends(t *testing.T) {
	srv := sandbox(t)
	o, db := newTestOutbox(t, srv, append(fastRetries, WithBatchSize(7))...)
	txs := validTxs("S", 25)
	require.NoError(t, enqueue(t, o, db, txs...))
	require.Equal(t, 0, drain(t, o, 20).Depth)
	stored := storedNos(srv)
	require.Len(t, stored, 25)
	for _, tx := range txs {
		require.True(t, tx.Time.Equal(stored[tx.OrderNo].Time))
		got := stored[tx.OrderNo]
		got.Time = tx.Time
		require.Equal(t, tx, got)
	}
	for no, st := range states(t, o) {
		require.Equal(t, stateDone, st, no)
	}
	require.NoError(t, enqueue(t, o, db, txs...))
	require.Equal(t, 0, drain(t, o, 5).Depth)
	require.Equal(t, 25, srv.WebhookReceived(), "nothing sent twice")
}
