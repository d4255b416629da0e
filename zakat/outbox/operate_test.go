package outbox

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/gatewaytest"
)

// An operator's Retry of a transaction dead past its maximum age, whose
// first attempt stored it and lost the answer: its maximum age starts
// again (a second lost answer leaves it queued, not dead at once), and it
// is resent with Resend (the service's 422 for the repeat is recorded
// stored, never rejected).
func TestRetryRestartsAgeAndResends(t *testing.T) {
	for _, tc := range []struct {
		name        string
		lostAgain   bool
		want        string
		wantReceive int
	}{
		{name: "answer lost again", lostAgain: true, want: stateQueued, wantReceive: 2},
		{name: "the repeat answered 422", want: stateDone, wantReceive: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var on atomic.Bool
			on.Store(true)
			srv := sandbox(t, gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{DropAfterStore: 0.5, Rand: switchedFaults(&on)}),
				gatewaytest.WithWebhookDuplicates(gatewaytest.DuplicateUnprocessable))
			o, db := newTestOutbox(t, srv, append(fastRetries, WithMaxAge(time.Hour))...)
			ctx := context.Background()
			require.NoError(t, enqueue(t, o, db, validTx("A", 1)))
			_, err := db.Exec(`UPDATE ` + o.table + ` SET enqueued_at = now() - interval '2 hours'`)
			require.NoError(t, err)
			_, err = o.RelayOnce(ctx)
			require.NoError(t, err)
			dead, err := o.Dead(ctx, 0)
			require.NoError(t, err)
			require.Len(t, dead, 1, "past its maximum age")
			require.True(t, dead[0].MaybeStored)
			require.Len(t, srv.Transactions(), 1, "stored, answer lost")

			on.Store(tc.lostAgain)
			n, err := o.Retry(ctx, "A-000001")
			require.NoError(t, err)
			require.Equal(t, 1, n)
			_, err = o.RelayOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, map[string]string{"A-000001": tc.want}, states(t, o))
			require.Len(t, srv.Transactions(), 1, "stored once")
			require.Equal(t, tc.wantReceive, srv.WebhookReceived())
		})
	}
}

// Purge deletes only done rows past the retention: a queued or dead row,
// however old its due_at, is never deleted (it is still to be sent, or an
// operator's).
func TestPurge(t *testing.T) {
	o, db := newTestOutbox(t, sandbox(t), WithRetention(24*time.Hour))
	txs := validTxs("P", 5)
	require.NoError(t, enqueue(t, o, db, txs...))
	rows := []struct {
		state string
		age   string
		kept  bool
	}{
		{state: stateDone, age: "2 days", kept: false},
		{state: stateDone, age: "1 hour", kept: true},
		{state: stateDead, age: "2 days", kept: true},
		{state: stateQueued, age: "2 days", kept: true},
		{state: stateQueued, age: "0 seconds", kept: true},
	}
	want := map[string]string{}
	purged := 0
	for i, r := range rows {
		_, err := db.Exec(`UPDATE `+o.table+` SET state = $1, due_at = now() - $2::interval WHERE orderno = $3`, r.state, r.age, txs[i].OrderNo)
		require.NoError(t, err)
		if r.kept {
			want[txs[i].OrderNo] = r.state
		} else {
			purged++
		}
	}
	n, err := o.Purge(context.Background())
	require.NoError(t, err)
	require.Equal(t, purged, n)
	require.Equal(t, want, states(t, o))
}
