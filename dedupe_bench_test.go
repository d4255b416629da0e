package paygate

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/testbound"
)

// sweepDeduper is the design MemoryDeduper replaced, kept as a baseline:
// every 1,024th claim scans the whole store under the lock for lapsed keys.
type sweepDeduper struct {
	now     func() time.Time
	mu      sync.Mutex
	entries map[string]time.Time // expiry
	claims  int
}

func (m *sweepDeduper) claim(key string, lease time.Duration) ClaimState {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claims++; m.claims >= 1024 {
		m.claims = 0
		for k, exp := range m.entries {
			if !now.Before(exp) {
				delete(m.entries, k)
			}
		}
	}
	if exp, ok := m.entries[key]; ok && now.Before(exp) {
		return ClaimBusy
	}
	m.entries[key] = now.Add(lease)
	return ClaimAcquired
}

// dedupeLoad is a store of n keys in steady state: the clock moves 1 ms per
// operation and every key lives n ms, so each new claim lapses one old key.
// Operations alternate a new event (a fresh key) with a duplicate of a live
// one, as a callback stream with retries does.
type dedupeLoad struct {
	n     int
	clock time.Time
	seq   int
	times []time.Duration // of each timed operation
	op    func(key string) ClaimState
}

func newDedupeLoad(n int, sweep bool) *dedupeLoad {
	l := &dedupeLoad{n: n, clock: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	now := func() time.Time { return l.clock }
	lease := time.Duration(n) * time.Millisecond
	if sweep {
		d := &sweepDeduper{now: now, entries: make(map[string]time.Time, n)}
		l.op = func(key string) ClaimState { return d.claim(key, lease) }
		d.claims = -2 * n // no sweep while filling: the fill is not what is measured
		defer func() { d.claims = 0 }()
	} else {
		d := &MemoryDeduper{Now: now}
		l.op = func(key string) ClaimState {
			c, _ := d.Claim(context.Background(), key, lease)
			return c.State
		}
	}
	for range n {
		l.step()
	}
	l.times = l.times[:0]
	return l
}

// benchRefKey is the key of the i-th event as CallbackHandler claims it:
// the fulfilment key of a refNo as merchants write them.
func benchRefKey(i int) string { return fulfilKey("INV-2026-" + strconv.Itoa(i)) }

// quantile returns the q-quantile of the timed operations.
func (l *dedupeLoad) quantile(q float64) time.Duration {
	t := slices.Clone(l.times)
	slices.Sort(t)
	return t[min(len(t)-1, int(q*float64(len(t))))]
}

// step runs one new claim and one duplicate, timing each.
func (l *dedupeLoad) step() {
	l.clock = l.clock.Add(time.Millisecond)
	l.seq++
	for _, key := range []string{benchRefKey(l.seq), benchRefKey(l.seq - l.n/2)} {
		start := time.Now()
		l.op(key)
		l.times = append(l.times, time.Since(start))
	}
}

// BenchmarkMemoryDeduperScale times a claim at 1M stored keys against one at
// 10k, interleaved in batches, for MemoryDeduper and for the sweeping
// baseline, and reports each store's 99.9th percentile and slowest single
// claim (the slowest is mostly the machine: GC assists and preemption).
func BenchmarkMemoryDeduperScale(b *testing.B) {
	for _, tt := range []struct {
		name  string
		sweep bool
	}{{name: "heap", sweep: false}, {name: "sweepBaseline", sweep: true}} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			small, large := newDedupeLoad(10_000, tt.sweep), newDedupeLoad(1_000_000, tt.sweep)
			b.ResetTimer()
			testbound.BenchRatios(b, 1000, large.step, testbound.RatioBaseline{Name: "10k", Fn: small.step})
			for _, l := range []struct {
				name string
				load *dedupeLoad
			}{{name: "10k", load: small}, {name: "1M", load: large}} {
				b.ReportMetric(float64(l.load.quantile(0.999).Microseconds()), "p99.9-us-"+l.name)
				b.ReportMetric(float64(l.load.quantile(1).Microseconds()), "max-us-"+l.name)
			}
		})
	}
}
