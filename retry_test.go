package paygate

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h := http.Header{}
	require.Zero(t, retryAfter(h, now))
	h.Set("Retry-After", "7")
	require.Equal(t, 7*time.Second, retryAfter(h, now))
	h.Set("Retry-After", "-3")
	require.Zero(t, retryAfter(h, now))
	h.Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
	require.Equal(t, 90*time.Second, retryAfter(h, now))
	h.Set("Retry-After", "soon")
	require.Zero(t, retryAfter(h, now))
}

func TestRetryPolicyWait(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n := 1; n < 5; n++ {
		for range 200 { // the jitter: every draw in the upper half
			d, ok := p.wait(n, 0)
			require.True(t, ok)
			ceil := min(100*time.Millisecond<<(n-1), time.Second)
			require.GreaterOrEqual(t, d, ceil/2, "attempt %d", n)
			require.LessOrEqual(t, d, ceil, "attempt %d", n)
		}
	}
	_, ok := p.wait(5, 0)
	require.False(t, ok, "attempts used up")
	d, ok := p.wait(1, 800*time.Millisecond)
	require.True(t, ok)
	require.Equal(t, 800*time.Millisecond, d)
	_, ok = p.wait(1, 2*time.Second)
	require.False(t, ok, "Retry-After beyond MaxDelay ends the retries")
	d, ok = p.wait(1, time.Second)
	require.True(t, ok, "a Retry-After of exactly MaxDelay is waited")
	require.Equal(t, time.Second, d)
	tiny := RetryPolicy{MaxAttempts: 1, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond}
	require.Equal(t, tiny, tiny.withDefaults(), "a policy's own values, however small, are kept")
	require.Equal(t, RetryPolicy{MaxAttempts: 4, BaseDelay: 250 * time.Millisecond, MaxDelay: 30 * time.Second}, RetryPolicy{}.withDefaults())
	big := RetryPolicy{MaxAttempts: 100, BaseDelay: time.Second, MaxDelay: time.Minute}
	d, _ = big.wait(80, 0)
	require.LessOrEqual(t, d, time.Minute, "no overflow at high attempt numbers")
}

// The backoff never wraps, whatever the policy: with a base of minutes,
// BaseDelay<<(n-1) overflows before the 30th attempt, and a negative
// wait panicked in rand.N (a minute's base at attempt 29).
func TestRetryPolicyWaitNeverWraps(t *testing.T) {
	for _, p := range []RetryPolicy{
		{MaxAttempts: 64, BaseDelay: time.Minute, MaxDelay: time.Hour},
		{MaxAttempts: 64, BaseDelay: 5 * time.Minute, MaxDelay: 24 * time.Hour},
		{MaxAttempts: 64, BaseDelay: time.Hour, MaxDelay: math.MaxInt64},
		{MaxAttempts: 64, BaseDelay: math.MaxInt64, MaxDelay: math.MaxInt64},
		{MaxAttempts: 64, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond},
	} {
		for n := 1; n < p.MaxAttempts; n++ {
			var d time.Duration
			var ok bool
			require.NotPanics(t, func() { d, ok = p.wait(n, 0) }, "%+v, attempt %d", p, n)
			require.True(t, ok)
			ceil := p.MaxDelay
			if p.BaseDelay <= math.MaxInt64>>(n-1) {
				ceil = min(p.BaseDelay<<(n-1), p.MaxDelay)
			}
			require.GreaterOrEqual(t, d, ceil/2, "%+v, attempt %d", p, n)
			require.LessOrEqual(t, d, ceil, "%+v, attempt %d", p, n)
		}
	}
}

// A Retry-After of more seconds than a Duration holds asks for a pause
// longer than any MaxDelay: it ends the retries. Multiplied as it was, it
// wrapped to a short wait (18446744074 s to 0.29 s) or to a negative one
// read as none, and a value past int64 did not parse: each time the request
// was retried at once.
func TestRetryAfterHugeSeconds(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Hour}
	for _, tc := range []struct {
		name, value string
	}{
		{name: "wraps to a short wait", value: "18446744074"},
		{name: "wraps negative", value: "9223372037"},
		{name: "largest int64", value: "9223372036854775807"},
		{name: "past int64", value: "99999999999999999999999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Retry-After": {tc.value}}
			ra := retryAfter(h, now)
			require.Greater(t, ra, time.Hour, "Retry-After %s read as %v", tc.value, ra)
			_, ok := p.wait(1, ra)
			require.False(t, ok, "a Retry-After of %s s must end the retries", tc.value)
		})
	}
}

// The backoff at its edges: a base just under MaxDelay is the backoff
// itself, not the cap; a base of nanoseconds keeps doubling past the 30th
// retry until it reaches MaxDelay; a Retry-After of 1 ns is the service's
// wait, not an absent one; and the jitter draws from the whole upper half,
// both ends included, never past the backoff.
func TestRetryPolicyWaitEdges(t *testing.T) {
	draws := func(p RetryPolicy, n int) map[time.Duration]bool {
		seen := map[time.Duration]bool{}
		for range 300 {
			d, ok := p.wait(n, 0)
			require.True(t, ok)
			seen[d] = true
		}
		return seen
	}
	require.Equal(t, map[time.Duration]bool{1: true, 2: true}, draws(RetryPolicy{MaxAttempts: 2, BaseDelay: 3, MaxDelay: 4}, 1),
		"a base of 3 ns under a cap of 4 ns: half to all of 3 ns")
	require.Equal(t, map[time.Duration]bool{2: true, 3: true, 4: true}, draws(RetryPolicy{MaxAttempts: 2, BaseDelay: 4, MaxDelay: 4}, 1),
		"a backoff of 4 ns: every value from 2 to 4 ns")
	tiny := RetryPolicy{MaxAttempts: 40, BaseDelay: time.Nanosecond, MaxDelay: 30 * time.Second}
	for range 100 {
		d, ok := tiny.wait(31, 0)
		require.True(t, ok)
		require.GreaterOrEqual(t, d, time.Duration(1<<29), "the 31st retry backs off 2^30 ns, not the cap")
		require.LessOrEqual(t, d, time.Duration(1<<30), "the 31st retry backs off 2^30 ns, not the cap")
	}
	d, ok := tiny.wait(1, time.Nanosecond)
	require.True(t, ok)
	require.Equal(t, time.Nanosecond, d, "a Retry-After of 1 ns is waited as asked")
}
