package gatewaytest

import (
	"slices"
	"sync"
	"time"
)

// The sandbox waits on its clock in two places: between the attempts of a
// direct callback (RetryInterval) and before a late settlement. With the
// real clock a goroutine sleeps on a timer. With a TestClock it parks on a
// timer of the clock: a parked goroutine is not counted as work in flight
// (Settle does not wait for test time to pass), and Advance wakes the
// timers in order of their due time, counting each woken goroutine as work
// again before it runs, and waits for every watching server to settle
// after each one, so that work a wake starts (a retry that fails and parks
// again, a settlement's callback) is done, at the right test time, before
// the next timer fires.

// TestClock is a clock a test moves by hand: a sandbox started with
// WithTestClock reads the time from it and waits on it, so that retries,
// give-ups and late settlements days away run in milliseconds. The zero
// value is not usable; make one with NewTestClock. It is safe for
// concurrent use, and one clock may drive several servers.
type TestClock struct {
	advancing sync.Mutex // one Advance at a time
	mu        sync.Mutex
	now       time.Time
	seq       int
	timers    []*clockTimer
	watchers  map[*inflight]struct{} // the work of the servers it drives
}

// clockTimer is one goroutine parked on a TestClock until at.
type clockTimer struct {
	at    time.Time
	seq   int           // order among timers due at the same time
	wake  func()        // run under the clock's lock as the timer fires
	fired chan struct{} // closed when it fires
}

// NewTestClock returns a clock reading start until advanced.
func NewTestClock(start time.Time) *TestClock {
	return &TestClock{now: start, watchers: map[*inflight]struct{}{}}
}

// Now is the clock's time.
func (c *TestClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward and, before it returns, runs every
// wait of its servers that falls due on the way, earliest first, each at
// its own due time: a callback retry and its POST, a give-up after the
// last attempt, a late settlement and its callback, and whatever those
// start at once. It returns once the servers have settled (as Settle).
// Callbacks are posted from Advance's own call, so a merchant handler
// must not call Advance (it would wait for itself). Several Advances at
// once run one after the other.
func (c *TestClock) Advance(d time.Duration) {
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.settle() // work started before the call runs at the time it was started
	target := c.Now().Add(d)
	for c.fireNext(target) {
		c.settle()
	}
	c.mu.Lock()
	if target.After(c.now) {
		c.now = target
	}
	c.mu.Unlock()
	c.settle()
}

// fireNext fires the earliest timer due by target, moving the clock to its
// time; false when none is due.
func (c *TestClock) fireNext(target time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 || c.timers[0].at.After(target) {
		return false
	}
	t := c.timers[0]
	c.timers = c.timers[1:]
	if t.at.After(c.now) {
		c.now = t.at
	}
	t.wake()
	close(t.fired)
	return true
}

// settle waits until no server the clock drives has work in flight.
func (c *TestClock) settle() {
	c.mu.Lock()
	ws := make([]*inflight, 0, len(c.watchers))
	for w := range c.watchers {
		ws = append(ws, w)
	}
	c.mu.Unlock()
	for _, w := range ws {
		w.Wait()
	}
}

// watch makes Advance wait for work, a server's; unwatch stops it.
func (c *TestClock) watch(work *inflight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers[work] = struct{}{}
}

func (c *TestClock) unwatch(work *inflight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.watchers, work)
}

// schedule parks a timer due d from now; wake runs as it fires.
func (c *TestClock) schedule(d time.Duration, wake func()) *clockTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &clockTimer{at: c.now.Add(d), seq: c.seq, wake: wake, fired: make(chan struct{})}
	i, _ := slices.BinarySearchFunc(c.timers, t, func(a, b *clockTimer) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	c.timers = slices.Insert(c.timers, i, t)
	return t
}

// stop removes t unless it has fired; it reports whether it removed it
// (then its wake never runs).
func (c *TestClock) stop(t *clockTimer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	return true
}

// WithTestClock makes the sandbox read the time from c and wait on it
// (callback retries, give-ups, late settlements: Advance runs them). It
// supersedes WithClock: c also checks exp and stamps orders and attempts.
// Without it the sandbox runs in real time.
func WithTestClock(c *TestClock) Option {
	return func(cfg *config) {
		cfg.testClock, cfg.now = c, nil // nil: Start refuses a nil clock
		if c != nil {
			cfg.now = c.Now
		}
	}
}

// sleep waits d on the server's clock and reports whether it ran out;
// false when the server closes or cancel is closed first. The caller is
// counted in s.pending; with a TestClock it is not while parked.
func (s *Server) sleep(d time.Duration, cancel <-chan struct{}) bool {
	tc := s.cfg.testClock
	if tc == nil {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-s.closed:
		case <-cancel:
		}
		return false
	}
	if d <= 0 {
		return true
	}
	t := tc.schedule(d, func() { s.pending.Add(1) })
	s.pending.Done() // parked, after scheduling: an Advance settling now fires it next
	select {
	case <-t.fired:
		return !isClosed(s.closed) // an Advance racing Close: nothing once Close has begun
	case <-s.closed:
	case <-cancel:
	}
	if tc.stop(t) {
		s.pending.Add(1) // counted again to return; a fired timer's wake did it
	}
	return false
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
