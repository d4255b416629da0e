package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
