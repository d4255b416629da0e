package watch

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemoryStore is the Store of one process: its orders are lost when the
// process ends (a fleet, or a shop that must survive restarts, shares a
// store on its database). The zero value is ready; it is safe for
// concurrent use.
type MemoryStore struct {
	mu     sync.Mutex
	orders map[string]*Order
	tokens float64   // the budget's bucket
	filled time.Time // when tokens was last refilled
}

// Add implements Store.
func (m *MemoryStore) Add(_ context.Context, o Order) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.orders == nil {
		m.orders = map[string]*Order{}
	}
	if _, ok := m.orders[o.RefNo]; !ok {
		o.Checks, o.Token = 0, ""
		m.orders[o.RefNo] = &o
	}
	return nil
}

// Take implements Store. It scans every order: it is meant for the
// thousands a shop awaits, not millions.
func (m *MemoryStore) Take(_ context.Context, now time.Time, n int, lease time.Duration) ([]Order, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []*Order
	for _, o := range m.orders {
		if !o.Next.After(now) {
			due = append(due, o)
		}
	}
	slices.SortFunc(due, func(a, b *Order) int { return a.Next.Compare(b.Next) })
	taken := make([]Order, 0, min(n, len(due)))
	for _, o := range due[:min(n, len(due))] {
		o.Next, o.Token = now.Add(lease), rand.Text()
		taken = append(taken, *o)
	}
	return taken, nil
}

// Reschedule implements Store.
func (m *MemoryStore) Reschedule(_ context.Context, o Order) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	held, ok := m.orders[o.RefNo]
	if !ok || o.Token == "" || held.Token != o.Token {
		return ErrLost
	}
	held.Next, held.Checks, held.Token = o.Next, o.Checks, ""
	return nil
}

// Hold implements Store.
func (m *MemoryStore) Hold(_ context.Context, o Order, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	held, ok := m.orders[o.RefNo]
	if !ok || o.Token == "" || held.Token != o.Token {
		return ErrLost
	}
	held.Next = until
	return nil
}

// Finish implements Store.
func (m *MemoryStore) Finish(_ context.Context, o Order) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	held, ok := m.orders[o.RefNo]
	if !ok || o.Token == "" || held.Token != o.Token {
		return ErrLost
	}
	delete(m.orders, o.RefNo)
	return nil
}

// Remove implements Store.
func (m *MemoryStore) Remove(_ context.Context, refNo string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.orders, refNo)
	return nil
}

// List implements Store.
func (m *MemoryStore) List(_ context.Context, limit int) ([]Order, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := make([]Order, 0, len(m.orders))
	for _, o := range m.orders {
		c := *o
		c.Token = ""
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b Order) int { return a.Next.Compare(b.Next) })
	return all[:min(max(limit, 0), len(all))], nil
}

// Find implements Store.
func (m *MemoryStore) Find(_ context.Context, base string) ([]Order, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var found []Order
	for ref, o := range m.orders {
		if ref == base || strings.HasPrefix(ref, base+"~") {
			c := *o
			c.Token = ""
			found = append(found, c)
		}
	}
	slices.SortFunc(found, func(a, b Order) int { return strings.Compare(a.RefNo, b.RefNo) })
	return found, nil
}

// Spend implements Store.
func (m *MemoryStore) Spend(_ context.Context, now time.Time, b Budget, n int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens, m.filled = refill(m.tokens, m.filled, now, b), lastSpend(m.filled, now)
	granted := min(n, int(m.tokens))
	m.tokens -= float64(max(granted, 0))
	return max(granted, 0), nil
}

// refill is a token bucket's content at now, given tokens at filled: full
// (b.Burst) the first time, then filled at b.PerSecond up to b.Burst. A
// clock that went back fills nothing.
func refill(tokens float64, filled, now time.Time, b Budget) float64 {
	if filled.IsZero() {
		return float64(b.Burst)
	}
	if now.After(filled) {
		tokens += now.Sub(filled).Seconds() * b.PerSecond
	}
	return min(tokens, float64(b.Burst))
}

// clockReset is how far behind the last spend a spend's time must be to
// be taken for a clock reset rather than a concurrent replica's spend
// arriving late: the bucket then restarts from it.
const clockReset = time.Minute

// lastSpend is the time a spend at now leaves as the bucket's last: the
// later of the two, so that replicas' spends arriving out of order never
// fill the same span twice, but now when it is more than clockReset
// earlier, so that a clock that was far ahead (or a replica's that is)
// cannot stop the bucket for long.
func lastSpend(filled, now time.Time) time.Time {
	if now.After(filled) || now.Before(filled.Add(-clockReset)) {
		return now
	}
	return filled
}
