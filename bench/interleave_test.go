package bench

import (
	"runtime"
	"testing"
	"time"
)

// side is one implementation in an interleaved comparison.
type side struct {
	name string
	fn   func()
}

// result is one side's cost per call.
type result struct {
	ns, allocs, bytes float64
}

// interleave runs subject and each peer in alternating batches of batch
// calls, b.N rounds, and reports per call time and allocations of each side
// ("ns/<name>", "allocs/<name>") and time(subject) / time(peer) for each
// peer ("x/<name>"), and returns the costs. Allocations are counted with runtime.MemStats around
// each batch, so the count is per call of that side alone.
func interleave(b *testing.B, batch int, subject side, peers ...side) []result {
	b.ReportAllocs()
	sides := append([]side{subject}, peers...)
	took := make([]time.Duration, len(sides))
	mallocs := make([]uint64, len(sides))
	allocated := make([]uint64, len(sides))
	var ms runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, s := range sides {
			runtime.ReadMemStats(&ms)
			m0, a0 := ms.Mallocs, ms.TotalAlloc
			start := time.Now()
			for j := 0; j < batch; j++ {
				s.fn()
			}
			took[k] += time.Since(start)
			runtime.ReadMemStats(&ms)
			mallocs[k] += ms.Mallocs - m0
			allocated[k] += ms.TotalAlloc - a0
		}
	}
	calls := float64(b.N) * float64(batch)
	out := make([]result, len(sides))
	for k, s := range sides {
		out[k] = result{float64(took[k]) / calls, float64(mallocs[k]) / calls, float64(allocated[k]) / calls}
		b.ReportMetric(float64(took[k])/calls, "ns/"+s.name)
		b.ReportMetric(float64(mallocs[k])/calls, "allocs/"+s.name)
		if k > 0 {
			b.ReportMetric(float64(took[0])/float64(took[k]), "x/"+s.name)
		}
	}
	return out
}
