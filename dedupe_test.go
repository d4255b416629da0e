package paygate

import (
	"context"
	"fmt"
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
		{name: "retention past 2262", now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), retention: time.Duration(math.MaxInt64)},
		{name: "clock in 2300", now: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), retention: time.Hour},
		{name: "clock in 1600", now: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), retention: time.Hour},
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

// Retention, and expiry that is incremental: each Claim drops at most
// expirePerCall lapsed keys, so the store drains without a full sweep.
func TestMemoryDeduperExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	d := &MemoryDeduper{Now: func() time.Time { return now }, Retention: time.Hour}
	c, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Complete(ctx, "k", c.Token, "GW1"))
	now = now.Add(2 * time.Hour) // past retention
	c, err = d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, c.State, "a key past retention is claimed afresh")

	for i := range 1000 { // x999 lapses last: first in, first out
		_, err := d.Claim(ctx, fmt.Sprint("x", i), time.Second)
		require.NoError(t, err)
	}
	require.Equal(t, 1001, d.Len())
	now = now.Add(time.Minute) // every x key lapsed, k too
	c, err = d.Claim(ctx, "x999", time.Second)
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, c.State, "a lapsed claim not yet dropped is taken over")
	require.Equal(t, 1001-expirePerCall, d.Len())
	now = now.Add(time.Minute)
	for i := 1; i <= 100; i++ {
		_, err := d.Claim(ctx, fmt.Sprint("y", i), time.Hour)
		require.NoError(t, err)
		require.Equal(t, 999+i-expirePerCall*i, d.Len(), "claim %d drops exactly %d lapsed keys", i, expirePerCall)
	}
	for range 2000 {
		_, _ = d.Claim(ctx, "y1", time.Hour) // a duplicate still drains lapsed keys
	}
	require.Equal(t, 100, d.Len(), "only the live y keys remain")
	live := 0
	for _, q := range d.store.queues {
		q.each(func(r expiryRecord) {
			if !d.store.stale(r) {
				live++
			}
		})
	}
	require.Equal(t, d.Len(), live, "one live record per key")
}

// Past maxExpiryQueues distinct leases, records share a queue out of time
// order: keys may be dropped late, never early.
func TestMemoryDeduperManyLeases(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	d := &MemoryDeduper{Now: func() time.Time { return now }}
	const n = 3 * maxExpiryQueues
	for i := n; i > 0; i-- { // longest lease first: the shared queue is out of order
		c, err := d.Claim(ctx, fmt.Sprint("k", i), time.Duration(i)*time.Second)
		require.NoError(t, err)
		require.Equal(t, ClaimAcquired, c.State)
	}
	require.Len(t, d.store.queues, maxExpiryQueues+1)
	for i := 1; i <= n; i++ {
		now = now.Add(time.Second) // k1..ki have lapsed, the rest not
		for j := 1; j <= n; j++ {
			c, err := d.Claim(ctx, fmt.Sprint("k", j), time.Hour)
			require.NoError(t, err)
			if j <= i {
				require.Equal(t, ClaimAcquired, c.State, "k%d lapsed at %d s", j, i)
				require.NoError(t, d.Release(ctx, fmt.Sprint("k", j), c.Token)) // lapsed again for the next round
			} else {
				require.Equal(t, ClaimBusy, c.State, "k%d has not lapsed at %d s", j, i)
			}
		}
	}
}
