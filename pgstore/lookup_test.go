package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// Lookup answers what a Claim would, for each state of a key, and writes
// nothing: a key it finds free is still free to Claim.
func TestLookup(t *testing.T) {
	d, db := testDeduper(t)
	ctx := context.Background()
	done, err := d.Claim(ctx, "done", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Complete(ctx, "done", done.Token, "ORD-1"))
	_, err = d.Claim(ctx, "held", time.Minute)
	require.NoError(t, err)
	_, err = d.Claim(ctx, "lapsed", time.Microsecond)
	require.NoError(t, err)
	time.Sleep(time.Millisecond) // the lease runs on the database clock: let it lapse
	for _, tc := range []struct {
		key  string
		want paygate.ClaimResult
	}{
		{key: "done", want: paygate.ClaimResult{State: paygate.ClaimDone, Result: "ORD-1"}},
		{key: "held", want: paygate.ClaimResult{State: paygate.ClaimBusy}},
		{key: "lapsed", want: paygate.ClaimResult{State: paygate.ClaimAcquired}},
		{key: "absent", want: paygate.ClaimResult{State: paygate.ClaimAcquired}},
	} {
		got, err := d.Lookup(ctx, tc.key)
		require.NoError(t, err, tc.key)
		require.Equal(t, tc.want, got, tc.key)
	}
	var rows int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+d.table).Scan(&rows))
	require.Equal(t, 3, rows, "Lookup wrote nothing")
	c, err := d.Claim(ctx, "absent", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.ClaimAcquired, c.State)
}
