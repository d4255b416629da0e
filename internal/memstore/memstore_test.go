package memstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var day0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// A claim's life: acquired, busy while held, done with its result once
// completed, acquired afresh once its retention is over; a released key
// is acquired by the next claim; a lapsed claim is taken over under a new
// token, and its holder keeps it until then.
func TestStoreClaimLifecycle(t *testing.T) {
	s := New(day0, 1<<40)
	c, err := s.Claim("k", day0, time.Minute)
	require.NoError(t, err)
	require.Equal(t, Acquired, c.Outcome)
	for _, tt := range []struct {
		name string
		at   time.Duration
		want Claim
	}{
		{name: "held", at: 0, want: Claim{Outcome: Busy}},
		{name: "just before the lease ends", at: time.Minute - 1, want: Claim{Outcome: Busy}},
	} {
		got, err := s.Claim("k", day0.Add(tt.at), time.Minute)
		require.NoError(t, err)
		require.Equal(t, tt.want, got, tt.name)
	}
	require.True(t, s.Renew("k", c.Token, day0.Add(2*time.Minute), time.Minute), "a lapsed claim not taken over is still held")
	require.True(t, s.Complete("k", c.Token, "GW1", day0.Add(2*time.Minute), time.Hour))
	got, err := s.Claim("k", day0.Add(time.Hour), time.Minute)
	require.NoError(t, err)
	require.Equal(t, Claim{Outcome: Done, Result: "GW1"}, got)
	got, err = s.Claim("k", day0.Add(2*time.Hour+2*time.Minute), time.Minute)
	require.NoError(t, err)
	require.Equal(t, Acquired, got.Outcome, "past its retention a done key is claimed afresh")

	old := got.Token
	now := day0.Add(3 * time.Hour)
	taken, err := s.Claim("k", now, time.Minute)
	require.NoError(t, err)
	require.Equal(t, Acquired, taken.Outcome, "a lapsed claim is taken over")
	require.NotEqual(t, old, taken.Token)
	require.False(t, s.Renew("k", old, now, time.Minute), "the lapsed holder's token is worthless")
	require.False(t, s.Complete("k", old, "GW2", now, time.Hour))
	require.False(t, s.Release("k", old, now))
	require.True(t, s.Release("k", taken.Token, now))
	require.False(t, s.Stored("k"), "a released key is forgotten")
	got, err = s.Claim("k", now, time.Minute)
	require.NoError(t, err)
	require.Equal(t, Acquired, got.Outcome)
	checkStore(t, s)
}

// A token is the exact text Claim gave: another spelling of its number
// (leading zeros, a sign), another Store's token with the same number, or
// the prefix alone is not it; and a done key holds no token.
func TestStoreTokenText(t *testing.T) {
	s, other := New(day0, 1<<40), New(day0, 1<<40)
	c, err := s.Claim("k", day0, time.Minute)
	require.NoError(t, err)
	oc, err := other.Claim("k", day0, time.Minute)
	require.NoError(t, err)
	require.NotEqual(t, c.Token, oc.Token, "two Stores never share a token")
	num := c.Token[len(s.prefix):]
	for _, tok := range []string{s.prefix + "0" + num, s.prefix + "+" + num, oc.Token, "", s.prefix} {
		require.False(t, s.Renew("k", tok, day0, time.Minute), "%q", tok)
	}
	require.True(t, s.Complete("k", c.Token, "GW1", day0, time.Hour))
	require.False(t, s.Complete("k", c.Token, "GW2", day0, time.Hour), "a done key holds no token")
	require.False(t, s.Renew("k", "", day0, time.Minute), "nor the empty one")
}

// Times are nanoseconds from the Store's epoch: any clock works (a year
// beyond Unix nanoseconds, 1600 or 2300), and a retention too long for
// them is held at the end of the range, never wrapped: a completed key
// stays done, a claim stays held.
func TestStoreFarTimes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		now       time.Time
		retention time.Duration
	}{
		{name: "retention past 2262", now: day0, retention: time.Duration(math.MaxInt64)},
		{name: "clock in 2300", now: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), retention: time.Hour},
		{name: "clock in 1600", now: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), retention: time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.now, 1<<40)
			c, err := s.Claim("k", tt.now, time.Minute)
			require.NoError(t, err)
			busy, err := s.Claim("k", tt.now, time.Minute)
			require.NoError(t, err)
			require.Equal(t, Busy, busy.Outcome)
			require.True(t, s.Complete("k", c.Token, "GW1", tt.now, tt.retention))
			again, err := s.Claim("k", tt.now.Add(time.Minute), time.Minute)
			require.NoError(t, err)
			require.Equal(t, Claim{Outcome: Done, Result: "GW1"}, again)
		})
	}
}

// Expiry is incremental: each call drops at most expirePerCall lapsed
// keys, earliest first, so the store drains without a full sweep, and a
// duplicate claim drains it too.
func TestStoreExpiryIsIncremental(t *testing.T) {
	now := day0
	s := New(now, 1<<40)
	for i := range 1000 { // x999 lapses last
		_, err := s.Claim(fmt.Sprint("x", i), now, time.Second+time.Duration(i))
		require.NoError(t, err)
	}
	now = now.Add(time.Minute) // every x key lapsed
	c, err := s.Claim("x999", now, time.Second)
	require.NoError(t, err)
	require.Equal(t, Acquired, c.Outcome, "a lapsed claim not yet dropped is taken over")
	require.Equal(t, 1000-expirePerCall, s.Len())
	require.False(t, s.Stored("x0"), "the earliest lapsed first")
	require.True(t, s.Stored("x998"))
	now = now.Add(time.Minute)
	for i := 1; i <= 100; i++ {
		_, err := s.Claim(fmt.Sprint("y", i), now, time.Hour)
		require.NoError(t, err)
		require.Equal(t, 1000-expirePerCall+i-expirePerCall*i, s.Len(), "claim %d drops exactly %d lapsed keys", i, expirePerCall)
	}
	for range 2000 {
		_, err := s.Claim("y1", now, time.Hour)
		require.NoError(t, err)
	}
	require.Equal(t, 100, s.Len(), "only the live y keys remain")
	checkStore(t, s)
}

// Slow hooks renewed while events keep coming: every call drops lapsed
// keys, so a day of 20 hooks in flight, each renewed every 10 s for 2
// minutes, a new event every 6 s and an hour's retention, holds about an
// hour of keys.
func TestStoreBoundedUnderRenewals(t *testing.T) {
	now := day0
	s := New(now, 1<<40)
	type hook struct {
		key, token string
		renewals   int
	}
	var running []*hook
	const lease = 30 * time.Second
	for sec := range 24 * 3600 {
		now = now.Add(time.Second)
		if sec%6 == 0 {
			key := fmt.Sprint("fulfil|INV-", sec)
			c, err := s.Claim(key, now, lease)
			require.NoError(t, err)
			require.Equal(t, Acquired, c.Outcome)
			running = append(running, &hook{key: key, token: c.Token})
		}
		kept := running[:0]
		for i, h := range running {
			if (sec+i)%10 == 0 {
				require.True(t, s.Renew(h.key, h.token, now, lease))
				h.renewals++
			}
			if h.renewals == 12 {
				require.True(t, s.Complete(h.key, h.token, "GW", now, time.Hour))
				continue
			}
			kept = append(kept, h)
		}
		running = kept
	}
	inRetention := int(time.Hour / (6 * time.Second))
	require.Less(t, s.Len(), inRetention+len(running)+50, "keys held")
	checkStore(t, s)
}

// Past its limit of bytes a Store refuses new keys with ErrFull and goes on
// answering for the keys it holds; keys and results count their length; a
// released or dropped key's bytes are freed for a new one.
func TestStoreLimit(t *testing.T) {
	now := day0
	s := New(now, 3*PerKey+10)
	for _, key := range []string{"a", "b", "c"} {
		_, err := s.Claim(key, now, time.Minute)
		require.NoError(t, err)
	}
	_, err := s.Claim("k3456789", now, time.Minute) // 3*PerKey+3 < limit: room for one more
	require.NoError(t, err)
	_, err = s.Claim("e", now, time.Minute)
	require.ErrorIs(t, err, ErrFull)
	busy, err := s.Claim("a", now, time.Minute)
	require.NoError(t, err)
	require.Equal(t, Busy, busy.Outcome, "a full store answers for the keys it holds")
	require.Equal(t, 4*PerKey+11, int(s.used))

	tokenOf := func(key string) string { return s.keys[key].token }
	require.True(t, s.Complete("b", tokenOf("b"), strings.Repeat("r", 100), now, time.Minute), "completing never needs room")
	require.Equal(t, 4*PerKey+111, int(s.used))
	require.True(t, s.Release("k3456789", tokenOf("k3456789"), now))
	require.True(t, s.Release("a", tokenOf("a"), now))
	require.Equal(t, 2*PerKey+102, int(s.used))
	_, err = s.Claim("e", now, time.Minute)
	require.NoError(t, err, "released keys' bytes are free")
	now = now.Add(time.Hour) // every key lapsed: claims drop them
	for range 3 {
		_, err = s.Claim("e", now, time.Minute)
		require.NoError(t, err)
	}
	require.Equal(t, 1, s.Len())
	require.Equal(t, PerKey+1, int(s.used))
	checkStore(t, s)
}

// modelClaim is the reference's state of one key.
type modelClaim struct {
	deadline time.Time
	token    string // "" once done
	result   string
}

// storeModel drives a Store and a map side by side on a fake clock.
type storeModel struct {
	t    *testing.T
	s    *Store
	now  time.Time
	keys map[string]*modelClaim
	rnd  *rand.Rand
}

// text is a key or result of a random length.
func (m *storeModel) text(prefix string, i int) string {
	lengths := []int{0, 1, 7, 16, 23, 40, 300, 1500}
	return fmt.Sprint(prefix, i, "|") + strings.Repeat("x", lengths[m.rnd.IntN(len(lengths))])
}

// claim claims key on both and requires the same answer.
func (m *storeModel) claim(key string, lease time.Duration) {
	c, err := m.s.Claim(key, m.now, lease)
	require.NoError(m.t, err)
	want, ok := m.keys[key]
	switch {
	case ok && m.now.Before(want.deadline) && want.token == "":
		require.Equal(m.t, Claim{Outcome: Done, Result: want.result}, c, key)
	case ok && m.now.Before(want.deadline):
		require.Equal(m.t, Claim{Outcome: Busy}, c, key)
	default:
		require.Equal(m.t, Acquired, c.Outcome, key)
		m.keys[key] = &modelClaim{deadline: m.now.Add(lease), token: c.Token}
	}
}

// held is a key whose claim is within its lease, if any of a few picked
// at random is.
func (m *storeModel) held(pool []string) (string, *modelClaim) {
	for range 4 {
		k := pool[m.rnd.IntN(len(pool))]
		if c, ok := m.keys[k]; ok && c.token != "" && m.now.Before(c.deadline) {
			return k, c
		}
	}
	return "", nil
}

// step runs one random operation on both.
func (m *storeModel) step(pool []string, i int) {
	const retention = 10 * time.Second
	leases := []time.Duration{time.Second, 5 * time.Second, time.Minute}
	m.now = m.now.Add(time.Duration(m.rnd.IntN(50)) * time.Millisecond)
	key, c := m.held(pool)
	switch op := m.rnd.IntN(10); {
	case op < 5 || c == nil:
		m.claim(pool[m.rnd.IntN(len(pool))], leases[m.rnd.IntN(len(leases))])
	case op < 7:
		result := m.text("GW", i)
		require.True(m.t, m.s.Complete(key, c.token, result, m.now, retention))
		require.False(m.t, m.s.Complete(key, c.token, result, m.now, retention))
		c.token, c.result, c.deadline = "", result, m.now.Add(retention)
	case op < 8:
		require.True(m.t, m.s.Release(key, c.token, m.now))
		require.False(m.t, m.s.Release(key, c.token, m.now))
		delete(m.keys, key)
	default:
		lease := leases[m.rnd.IntN(len(leases))]
		require.True(m.t, m.s.Renew(key, c.token, m.now, lease))
		c.deadline = m.now.Add(lease)
	}
}

// The Store answers as a map would, through keys and results of every
// length, renewals, completions, releases and expiry, and its map and
// heap stay in agreement.
func TestStoreMatchesModel(t *testing.T) {
	m := &storeModel{t: t, s: New(day0, 1<<40), now: day0, keys: map[string]*modelClaim{}, rnd: rand.New(rand.NewPCG(1, 2))}
	pool := make([]string, 5_000)
	for i := range pool {
		pool[i] = m.text("fulfil|INV-", i)
	}
	for i := range 100_000 {
		m.step(pool, i)
		if i%20_000 == 0 {
			checkStore(t, m.s)
		}
	}
	for _, k := range pool { // every key answers as the model says
		m.claim(k, time.Hour)
	}
	checkStore(t, m.s)
}

// A completed key past its retention is Done for as long as it is still
// stored, never taken over: expire forgets a few keys a call, so one past
// its deadline can wait its turn.
func TestStoreDoneNeverTakenOver(t *testing.T) {
	s := New(day0, 1<<40)
	for i, key := range []string{"a", "b", "c"} {
		c, err := s.Claim(key, day0, time.Minute)
		require.NoError(t, err)
		require.True(t, s.Complete(key, c.Token, "GW-"+key, day0, time.Hour+time.Duration(i)))
	}
	late := day0.Add(2 * time.Hour)
	got, err := s.Claim("c", late, time.Minute) // the latest deadline: expire drops a and b first
	require.NoError(t, err)
	require.Equal(t, Claim{Outcome: Done, Result: "GW-c"}, got, "past its retention, still stored")
	require.True(t, s.Stored("c"))
}

// A store whose bytes reach its limit exactly is full: the limit is the
// most it holds, not one key more.
func TestStoreFullAtExactlyItsLimit(t *testing.T) {
	s := New(day0, 2*PerKey+2)
	for _, key := range []string{"a", "b"} {
		_, err := s.Claim(key, day0, time.Minute)
		require.NoError(t, err)
	}
	require.Equal(t, s.limit, s.used)
	_, err := s.Claim("c", day0, time.Minute)
	require.ErrorIs(t, err, ErrFull)
}
