package pgstore

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// A claim that lands after its caller gave up on it is fenced: released in
// the background, so the key is free again well within its lease (a
// minute here) instead of held for it. The claim is sent into a blackhole
// (a proxy that holds every byte, and the close, until it ends); its
// caller's context ends meanwhile and pgx closes the connection, but once
// the blackhole ends PostgreSQL receives the claim before the close, runs
// and commits it. Without the fence every claim of the key within the
// test's wait answers busy.
func TestClaimLandingAfterItsCallerGaveUpIsFenced(t *testing.T) {
	dsn := testDSN(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newOutageProxy(t, u.Host)
	u.Host = proxy.addr()
	d, _ := testDeduper(t) // the table, migrated directly
	late, err := New(openDB(t, u.String()), WithTable(d.table))
	require.NoError(t, err)
	ctx := context.Background()
	const key = "status|LATE|GW-LATE|pending"
	// A connection open through the proxy, the claim's statement prepared
	// on it, and just reset (pgx's stdlib pings a connection idle for a
	// second before reusing it).
	for _, k := range []string{"warm-1", "warm-2"} {
		_, err = late.Claim(ctx, k, time.Minute)
		require.NoError(t, err)
	}

	blackholed := make(chan struct{})
	go func() {
		defer close(blackholed)
		proxy.blackhole(time.Second)
	}()
	time.Sleep(100 * time.Millisecond) // the blackhole is on
	gaveUp, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = late.Claim(gaveUp, key, time.Minute)
	cancel()
	require.Error(t, err, "the caller gave up while the claim was in the blackhole")
	<-blackholed // the claim lands now

	var res paygate.ClaimResult
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // a bound, not a measure
		res, err = d.Claim(ctx, key, time.Minute)
		require.NoError(t, err)
		if res.State != paygate.ClaimBusy {
			break
		}
	}
	require.Equal(t, paygate.ClaimAcquired, res.State, "the late claim was fenced, the key free again")
}
