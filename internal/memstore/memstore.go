// Package memstore is the engine of paygate's MemoryDeduper: claims of keys
// under leases, fenced by tokens, and completed keys remembered with their
// results, all in one process's memory.
//
// It is a Go map from key to record plus a binary heap of the records by
// deadline (container/heap), not a custom hash table: MemoryDeduper is the
// default of a merchant running a single replica, where a few hundred
// bytes a key and a map's cost per claim are far below what the callback
// stream can fill; fleets (and anyone who needs more) use pgstore, whose
// table lives in PostgreSQL. A Store is not safe for concurrent use: the
// caller serialises every call (MemoryDeduper holds its lock).
package memstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Outcome is a Store's answer to a claim.
type Outcome int

const (
	// Acquired: the caller holds the key under Claim.Token.
	Acquired Outcome = iota + 1
	// Done: the key was completed; Claim.Result is what Complete recorded.
	Done
	// Busy: another claimant holds the key and its lease has not run out.
	Busy
)

// Claim is a Store's answer to Claim.
type Claim struct {
	// Outcome says whether the caller must do the work.
	Outcome Outcome
	// Token proves the claim, with Acquired.
	Token string
	// Result is what Complete recorded, with Done.
	Result string
}

// ErrFull is the error of a claim of a new key when the Store already
// accounts for its Limit of bytes.
var ErrFull = errors.New("memstore: full")

// PerKey is the bytes a Store accounts for each key besides the key's and
// the result's own: its record, its map slot and its heap slot, as measured
// at a million keys (bench/'s BenchmarkMemoryDeduper reports the live heap
// per key).
const PerKey = 128

// Store is the keys, their records and the heap that expires them.
type Store struct {
	keys   map[string]*record
	expiry expiryHeap
	epoch  time.Time // the clock when the Store was made (see at)
	prefix string    // random per Store, so that tokens never repeat across Stores
	seq    uint64    // the last token's number
	used   int64     // bytes accounted for: PerKey and each key's and result's length
	limit  int64
}

// New returns an empty Store whose clock starts at now and that refuses
// new keys once it accounts for limit bytes (see PerKey).
func New(now time.Time, limit int64) *Store {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program instead
	return &Store{
		keys:   make(map[string]*record),
		epoch:  now,
		prefix: hex.EncodeToString(b[:]) + "-",
		limit:  limit,
	}
}

// at is t in nanoseconds since the Store's epoch. time.Sub saturates, so
// times within 292 years of the epoch are told apart and further ones are
// held at the ends of the range, never wrapped.
func (s *Store) at(t time.Time) int64 { return int64(t.Sub(s.epoch)) }

// Claim takes key for lease from now: a new key, or a claim whose lease
// has lapsed, is Acquired under a token never handed out before; a
// completed key is Done for as long as it is stored, whatever its
// deadline (a completed key is never taken over; expire forgets it once
// its retention ends); a claim within its lease is Busy. Up to expirePerCall lapsed
// keys are dropped first. It fails only with ErrFull, for a new key.
func (s *Store) Claim(key string, now time.Time, lease time.Duration) (Claim, error) {
	at, deadline := s.at(now), s.at(now.Add(lease))
	s.expire(at)
	r := s.keys[key]
	switch {
	case r == nil:
		if s.used >= s.limit {
			return Claim{}, ErrFull
		}
		r = &record{key: key, deadline: deadline}
		s.keys[key] = r
		s.used += PerKey + int64(len(key))
		s.expiry.push(r)
	case r.token == "":
		return Claim{Outcome: Done, Result: r.result}, nil
	case at < r.deadline:
		return Claim{Outcome: Busy}, nil
	default: // lapsed: taken over
		s.setDeadline(r, deadline)
	}
	s.seq++
	var buf [32]byte // the prefix's 17 bytes and at most 13 digits, on the stack
	r.token = string(strconv.AppendUint(append(buf[:0], s.prefix...), s.seq, 36))
	return Claim{Outcome: Acquired, Token: r.token}, nil
}

// held is key's record when token holds it. A claim whose lease ran out is
// still held until another claim takes the key over or expiry drops it:
// its token proves that no other claimant has started the work.
func (s *Store) held(key, token string) *record {
	r := s.keys[key]
	if r == nil || r.token == "" || r.token != token {
		return nil
	}
	return r
}

// Renew extends the claim of key under token to lease from now; false
// when token does not hold key.
func (s *Store) Renew(key, token string, now time.Time, lease time.Duration) bool {
	r := s.held(key, token)
	if r != nil {
		s.setDeadline(r, s.at(now.Add(lease)))
	}
	s.expire(s.at(now))
	return r != nil
}

// Complete marks key, held under token, done with result, remembered for
// retention from now; false when token does not hold key.
func (s *Store) Complete(key, token, result string, now time.Time, retention time.Duration) bool {
	r := s.held(key, token)
	if r != nil {
		r.token = ""
		s.used += int64(len(result) - len(r.result))
		r.result = result
		s.setDeadline(r, s.at(now.Add(retention)))
	}
	s.expire(s.at(now))
	return r != nil
}

// Release forgets key, held under token, so that the next claim acquires
// it; false when token does not hold key.
func (s *Store) Release(key, token string, now time.Time) bool {
	r := s.held(key, token)
	if r != nil {
		s.drop(r)
	}
	s.expire(s.at(now))
	return r != nil
}

// Len is how many keys the Store holds, lapsed ones not yet dropped
// included.
func (s *Store) Len() int { return len(s.keys) }

// Stored reports whether the Store holds key, lapsed or not.
func (s *Store) Stored(key string) bool { return s.keys[key] != nil }

// drop forgets r.
func (s *Store) drop(r *record) {
	s.expiry.remove(r.slot)
	delete(s.keys, r.key)
	s.used -= PerKey + int64(len(r.key)+len(r.result))
}

// expirePerCall is how many lapsed keys one call drops at most: a Claim
// adds at most one key, so two keep the Store from growing with lapsed
// keys while no call does more than a bounded amount of work.
const expirePerCall = 2

// expire drops up to expirePerCall keys whose deadline is at or before
// now, earliest first.
func (s *Store) expire(now int64) {
	for range expirePerCall {
		if len(s.expiry) == 0 || now < s.expiry[0].deadline {
			return
		}
		s.drop(s.expiry[0])
	}
}
