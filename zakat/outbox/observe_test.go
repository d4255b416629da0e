package outbox

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/observe"
)

// recorder keeps the outbox events it is given.
type recorder struct {
	observe.Base
	mu     sync.Mutex
	rounds []observe.OutboxRound
	stats  []observe.OutboxStats
}

func (r *recorder) OutboxRound(_ context.Context, e observe.OutboxRound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rounds = append(r.rounds, e)
}

func (r *recorder) OutboxStats(_ context.Context, e observe.OutboxStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = append(r.stats, e)
}

// Run reports each round's outcomes and, once idle, the depth; it
// returns the context's error when the context ends.
func TestRunObserved(t *testing.T) {
	rec := &recorder{}
	srv := sandbox(t)
	o, db := newTestOutbox(t, srv, append(fastRetries, WithObserver(rec), WithBatchSize(3), WithWorkers(1))...)
	require.NoError(t, enqueue(t, o, db, validTxs("W", 5)...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.stats) > 0
	}, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Equal(t, []observe.OutboxRound{{Taken: 3, Accepted: 3}, {Taken: 2, Accepted: 2}}, rec.rounds)
	require.Equal(t, observe.OutboxStats{}, rec.stats[0])
	require.Len(t, srv.Transactions(), 5)
}

// An outbox made without a sender serves the operator's methods only.
func TestNoSender(t *testing.T) {
	db := openDB(t, testDSN(t))
	o, err := New(db, nil, WithTable(testTable(t, db)))
	require.NoError(t, err)
	require.NoError(t, o.Migrate(context.Background()))
	require.ErrorIs(t, o.Run(context.Background()), ErrNoSender)
	_, err = o.RelayOnce(context.Background())
	require.ErrorIs(t, err, ErrNoSender)
	require.ErrorIs(t, enqueue(t, o, db, validTx("N", 1)), ErrNoSender)
	s, err := o.Stats(context.Background())
	require.NoError(t, err)
	require.Equal(t, Stats{}, s)
}
