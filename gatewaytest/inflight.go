package gatewaytest

import "sync"

// inflight counts the sandbox's background work: callback deliveries and
// their retries, late settlements. Unlike a sync.WaitGroup, work may start
// while another goroutine waits (a test paying orders while Settle runs on
// another); Wait returns once the count has dropped to zero.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero; a fresh one while n > 0
}

// Add records delta more pieces of work (delta is 1, or -1 from Done).
func (f *inflight) Add(delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 && delta > 0 {
		f.idle = make(chan struct{})
	}
	f.n += delta
	switch {
	case f.n < 0:
		panic("gatewaytest: inflight count below zero") // a Done without its Add: a bug in the sandbox
	case f.n == 0 && delta < 0:
		close(f.idle)
	}
}

// Done records one piece of work finished.
func (f *inflight) Done() { f.Add(-1) }

// Wait blocks until no work is in flight.
func (f *inflight) Wait() {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	idle := f.idle
	f.mu.Unlock()
	<-idle
}
