package paygate

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy says how often and how long a request is retried where a retry
// is safe (docs/protocol.md "Retries"): exponential backoff with equal jitter
// (each wait between half and all of its backoff), capped,
// Retry-After honoured, every wait ended by the context. The zero value means
// the defaults: 4 attempts, 250 ms base, 30 s cap.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included; 1 disables
	// retries.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry; each later backoff
	// doubles it, and the wait is a random time between half and all of it.
	BaseDelay time.Duration
	// MaxDelay caps each wait. A Retry-After longer than MaxDelay ends the
	// retries instead (the service asked for a longer pause than the caller
	// allows), and the last error is returned.
	MaxDelay time.Duration
}

// withDefaults fills the zero fields.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 250 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	return p
}

// wait returns how long to wait before retry number n (1 for the first
// retry), and false when no retry should be made: attempts are used up, or
// the service's Retry-After exceeds MaxDelay.
func (p RetryPolicy) wait(n int, retryAfter time.Duration) (time.Duration, bool) {
	if n >= p.MaxAttempts {
		return 0, false
	}
	if retryAfter > 0 {
		return retryAfter, retryAfter <= p.MaxDelay
	}
	d := p.MaxDelay
	// BaseDelay<<shift < MaxDelay, asked without the shift, which wraps
	// for a base of minutes before the 30th attempt (a shift of 64 or
	// more leaves 0: the cap).
	if shift := n - 1; p.BaseDelay <= (p.MaxDelay-1)>>shift {
		d = p.BaseDelay << shift
	}
	// Equal jitter: a random wait in the upper half of the backoff spreads
	// the herd and keeps a floor.
	return d/2 + rand.N(d/2+1), true
}

// sleepCtx waits d, or until ctx is done, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfter reads a Retry-After header (delay-seconds or an HTTP date) into
// a duration; 0 when absent or unreadable. Seconds past what a Duration
// holds (int64 included) saturate, so that they end the retries as any
// wait over MaxDelay does, rather than wrap to a short one.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case secs < 0:
			return 0
		case secs > int64(math.MaxInt64/time.Second):
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
