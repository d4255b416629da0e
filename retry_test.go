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
		d, ok := p.wait(n, 0)
		require.True(t, ok)
		ceil := min(100*time.Millisecond<<(n-1), time.Second)
		require.GreaterOrEqual(t, d, ceil/2, "attempt %d", n)
		require.LessOrEqual(t, d, ceil, "attempt %d", n)
	}
	_, ok := p.wait(5, 0)
	require.False(t, ok, "attempts used up")
	d, ok := p.wait(1, 800*time.Millisecond)
	require.True(t, ok)
	require.Equal(t, 800*time.Millisecond, d)
	_, ok = p.wait(1, 2*time.Second)
	require.False(t, ok, "Retry-After beyond MaxDelay ends the retries")
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
			if n-1 < 30 && p.BaseDelay <= math.MaxInt64>>(n-1) {
				ceil = min(p.BaseDelay<<(n-1), p.MaxDelay)
			}
			require.GreaterOrEqual(t, d, ceil/2, "%+v, attempt %d", p, n)
			require.LessOrEqual(t, d, ceil, "%+v, attempt %d", p, n)
		}
	}
}
