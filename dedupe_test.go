package paygate

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A token is the exact text Claim gave: another spelling of its number
// (leading zeros, upper case) or another deduper's prefix is not it.
func TestMemoryDeduperTokenText(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	c, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	other := &MemoryDeduper{}
	oc, err := other.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	num := c.Token[len(d.prefix):]
	for _, tok := range []string{d.prefix + "0" + num, d.prefix + "+" + num, oc.Token, "", d.prefix} {
		require.ErrorIs(t, d.Renew(ctx, "k", tok, time.Minute), ErrClaimLost, "%q", tok)
	}
	require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
	require.ErrorIs(t, d.Complete(ctx, "k", c.Token, "GW2"), ErrClaimLost, "a done key holds no token")
}

// Times are nanoseconds from the deduper's first claim: any clock works (a
// year beyond Unix nanoseconds, 1600 or 2300), and a retention too long for
// them is held at the end of the range, never wrapped: a completed key
// stays done, a claim stays held.
func TestMemoryDeduperFarTimes(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		now       time.Time
		retention time.Duration
	}{
		{"retention past 2262", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), time.Duration(math.MaxInt64)},
		{"clock in 2300", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), time.Hour},
		{"clock in 1600", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			d := &MemoryDeduper{Now: func() time.Time { return now }, Retention: tt.retention}
			c, err := d.Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			busy, err := d.Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			require.Equal(t, ClaimBusy, busy.State)
			require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
			now = now.Add(time.Minute)
			again, err := d.Claim(ctx, "k", time.Minute)
			require.NoError(t, err)
			require.Equal(t, ClaimDone, again.State)
			require.Equal(t, "GW1", again.Result)
		})
	}
}
