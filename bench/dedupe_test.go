package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
)

// dedupeLoad is a MemoryDeduper of n live keys in steady state, as
// CallbackHandler drives it: the clock moves 1 ms per step and a completed
// key is kept n ms (Retention), so each new event lapses one old key. A
// step is one new event (Claim, then Complete with an orderNo as the
// result) and one duplicate of a live key (a Claim answered ClaimDone).
type dedupeLoad struct {
	d     *paygate.MemoryDeduper
	n     int
	clock time.Time
	seq   int
	times []time.Duration // of each step
}

const dedupeLease = 5 * time.Minute

func newDedupeLoad(b testing.TB, n int) *dedupeLoad {
	l := &dedupeLoad{n: n, clock: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	l.d = &paygate.MemoryDeduper{Retention: time.Duration(n) * time.Millisecond, Now: func() time.Time { return l.clock }}
	for range n {
		l.step(b)
	}
	l.times = nil // the fill's times are not measured, nor counted in the store's heap
	return l
}

// refKey is the key of the i-th event as CallbackHandler claims it: the
// fulfilment key of a refNo as merchants write them, "fulfil|" and 16 bytes.
func refKey(i int) string { return fmt.Sprintf("fulfil|INV-2026-%07d", i) }

// step runs one new event and one duplicate, timing the pair.
func (l *dedupeLoad) step(b testing.TB) {
	ctx := context.Background()
	l.clock = l.clock.Add(time.Millisecond)
	l.seq++
	key := refKey(l.seq)
	result := "GW" + strconv.Itoa(20261122000000+l.seq) // the orderNo, 16 bytes
	start := time.Now()
	c, err := l.d.Claim(ctx, key, dedupeLease)
	if err != nil || c.State != paygate.ClaimAcquired {
		b.Fatalf("claim %s: %v %v", key, c.State, err)
	}
	if err := l.d.Complete(ctx, key, c.Token, result); err != nil {
		b.Fatal(err)
	}
	if l.seq > l.n/2 {
		if c, err := l.d.Claim(ctx, refKey(l.seq-l.n/2), dedupeLease); err != nil || c.State != paygate.ClaimDone {
			b.Fatalf("duplicate: %v %v", c.State, err)
		}
	}
	l.times = append(l.times, time.Since(start))
}

func (l *dedupeLoad) quantile(q float64) time.Duration {
	t := slices.Clone(l.times)
	slices.Sort(t)
	return t[min(len(t)-1, int(q*float64(len(t))))]
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemoryDeduper: a step (claim + complete of a new event, a claim
// of a duplicate) at 1M live keys against 10k, interleaved in batches of
// 1,000 steps ("x/10k"); the 99.9th percentile of a step at each size; and
// the live heap per key of the 1M store, keys (23 bytes) and results (16
// bytes) included ("B/key").
func BenchmarkMemoryDeduper(b *testing.B) {
	base := liveHeap()
	large := newDedupeLoad(b, 1_000_000)
	perKey := float64(liveHeap()-base) / float64(large.d.Len())
	small := newDedupeLoad(b, 10_000)
	interleave(b, 1000, side{"1M", func() { large.step(b) }}, side{"10k", func() { small.step(b) }})
	b.ReportMetric(perKey, "B/key")
	b.ReportMetric(float64(large.quantile(0.999).Nanoseconds())/1e3, "p99.9-us/1M")
	b.ReportMetric(float64(small.quantile(0.999).Nanoseconds())/1e3, "p99.9-us/10k")
	runtime.KeepAlive(large)
}
