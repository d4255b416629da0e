package paygate

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
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
// "Callback delivery"), concurrent duplicates or replicas (the receiver rule:
// fulfil once per refNo). A claim carries a lease: if the claimant crashes,
// the claim lapses and a later delivery can take it; a live claimant extends
// it with Renew while its hook runs. Implementations must be safe for
// concurrent use.
type Deduper interface {
	// Claim tries to take key for lease.
	Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error)
	// Renew extends a held claim to lease from now. ErrClaimLost means the
	// token no longer holds the key: stop the work.
	Renew(ctx context.Context, key, token string, lease time.Duration) error
	// Complete marks key done for good (within the deduper's retention) and
	// records result, which later claims of key return.
	Complete(ctx context.Context, key, token, result string) error
	// Release gives key back so that the next delivery can try again.
	Release(ctx context.Context, key, token string) error
}

// ErrClaimLost is returned by Renew, Complete or Release when the token no
// longer holds the key (its lease ran out and another delivery took it).
var ErrClaimLost = errors.New("paygate: dedupe claim lost (lease expired)")

// DefaultRetention is how long a Deduper remembers a completed key unless
// told otherwise: far longer than the gateway goes on retrying a callback.
const DefaultRetention = 30 * 24 * time.Hour

// MemoryDeduper is the in-process Deduper, the default of CallbackHandler:
// right for a merchant running one replica. Completed keys are kept for
// Retention (default DefaultRetention), then forgotten. Expiry is
// incremental: every Claim drops at most two lapsed keys, found through a
// heap ordered by expiry, so no call ever scans the whole store and a claim
// costs O(log n) in the number of stored keys. The zero value is ready.
type MemoryDeduper struct {
	// Retention is how long a completed key is remembered.
	Retention time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*dedupeEntry
	byTime  expiryHeap
	prefix  string        // random per deduper, so tokens never repeat across instances
	seq     atomic.Uint64 // token counter
}

// dedupeEntry is the state of one key.
type dedupeEntry struct {
	key     string
	done    bool
	token   string
	result  string
	expires time.Time // lease end, or retention end once done
	index   int       // position in the expiry heap
}

// expiryHeap orders entries by expiry, earliest first (container/heap).
type expiryHeap []*dedupeEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *expiryHeap) Push(x any) {
	e := x.(*dedupeEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// expirePerClaim is how many lapsed keys one Claim drops at most. A Claim
// adds at most one key, so two per call keep the store from growing with
// lapsed keys while bounding every call's work.
const expirePerClaim = 2

// now reads the clock.
func (m *MemoryDeduper) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Claim implements Deduper.
func (m *MemoryDeduper) Claim(_ context.Context, key string, lease time.Duration) (ClaimResult, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		if err := m.init(); err != nil {
			return ClaimResult{}, err
		}
	}
	for i := 0; i < expirePerClaim && len(m.byTime) > 0 && !now.Before(m.byTime[0].expires); i++ {
		delete(m.entries, heap.Pop(&m.byTime).(*dedupeEntry).key)
	}
	e, ok := m.entries[key]
	if ok && now.Before(e.expires) {
		if e.done {
			return ClaimResult{State: ClaimDone, Result: e.result}, nil
		}
		return ClaimResult{State: ClaimBusy}, nil
	}
	token := m.prefix + strconv.FormatUint(m.seq.Add(1), 36)
	if ok { // lapsed but not yet dropped: take it over
		e.done, e.token, e.result, e.expires = false, token, "", now.Add(lease)
		heap.Fix(&m.byTime, e.index)
	} else {
		e = &dedupeEntry{key: key, token: token, expires: now.Add(lease)}
		m.entries[key] = e
		heap.Push(&m.byTime, e)
	}
	return ClaimResult{State: ClaimAcquired, Token: token}, nil
}

// init makes the store and the deduper's random token prefix.
func (m *MemoryDeduper) init() error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	m.prefix = hex.EncodeToString(b[:]) + "-"
	m.entries = make(map[string]*dedupeEntry)
	return nil
}

// held returns the claim of key under token, or nil. A claim whose lease
// ran out but that nobody has taken over is still held: its token proves no
// other delivery has started the work.
func (m *MemoryDeduper) held(key, token string) *dedupeEntry {
	e, ok := m.entries[key]
	if !ok || e.done || e.token != token {
		return nil
	}
	return e
}

// Renew implements Deduper.
func (m *MemoryDeduper) Renew(_ context.Context, key, token string, lease time.Duration) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.held(key, token)
	if e == nil {
		return ErrClaimLost
	}
	e.expires = now.Add(lease)
	heap.Fix(&m.byTime, e.index)
	return nil
}

// Complete implements Deduper.
func (m *MemoryDeduper) Complete(_ context.Context, key, token, result string) error {
	retention := m.Retention
	if retention <= 0 {
		retention = DefaultRetention
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.held(key, token)
	if e == nil {
		return ErrClaimLost
	}
	e.done, e.token, e.result, e.expires = true, "", result, now.Add(retention)
	heap.Fix(&m.byTime, e.index)
	return nil
}

// Release implements Deduper.
func (m *MemoryDeduper) Release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.held(key, token)
	if e == nil {
		return ErrClaimLost
	}
	delete(m.entries, key)
	heap.Remove(&m.byTime, e.index)
	return nil
}

// Len reports how many keys the deduper holds (claims and completed keys,
// lapsed ones not yet dropped included).
func (m *MemoryDeduper) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
