package memstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkStore requires s's map and heap to agree: every record in the heap
// once, at the slot it knows, under a parent that lapses no later; no
// record in the heap that the map does not hold; and the bytes accounted
// to be the records'.
func checkStore(t *testing.T, s *Store) {
	t.Helper()
	require.Len(t, s.expiry, len(s.keys))
	var used int64
	for i, r := range s.expiry {
		// Plain comparisons: require per record is slow at thousands of them.
		if r.slot != i || s.keys[r.key] != r || i > 0 && s.expiry[(i-1)/2].deadline > r.deadline {
			require.FailNow(t, "map and heap disagree", "%q at %d knows slot %d, map holds %p, not %p", r.key, i, r.slot, s.keys[r.key], r)
		}
		used += PerKey + int64(len(r.key)+len(r.result))
	}
	require.Equal(t, used, s.used)
}

// Deadlines moved at random (renewals, completions) and records removed
// from anywhere (releases) keep the heap in order: expiry drops keys in
// deadline order, each exactly when it lapses, whatever the mix of leases.
func TestExpiryFollowsEachRecordsDeadline(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := New(start, 1<<40)
	rnd := rand.New(rand.NewPCG(3, 5))
	tokens := map[string]string{}
	for i := range 2000 {
		key := fmt.Sprint("k", i)
		c, err := s.Claim(key, start, time.Duration(1+rnd.IntN(600))*time.Second)
		require.NoError(t, err)
		tokens[key] = c.Token
	}
	for i := range 2000 {
		key := fmt.Sprint("k", rnd.IntN(2000))
		tok, ok := tokens[key]
		if !ok {
			continue
		}
		d := time.Duration(1+rnd.IntN(600)) * time.Second
		switch i % 3 {
		case 0:
			require.True(t, s.Renew(key, tok, start, d))
		case 1:
			require.True(t, s.Complete(key, tok, "GW", start, d))
			delete(tokens, key)
		default:
			require.True(t, s.Release(key, tok, start))
			delete(tokens, key)
		}
	}
	checkStore(t, s)
	for sec := 1; sec <= 601; sec++ {
		now := start.Add(time.Duration(sec) * time.Second)
		for len(s.expiry) > 0 && s.expiry[0].deadline <= s.at(now) {
			r := s.expiry[0]
			s.expire(s.at(now))
			require.False(t, s.Stored(r.key), "%q lapsed at %d s and was not dropped", r.key, sec)
		}
		if len(s.expiry) > 0 { // the top lapses first: no other is held past its deadline
			require.Greater(t, s.expiry[0].deadline, s.at(now), "%q is held past its deadline", s.expiry[0].key)
		}
		if sec%100 == 0 {
			checkStore(t, s)
		}
	}
	require.Zero(t, s.Len())
}
