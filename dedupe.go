package paygate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// ClaimState is the answer of a Deduper to a claim.
type ClaimState int

const (
	// Claimed: the caller holds the key until Complete, Release, or the end of
	// the lease, and must do the work.
	Claimed ClaimState = iota + 1
	// Done: the work for the key was completed before; do nothing.
	Done
	// Busy: another delivery holds an unexpired claim; try again later.
	Busy
)

// Deduper records which callback events were handled, so that each is acted
// on once whatever the gateway's retries (about every 30 s, spec Events),
// concurrent duplicates or replicas (spec endpoint 6: fulfil once per refNo).
// A claim carries a lease: if the claimant crashes, the claim lapses and a
// later delivery can take it. Implementations must be safe for concurrent use.
type Deduper interface {
	// Claim tries to take key for lease. With Claimed it returns a token that
	// Complete and Release need.
	Claim(ctx context.Context, key string, lease time.Duration) (ClaimState, string, error)
	// Complete marks key done for good (within the deduper's retention).
	Complete(ctx context.Context, key, token string) error
	// Release gives key back so that the next delivery can try again.
	Release(ctx context.Context, key, token string) error
}

// ErrClaimLost is returned by Complete or Release when the token no longer
// holds the key (its lease ran out and another delivery took it).
var ErrClaimLost = errors.New("paygate: dedupe claim lost (lease expired)")

// MemoryDeduper is the in-process Deduper, the default of CallbackHandler:
// right for a merchant running one replica. Completed keys are kept for
// Retention (default 30 days), then forgotten. The zero value is ready.
type MemoryDeduper struct {
	// Retention is how long a completed key is remembered.
	Retention time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*dedupeEntry
	claims  int // claims since the last sweep of expired entries
}

// dedupeEntry is the state of one key.
type dedupeEntry struct {
	done    bool
	token   string
	expires time.Time // lease end, or retention end once done
}

// now reads the clock.
func (m *MemoryDeduper) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Claim implements Deduper.
func (m *MemoryDeduper) Claim(_ context.Context, key string, lease time.Duration) (ClaimState, string, error) {
	token, err := newToken()
	if err != nil {
		return 0, "", err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = make(map[string]*dedupeEntry)
	}
	if m.claims++; m.claims >= 1024 {
		m.sweep(now)
	}
	if e, ok := m.entries[key]; ok && now.Before(e.expires) {
		if e.done {
			return Done, "", nil
		}
		return Busy, "", nil
	}
	m.entries[key] = &dedupeEntry{token: token, expires: now.Add(lease)}
	return Claimed, token, nil
}

// Complete implements Deduper.
func (m *MemoryDeduper) Complete(_ context.Context, key, token string) error {
	retention := m.Retention
	if retention <= 0 {
		retention = 30 * 24 * time.Hour
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok || e.done || e.token != token {
		return ErrClaimLost
	}
	e.done, e.token, e.expires = true, "", now.Add(retention)
	return nil
}

// Release implements Deduper.
func (m *MemoryDeduper) Release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok || e.done || e.token != token {
		return ErrClaimLost
	}
	delete(m.entries, key)
	return nil
}

// sweep drops lapsed claims and completed keys past retention.
func (m *MemoryDeduper) sweep(now time.Time) {
	m.claims = 0
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
		}
	}
}

// newToken makes a random claim token.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
