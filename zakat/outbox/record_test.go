package outbox

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// A row the sender finds invalid when it is sent (changed in the table by
// hand, or checked by another validator than at its enqueue) is dead with
// the sender's reason at once, never retried as if it might be stored,
// and nothing of it reaches the service. It may be stored only if an
// earlier attempt may have reached the service (Dead's MaybeStored).
func TestRelayInvalidIsDead(t *testing.T) {
	for _, tc := range []struct {
		name, set, want string
		maybeStored     bool
	}{
		{name: "a field broken in the body", set: `body = replace(body, '900101145678', '123')`, want: "zakat_ic_no"},
		{name: "an unknown status", set: `status = 'settled'`, want: "status"},
		{name: "broken after an attempt that may have reached", set: `status = 'settled', sent = true`, want: "status", maybeStored: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := sandbox(t)
			o, db := newTestOutbox(t, srv, fastRetries...)
			require.NoError(t, enqueue(t, o, db, validTx("I", 1)))
			res, err := db.Exec(`UPDATE ` + o.table + ` SET ` + tc.set)
			require.NoError(t, err)
			n, err := res.RowsAffected()
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
			_, err = o.RelayOnce(context.Background())
			require.NoError(t, err)
			dead, err := o.Dead(context.Background(), 0)
			require.NoError(t, err)
			require.Len(t, dead, 1)
			require.True(t, strings.HasPrefix(dead[0].Reason, "invalid: "), dead[0].Reason)
			require.Contains(t, dead[0].Reason, tc.want)
			require.Equal(t, tc.maybeStored, dead[0].MaybeStored, "never posted")
			require.Zero(t, srv.WebhookReceived())
		})
	}
}

// A transaction the service refuses is proven not stored by that send
// only: refused on the resend of an attempt that may have reached the
// service, it stays maybe stored (Dead's MaybeStored); refused on its
// first send, it is not.
func TestRelayRejectedKeepsMaybeStored(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sentBefore  bool
		maybeStored bool
	}{
		{name: "refused on its first send"},
		{name: "refused on a resend", sentBefore: true, maybeStored: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := validTx("J", 1)
			srv := sandbox(t, gatewaytest.WithWebhookRefusal(gatewaytest.WebhookRefusal{
				Refuse: func(got zakat.Transaction) bool { return got.OrderNo == tx.OrderNo },
			}))
			var logs strings.Builder
			o, db := newTestOutbox(t, srv, append([]Option{WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, fastRetries...)...)
			require.NoError(t, enqueue(t, o, db, tx))
			if tc.sentBefore { // an earlier attempt whose answer was lost
				_, err := db.Exec(`UPDATE ` + o.table + ` SET sent = true`)
				require.NoError(t, err)
			}
			_, err := o.RelayOnce(context.Background())
			require.NoError(t, err)
			dead, err := o.Dead(context.Background(), 0)
			require.NoError(t, err)
			require.Len(t, dead, 1)
			require.True(t, strings.HasPrefix(dead[0].Reason, "rejected by the service: "), dead[0].Reason)
			require.Equal(t, tc.maybeStored, dead[0].MaybeStored)
			require.Empty(t, srv.Transactions())
			require.Contains(t, logs.String(), `level=WARN msg="paygate outbox: transaction dead"`)
			require.Contains(t, logs.String(), "orderno="+tx.OrderNo)
			require.NotContains(t, logs.String(), "level=ERROR")
		})
	}
}
