package paygate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/memstore"
	"github.com/stretchr/testify/require"
)

// Keys and results are at most maxDedupeField bytes: a longer one is
// refused with an error naming it and the rule, and the longest ones are
// kept whole.
func TestMemoryDeduperFieldLimits(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	long := strings.Repeat("k", maxDedupeField)
	_, err := d.Claim(ctx, long+"k", time.Minute)
	require.EqualError(t, err, "paygate: MemoryDeduper: key of 65536 bytes: want at most 65535")
	require.ErrorIs(t, d.Renew(ctx, long+"k", "t", time.Minute), ErrClaimLost)
	c, err := d.Claim(ctx, long, time.Minute)
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, c.State)
	require.EqualError(t, d.Complete(ctx, long, c.Token, long+"r"), "paygate: MemoryDeduper: result of 65536 bytes: want at most 65535")
	require.NoError(t, d.Complete(ctx, long, c.Token, long))
	again, err := d.Claim(ctx, long, time.Minute)
	require.NoError(t, err)
	require.Equal(t, ClaimResult{State: ClaimDone, Result: long}, again)
}

// Before its first claim a deduper holds nothing: every token is lost.
func TestMemoryDeduperEmpty(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	require.ErrorIs(t, d.Renew(ctx, "k", "t", time.Minute), ErrClaimLost)
	require.ErrorIs(t, d.Complete(ctx, "k", "t", "GW1"), ErrClaimLost)
	require.ErrorIs(t, d.Release(ctx, "k", "t"), ErrClaimLost)
	require.Zero(t, d.Len())
}

// A full store refuses new keys with errDedupeFull (which CallbackHandler
// answers 503) and goes on answering for the keys it holds.
func TestMemoryDeduperFull(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	d.store = memstore.New(time.Now(), 3*memstore.PerKey) // room for three keys
	first, err := d.Claim(ctx, "fulfil|INV-0", time.Hour)
	require.NoError(t, err)
	for i := 1; i < 3; i++ {
		_, err := d.Claim(ctx, fmt.Sprint("fulfil|INV-", i), time.Hour)
		require.NoError(t, err)
	}
	_, err = d.Claim(ctx, "fulfil|INV-3", time.Hour)
	require.ErrorIs(t, err, errDedupeFull)
	require.NoError(t, d.Complete(ctx, "fulfil|INV-0", first.Token, "GW1"))
	done, err := d.Claim(ctx, "fulfil|INV-0", time.Hour)
	require.NoError(t, err)
	require.Equal(t, ClaimResult{State: ClaimDone, Result: "GW1"}, done)
}

// A Retention of one nanosecond is the MemoryDeduper's own, not replaced by
// DefaultRetention: a completed key is forgotten once it has passed.
func TestMemoryDeduperShortRetentionHonoured(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := &MemoryDeduper{Retention: time.Nanosecond, Now: func() time.Time { return now }}
	c, err := d.Claim(ctx, "fulfil|INV-1", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Complete(ctx, "fulfil|INV-1", c.Token, "GW1"))
	now = now.Add(time.Hour)
	again, err := d.Claim(ctx, "fulfil|INV-1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, again.State, "a completed key kept past its retention of 1 ns")
}
