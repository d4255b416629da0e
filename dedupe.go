package paygate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/paygate-go/paygate/internal/memstore"
)

// ClaimState is the answer of a Deduper to a claim.
type ClaimState int

const (
	// ClaimAcquired: the caller holds the key until Complete, Release, or the
	// end of the lease (which Renew extends), and must do the work.
	ClaimAcquired ClaimState = iota + 1
	// ClaimDone: the work for the key was completed before; do nothing.
	// ClaimResult.Result holds what Complete recorded.
	ClaimDone
	// ClaimBusy: another delivery holds an unexpired claim; try again later.
	ClaimBusy
)

// String names the state.
func (s ClaimState) String() string {
	switch s {
	case ClaimAcquired:
		return "acquired"
	case ClaimDone:
		return "done"
	case ClaimBusy:
		return "busy"
	}
	return "ClaimState(" + strconv.Itoa(int(s)) + ")"
}

// ClaimResult is a Deduper's answer to Claim.
type ClaimResult struct {
	// State says whether the caller must do the work.
	State ClaimState
	// Token proves the claim with ClaimAcquired; Renew, Complete and Release
	// need it. It is the fencing token of the claim: no other claimant of the
	// key ever holds the same one.
	Token string
	// Result is what Complete recorded, with ClaimDone (CallbackHandler
	// records the orderNo that fulfilled a refNo, so that a second payment
	// under another orderNo is told apart from a retry).
	Result string
}

// Deduper records which callback events were handled, so that each is acted
// on once whatever the gateway's retries (about every 30 s, docs/protocol.md
// "Events and callback delivery"), concurrent duplicates, replicas (the
// receiver rule: fulfil once per refNo) or replays of a captured callback.
// A claim carries a lease: if the claimant crashes, the claim lapses and a
// later delivery can take it; a live claimant extends it with Renew while
// its hook runs. A completed key is never taken over, however late a
// delivery of it comes: it answers ClaimDone for as long as the Deduper
// keeps it, at least its retention (DefaultRetention unless told
// otherwise), which must stay far above CallbackHandler.MaxTxnAge, so that
// a replay is answered by the record or held back by its age
// (docs/assumptions.md A-replay-bound). Implementations must be safe for
// concurrent use.
type Deduper interface {
	// Claim tries to take key for lease. A Claim that returns an error
	// must not leave key held for long: one whose claim may still land
	// (its answer lost, ctx ended while it was in flight) releases it
	// itself once the store answers (pgstore fences it), so that the
	// next delivery is not held off for a lease.
	Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error)
	// Renew extends a held claim to lease from now. ErrClaimLost means the
	// token no longer holds the key: stop the work.
	Renew(ctx context.Context, key, token string, lease time.Duration) error
	// Complete marks key done and records result, which every later claim
	// of key returns with ClaimDone for as long as the key is kept (its
	// retention at least); a done key is never acquired again.
	Complete(ctx context.Context, key, token, result string) error
	// Release gives key back so that the next delivery can try again.
	Release(ctx context.Context, key, token string) error
}

// DefaultRetention is how long a Deduper keeps a completed key unless told
// otherwise: 400 days, far beyond the gateway's retries and beyond
// CallbackHandler's replay bound (DefaultMaxTxnAge, 30 days), so that a
// replay of a fulfilled callback finds its record however late it comes
// within the bound, and is held back past it (docs/assumptions.md
// A-replay-bound). It was 30 days before, the same as the bound, which let
// a replay just past it be fulfilled again.
const DefaultRetention = 400 * 24 * time.Hour

// RetentionReporter is implemented by a Deduper that says how long it keeps
// a completed key. A CallbackHandler then refuses a MaxTxnAge its
// retention cannot cover (docs/assumptions.md A-replay-bound); of a Deduper
// that does not say, it warns once.
type RetentionReporter interface {
	// CompletedRetention is how long a completed key is kept, at least.
	CompletedRetention() time.Duration
}

// MemoryDeduper is the in-process Deduper, the default of CallbackHandler,
// for one replica (a fleet shares one on a database: pgstore). The zero
// value is ready and safe for concurrent use. It keeps Deduper's promises
// within one process: a completed key answers ClaimDone for Retention
// (default DefaultRetention) and is then forgotten, and everything is lost
// when the process ends. Keys and results are at most 65,535 bytes; past
// about 16 GiB of keys Claim refuses new ones. Memory per key and the
// bounds: docs/callbacks.md.
type MemoryDeduper struct {
	// Retention is how long a completed key is remembered (0 means
	// DefaultRetention); keep it far above CallbackHandler.MaxTxnAge.
	Retention time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time

	mu    sync.Mutex
	store *memstore.Store // nil until the first claim
}

// Bounds of a MemoryDeduper.
const (
	// maxDedupeField is the longest key or result, in bytes.
	maxDedupeField = 1<<16 - 1
	// dedupeLimit is the bytes of keys a MemoryDeduper holds before it
	// refuses new ones (memstore.Store accounts for them).
	dedupeLimit = 16 << 30
)

// errDedupeFull is the error of a claim of a new key past dedupeLimit.
var errDedupeFull = errors.New("paygate: MemoryDeduper is full (16 GiB of keys): use a Deduper on a database")

// claimStates are the ClaimState of each memstore outcome.
var claimStates = [...]ClaimState{memstore.Acquired: ClaimAcquired, memstore.Done: ClaimDone, memstore.Busy: ClaimBusy}

// now reads the clock.
func (m *MemoryDeduper) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// tooLong is the error of a key or result longer than maxDedupeField.
func tooLong(what string, n int) error {
	return fmt.Errorf("paygate: MemoryDeduper: %s of %d bytes: want at most %d", what, n, maxDedupeField)
}

// CompletedRetention is Retention, or DefaultRetention when unset.
func (m *MemoryDeduper) CompletedRetention() time.Duration {
	if m.Retention > 0 {
		return m.Retention
	}
	return DefaultRetention
}

// Claim implements Deduper.
func (m *MemoryDeduper) Claim(_ context.Context, key string, lease time.Duration) (ClaimResult, error) {
	if len(key) > maxDedupeField {
		return ClaimResult{}, tooLong("key", len(key))
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		m.store = memstore.New(now, dedupeLimit)
	}
	c, err := m.store.Claim(key, now, lease)
	if errors.Is(err, memstore.ErrFull) {
		return ClaimResult{}, errDedupeFull
	}
	return ClaimResult{State: claimStates[c.Outcome], Token: c.Token, Result: c.Result}, err
}

// held runs op on the store when it exists, and answers ErrClaimLost when
// op finds that the token does not hold the key.
func (m *MemoryDeduper) held(op func(s *memstore.Store, now time.Time) bool) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil || !op(m.store, now) {
		return ErrClaimLost
	}
	return nil
}

// Renew implements Deduper.
func (m *MemoryDeduper) Renew(_ context.Context, key, token string, lease time.Duration) error {
	return m.held(func(s *memstore.Store, now time.Time) bool { return s.Renew(key, token, now, lease) })
}

// Complete implements Deduper.
func (m *MemoryDeduper) Complete(_ context.Context, key, token, result string) error {
	if len(result) > maxDedupeField {
		return tooLong("result", len(result))
	}
	retention := m.Retention
	if retention <= 0 {
		retention = DefaultRetention
	}
	return m.held(func(s *memstore.Store, now time.Time) bool { return s.Complete(key, token, result, now, retention) })
}

// Release implements Deduper.
func (m *MemoryDeduper) Release(_ context.Context, key, token string) error {
	return m.held(func(s *memstore.Store, now time.Time) bool { return s.Release(key, token, now) })
}

// neverWaits marks MemoryDeduper as in-process: its calls take no time
// limit.
func (m *MemoryDeduper) neverWaits() {}

// Len reports how many keys the deduper holds (claims and completed keys,
// lapsed ones not yet dropped included).
func (m *MemoryDeduper) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		return 0
	}
	return m.store.Len()
}
