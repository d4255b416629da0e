package paygate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
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
// "Events and callback delivery"), concurrent duplicates or replicas (the
// receiver rule: fulfil once per refNo). A claim carries a lease: if the
// claimant crashes, the claim lapses and a later delivery can take it; a
// live claimant extends it with Renew while its hook runs. Implementations
// must be safe for concurrent use.
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

// DefaultRetention is how long a Deduper remembers a completed key unless
// told otherwise: far longer than the gateway goes on retrying a callback.
const DefaultRetention = 30 * 24 * time.Hour

// MemoryDeduper is the in-process Deduper, the default of CallbackHandler:
// right for a merchant running one replica. Completed keys are kept for
// Retention (default DefaultRetention), then forgotten. The zero value is
// ready.
//
// Expiry is incremental: every call (Claim, Renew, Complete, Release) drops
// at most two lapsed keys (and a few outdated expiry records), so no call
// ever scans the store and a claim costs about the same at ten thousand keys
// as at a million; as every call that leaves an outdated record also
// discards some, renewals (a slow hook's, every lease/3) cannot outrun the
// discarding and hold lapsed keys in the store. Lapsed keys are
// found through one first-in-first-out queue per lease duration, which time
// keeps in order; CallbackHandler uses two durations (its lease and the
// retention). Beyond maxExpiryQueues distinct durations, records share one
// queue that is not in time order, and their keys may be dropped late
// (never early: a claim always checks the key's own expiry).
//
// The store holds no pointer per key, so the garbage collector does not
// scan it: each key is a chunk of bytes in 256 KiB pages (its expiry, its
// token's number, the key and the result), found through a hash index that
// grows by rebuilding one table of at most 1,024 slots at a time, never by
// rehashing the whole. A key of the handler costs about 90 bytes at a
// million keys (BENCHMARKS.md); pages are kept for reuse, not returned to
// the Go heap, when the store shrinks. Keys and results are at most 65,535
// bytes each (Claim and Complete refuse longer ones), and a store of about
// 250 million keys (16 GiB of chunks) refuses new keys: Claim returns an
// error, which CallbackHandler answers 503.
type MemoryDeduper struct {
	// Retention is how long a completed key is remembered.
	Retention time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time

	mu     sync.Mutex
	store  *dedupeStore // nil until the first claim
	epoch  time.Time    // the clock at the first claim (see at)
	prefix string       // random per deduper, so tokens never repeat across instances
	seq    uint64       // token counter
}

// entryGone is the expiry of a freed chunk.
const entryGone = math.MinInt64

// at is t in nanoseconds since the deduper's epoch (the clock at its first
// claim), above entryGone: time.Sub saturates, so times within 292 years of
// the epoch are told apart and further ones held at the ends, never
// wrapped.
func (m *MemoryDeduper) at(t time.Time) int64 { return max(int64(t.Sub(m.epoch)), entryGone+1) }

// tokenOf is the text of token number n: the deduper's prefix and n in
// base 36.
func (m *MemoryDeduper) tokenOf(n uint64) string { return m.prefix + strconv.FormatUint(n, 36) }

// isToken reports whether token is the text of token number n, without
// building that text.
func (m *MemoryDeduper) isToken(token string, n uint64) bool {
	rest, ok := strings.CutPrefix(token, m.prefix)
	var b [16]byte
	return ok && n != 0 && rest == string(strconv.AppendUint(b[:0], n, 36))
}

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
		if err := m.init(now); err != nil {
			return ClaimResult{}, err
		}
	}
	s := m.store
	tag := s.tag(key)
	s.prefetch(tag)
	s.expire(m.at(now))
	t, pos, ref := s.lookup(key, tag)
	if ref == 0 {
		if ref = s.add(key, tag, t, pos); ref == 0 {
			return ClaimResult{}, errDedupeFull
		}
	} else if c := s.arena.chunk(ref); m.at(now) < c.expires() {
		if c.token() == 0 {
			return ClaimResult{State: ClaimDone, Result: string(c.result())}, nil
		}
		return ClaimResult{State: ClaimBusy}, nil
	}
	// A new key, or a lapsed one not yet dropped: take it.
	m.seq++
	c, expires := s.arena.chunk(ref), m.at(now.Add(lease))
	c.setToken(m.seq)
	c.setExpires(expires)
	s.track(ref, tag, expires, lease)
	return ClaimResult{State: ClaimAcquired, Token: m.tokenOf(m.seq)}, nil
}

// init makes the store and the deduper's random token prefix, with now as
// its epoch.
func (m *MemoryDeduper) init(now time.Time) error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	m.epoch = now
	m.prefix = hex.EncodeToString(b[:]) + "-"
	m.store = newDedupeStore()
	return nil
}

// held finds the claim of key under token: its slot and chunk, or a zero
// ref. A claim whose lease ran out but that nobody has taken over is still
// held: its token proves no other delivery has started the work.
func (m *MemoryDeduper) held(key, token string) (t *indexTable, pos, ref uint32) {
	if m.store == nil || len(key) > maxDedupeField {
		return nil, 0, 0
	}
	t, pos, ref = m.store.lookup(key, m.store.tag(key))
	if ref == 0 || !m.isToken(token, m.store.arena.chunk(ref).token()) {
		return nil, 0, 0
	}
	return t, pos, ref
}

// Renew implements Deduper.
func (m *MemoryDeduper) Renew(_ context.Context, key, token string, lease time.Duration) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	t, pos, ref := m.held(key, token)
	if ref == 0 {
		return ErrClaimLost
	}
	m.store.retrack(ref, t.tag(pos), m.at(now.Add(lease)), lease)
	m.store.expire(m.at(now))
	return nil
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
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	t, pos, ref := m.held(key, token)
	if ref == 0 {
		return ErrClaimLost
	}
	s := m.store
	if c := s.arena.chunk(ref); chunkSize(c.keyLen(), len(result)) != c.size() {
		// The result does not fit the chunk's room: move to one that fits.
		moved := s.arena.alloc(chunkSize(c.keyLen(), len(result)))
		if moved == 0 {
			return errDedupeFull
		}
		copy(s.arena.chunk(moved), c[:chunkHeader+c.keyLen()])
		s.release(ref)
		t.slots[pos] = t.slots[pos]&^0xffffffff | uint64(moved)
		ref = moved
	}
	c := s.arena.chunk(ref)
	c.setResult(result)
	c.setToken(0)
	s.retrack(ref, t.tag(pos), m.at(now.Add(retention)), retention)
	s.expire(m.at(now))
	return nil
}

// neverWaits marks MemoryDeduper as in-process: its calls take no time
// limit.
func (m *MemoryDeduper) neverWaits() {}

// Release implements Deduper.
func (m *MemoryDeduper) Release(_ context.Context, key, token string) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	t, pos, ref := m.held(key, token)
	if ref == 0 {
		return ErrClaimLost
	}
	m.store.drop(t, pos, ref)
	m.store.expire(m.at(now))
	return nil
}

// Len reports how many keys the deduper holds (claims and completed keys,
// lapsed ones not yet dropped included).
func (m *MemoryDeduper) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.store == nil {
		return 0
	}
	return m.store.index.n
}
