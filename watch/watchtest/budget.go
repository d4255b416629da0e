package watchtest

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/watch"
)

// bucket is the budget's contract (watch.Store.Spend) written out: the
// model the budget checks hold a store to, grant for grant.
type bucket struct {
	b       watch.Budget
	tokens  float64
	filled  time.Time
	started bool
}

// spend grants up to n lookups at now: full at first; then filled at
// PerSecond from the latest spend to now, never above Burst; the latest
// spend stays the later time, unless now is more than a minute earlier (a
// clock reset: the bucket goes on from now).
func (m *bucket) spend(now time.Time, n int) int {
	switch {
	case !m.started:
		m.tokens, m.filled, m.started = float64(m.b.Burst), now, true
	case now.After(m.filled):
		m.tokens = min(float64(m.b.Burst), m.tokens+now.Sub(m.filled).Seconds()*m.b.PerSecond)
		m.filled = now
	case now.Before(m.filled.Add(-time.Minute)):
		m.filled = now
	}
	g := max(min(n, int(math.Floor(m.tokens))), 0)
	m.tokens -= float64(g)
	return g
}

// budgetFollowsTheBucket: 400 spends of one replica, the clock moving on
// by a quarter second to a quarter hour, now and then a few seconds back
// (a replica's spend arriving late) or minutes back (a clock reset),
// asking 0 to 9 lookups at a time, at a rate whose fills are fractions of
// a lookup: every grant is the model's. The fleet's soak on the test
// clock (pgstore's TestWatchFleetSettlesEveryOrderOnce) holds the fleet
// to the budget over days of drains and refills; this check holds every
// spend to it, in milliseconds. The times are quarter seconds and the rate
// 1.5 a second, so every fill is exact in binary and the store's
// arithmetic cannot round a grant either way.
func budgetFollowsTheBucket(t *testing.T, s watch.Store) {
	b := watch.Budget{PerSecond: 1.5, Burst: 5}
	m := bucket{b: b}
	rng := rand.New(rand.NewPCG(42, 42))
	gaps := []time.Duration{0, 250 * time.Millisecond, 750 * time.Millisecond, time.Second, 2500 * time.Millisecond,
		10 * time.Second, 15 * time.Minute, -750 * time.Millisecond, -5 * time.Second, -3 * time.Minute}
	now := t0
	for i := range 400 {
		now = now.Add(gaps[rng.IntN(len(gaps))])
		ask := []int{0, 1, 1, 1, 2, 3, 5, 9}[rng.IntN(8)]
		want := m.spend(now, ask)
		got, err := s.Spend(context.Background(), now, b, ask)
		ok(t, "Spend", err)
		if got != want {
			t.Fatalf("spend %d: Spend(%d) at %v = %d, want %d (the bucket's contract; %.3f lookups left in the model)",
				i, ask, now.Sub(t0), got, want, m.tokens)
		}
	}
}

// concurrentSpendsGrantTheBucket: four replicas spend at once, each one or
// two lookups at a time until it is refused, in 40 rounds 1.75 s apart (a
// fill of 3.5 lookups, so rounds start with a fraction left): each round
// grants exactly the whole lookups the bucket holds, never one more (two
// spends that read the bucket before either wrote it) nor one fewer.
func concurrentSpendsGrantTheBucket(t *testing.T, s watch.Store) {
	b := watch.Budget{PerSecond: 2, Burst: 6}
	m := bucket{b: b}
	for round := range 40 {
		now := t0.Add(time.Duration(round) * 1750 * time.Millisecond)
		want := m.spend(now, math.MaxInt32)
		var mu sync.Mutex
		var wg sync.WaitGroup
		got := 0
		errs := make(chan error, 4)
		for r := range 4 {
			wg.Go(func() {
				for {
					g, err := s.Spend(context.Background(), now, b, 1+r%2)
					if err != nil {
						errs <- err
						return
					}
					if g == 0 {
						return
					}
					mu.Lock()
					got += g
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			ok(t, "concurrent Spend", err)
		}
		if got != want {
			t.Fatalf("round %d at %v: replicas were granted %d lookups between them, want %d (the whole lookups in the bucket)",
				round, now.Sub(t0), got, want)
		}
	}
}
