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
	// Claim tries to take key for lease.
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

// MemoryDeduper is the in-process Deduper, the default of CallbackHandler:
// right for a merchant running one replica (a fleet of replicas shares a
// Deduper on a database, sqldedup). The zero value is ready; it is safe
// for concurrent use.
//
// It promises what Deduper does, within one process: a claim lapses at the
// end of its lease and the next Claim takes it over with a new token (a
// lapsed claim nobody has taken over is still its holder's until then);
// Renew, Complete and Release work only with the token of the claim that
// holds the key, and answer ErrClaimLost otherwise; a completed key is
// never taken over: it answers ClaimDone, with its result, for Retention
// (default DefaultRetention, 400 days) and is then forgotten, so a replay
// of its callback within CallbackHandler's MaxTxnAge always finds it. Its
// state is lost when the process ends: a callback handled before a restart
// may be handled again after it (within MaxTxnAge).
//
// Lapsed keys are dropped a few at a time by every call, earliest first,
// so no call scans the store and memory follows the keys in their lease or
// retention: a completed key of CallbackHandler costs about 90 bytes
// (BENCHMARKS.md, the MemoryDeduper row), each kept the 400 days of
// DefaultRetention, so a million fulfilled orders a year hold about 100
// MB. Keys and results are at most 65,535 bytes each (Claim and Complete
// refuse longer ones with an error). Memory is bounded: past
// about 16 GiB of keys, each counted as its key's and result's bytes and
// a fixed overhead for its bookkeeping (about 100 million of
// CallbackHandler's keys), Claim refuses new keys with an error, which
// CallbackHandler answers 503, and goes on answering for the keys it
// holds.
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
