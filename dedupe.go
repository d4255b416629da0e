package paygate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
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
// Expiry is incremental: every Claim drops at most two lapsed keys (and a
// few outdated index records), so no call ever scans the store and a claim
// costs about the same at ten thousand keys as at a million. Lapsed keys are
// found through one first-in-first-out queue per lease duration, which time
// keeps in order; CallbackHandler uses two durations (its lease and the
// retention). Beyond maxExpiryQueues distinct durations, records share one
// queue that is not in time order, and their keys may be dropped late
// (never early: a claim always checks the key's own expiry).
//
// A key costs about 170 bytes of heap at a million keys, its key and result
// of 16 bytes each included (BENCHMARKS.md): a 48-byte entry, a map slot,
// an expiry record.
type MemoryDeduper struct {
	// Retention is how long a completed key is remembered.
	Retention time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*dedupeEntry
	queues  map[time.Duration]*expiryQueue
	order   []*expiryQueue // the queues, for expire to range over
	epoch   time.Time      // the clock at the first claim (see at)
	prefix  string         // random per deduper, so tokens never repeat across instances
	seq     atomic.Uint64  // token counter
}

// dedupeEntry is the state of one key, in 48 bytes: at a million keys
// every byte of it is a megabyte.
type dedupeEntry struct {
	key    string
	result string
	// expires is the lease's end, or the retention's end once done (see
	// at); entryGone once dropped from the store.
	expires int64
	// token is the number of the claim's token (tokenOf), 0 once done.
	token uint64
}

// entryGone is the expires of an entry dropped from the store.
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

// expiryRecord says that e expires at expires (see at), unless
// e has changed since.
type expiryRecord struct {
	expires int64
	e       *dedupeEntry
}

// stale reports whether the record no longer describes its entry (a
// dropped entry's expires is entryGone, which no record holds).
func (r expiryRecord) stale() bool { return r.e.expires != r.expires }

// expiryQueue is a FIFO of records, all made with one duration: a linked
// list of fixed-size blocks, so that no push or pop ever moves more than
// one record.
type expiryQueue struct {
	head, tail *expiryBlock
	first      int // next record to pop in head
}

// expiryBlock holds queued records; n of them are filled.
type expiryBlock struct {
	recs [256]expiryRecord
	n    int
	next *expiryBlock
}

func (q *expiryQueue) push(r expiryRecord) {
	if q.tail == nil || q.tail.n == len(q.tail.recs) {
		b := &expiryBlock{}
		if q.tail == nil {
			q.head, q.first = b, 0
		} else {
			q.tail.next = b
		}
		q.tail = b
	}
	q.tail.recs[q.tail.n] = r
	q.tail.n++
}

func (q *expiryQueue) peek() (expiryRecord, bool) {
	if q.head == nil || q.first == q.head.n {
		return expiryRecord{}, false
	}
	return q.head.recs[q.first], true
}

func (q *expiryQueue) pop() {
	q.head.recs[q.first] = expiryRecord{}
	if q.first++; q.first == len(q.head.recs) {
		q.head, q.first = q.head.next, 0
		if q.head == nil {
			q.tail = nil
		}
	}
}

// each calls f for every queued record, oldest first (for tests).
func (q *expiryQueue) each(f func(expiryRecord)) {
	for b, i := q.head, q.first; b != nil; b, i = b.next, 0 {
		for ; i < b.n; i++ {
			f(b.recs[i])
		}
	}
}

// Bounds of the incremental expiry.
const (
	// expirePerCall is how many lapsed keys one Claim drops at most. A
	// Claim adds at most one key, so two keep the store from growing with
	// lapsed keys while bounding every call's work.
	expirePerCall = 2
	// stalePerCall is how many outdated records (of renewed, completed or
	// released claims) one Claim discards at most.
	stalePerCall = 8
	// maxExpiryQueues bounds the queues; further durations share one.
	maxExpiryQueues = 8
	// overflowQueue keys the shared queue.
	overflowQueue = time.Duration(-1)
)

// track records that e expires after d; the lock is held.
func (m *MemoryDeduper) track(e *dedupeEntry, d time.Duration) {
	q := m.queues[d]
	if q == nil {
		if len(m.queues) >= maxExpiryQueues {
			d = overflowQueue
		}
		if q = m.queues[d]; q == nil {
			q = &expiryQueue{}
			m.queues[d] = q
			m.order = append(m.order, q)
		}
	}
	q.push(expiryRecord{expires: e.expires, e: e})
}

// expire drops up to expirePerCall lapsed keys, earliest first, and
// discards up to stalePerCall outdated records on the way; the lock is held.
func (m *MemoryDeduper) expire(now int64) {
	dropped, discarded := 0, 0
	for dropped < expirePerCall && discarded < stalePerCall {
		var first *expiryQueue
		var rec expiryRecord
		for _, q := range m.order {
			if r, ok := q.peek(); ok && (first == nil || r.expires < rec.expires) {
				first, rec = q, r
			}
		}
		if first == nil || now < rec.expires {
			return
		}
		first.pop()
		if rec.stale() {
			discarded++
			continue
		}
		rec.e.expires = entryGone
		delete(m.entries, rec.e.key)
		dropped++
	}
}

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
		if err := m.init(now); err != nil {
			return ClaimResult{}, err
		}
	}
	m.expire(m.at(now))
	e, ok := m.entries[key]
	if ok && m.at(now) < e.expires {
		if e.token == 0 {
			return ClaimResult{State: ClaimDone, Result: e.result}, nil
		}
		return ClaimResult{State: ClaimBusy}, nil
	}
	n := m.seq.Add(1)
	if ok { // lapsed but not yet dropped: take it over
		e.token, e.result = n, ""
	} else {
		e = &dedupeEntry{key: key, token: n}
		m.entries[key] = e
	}
	e.expires = m.at(now.Add(lease))
	m.track(e, lease)
	return ClaimResult{State: ClaimAcquired, Token: m.tokenOf(n)}, nil
}

// init makes the store and the deduper's random token prefix, with now as
// its epoch.
func (m *MemoryDeduper) init(now time.Time) error {
	m.epoch = now
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	m.prefix = hex.EncodeToString(b[:]) + "-"
	m.entries = make(map[string]*dedupeEntry)
	m.queues = make(map[time.Duration]*expiryQueue)
	return nil
}

// held returns the claim of key under token, or nil. A claim whose lease
// ran out but that nobody has taken over is still held: its token proves no
// other delivery has started the work.
func (m *MemoryDeduper) held(key, token string) *dedupeEntry {
	e, ok := m.entries[key]
	if !ok || !m.isToken(token, e.token) {
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
	e.expires = m.at(now.Add(lease))
	m.track(e, lease)
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
	e.token, e.result, e.expires = 0, result, m.at(now.Add(retention))
	m.track(e, retention)
	return nil
}

// neverWaits marks MemoryDeduper as in-process: its calls take no time
// limit.
func (m *MemoryDeduper) neverWaits() {}

// Release implements Deduper.
func (m *MemoryDeduper) Release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.held(key, token)
	if e == nil {
		return ErrClaimLost
	}
	e.expires = entryGone
	delete(m.entries, key)
	return nil
}

// Len reports how many keys the deduper holds (claims and completed keys,
// lapsed ones not yet dropped included).
func (m *MemoryDeduper) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
