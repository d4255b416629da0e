package testbound

import (
	"runtime"
	"testing"
	"time"
)

// LiveHeap is the heap in use after a full collection: live data only.
func LiveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// RatioBaseline is one implementation timed against the subject.
type RatioBaseline struct {
	// Name names the ratio's metric, "x/<Name>".
	Name string
	// Fn is one call of the baseline.
	Fn func()
}

// BenchRatios times the subject and each baseline in alternating batches of
// batch calls, so that the drift of a shared machine falls on all of them
// alike, and reports subject time / baseline time for each ("x/<name>").
func BenchRatios(b *testing.B, batch int, subject func(), baselines ...RatioBaseline) {
	var sub time.Duration
	base := make([]time.Duration, len(baselines))
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for j := 0; j < batch; j++ {
			subject()
		}
		sub += time.Since(start)
		for k, bl := range baselines {
			start = time.Now()
			for j := 0; j < batch; j++ {
				bl.Fn()
			}
			base[k] += time.Since(start)
		}
	}
	b.ReportMetric(float64(sub)/float64(b.N*batch), "ns/call")
	for k, bl := range baselines {
		b.ReportMetric(float64(sub)/float64(base[k]), "x/"+bl.Name)
	}
}
