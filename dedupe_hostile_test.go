package paygate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileClaim is the reference's state of one key: a map entry guarded by
// the test's own order of calls.
type hostileClaim struct {
	expires time.Time
	token   string // the holder's, "" once done
	result  string
}

// hostileModel drives a MemoryDeduper and a map side by side with every
// token a caller could hold (the holder's, a previous holder's after a
// takeover, a stranger's, none), leases that lapse, zero and negative
// leases, many distinct leases, clock jumps, and empty, NUL, non-UTF-8
// and longest keys.
type hostileModel struct {
	t      *testing.T
	d      *MemoryDeduper
	now    time.Time
	keys   map[string]*hostileClaim
	past   map[string][]string // tokens of earlier holders of a key
	issued map[string]bool     // every token ever handed out
	rnd    *rand.Rand
	leases []time.Duration
	prefix string // of the deduper's tokens
}

// stored reports whether the deduper still holds key (a lapsed key may be
// held until some claim drops it).
func (m *hostileModel) stored(key string) bool {
	return m.d.store != nil && m.d.store.Stored(key)
}

// live reports whether the model's key is within its lease or retention.
func (m *hostileModel) live(c *hostileClaim) bool { return c != nil && m.now.Before(c.expires) }

// sync forgets a lapsed key the deduper dropped, and requires a live key
// to be stored (never dropped early) and a key the model does not hold to
// be absent (nothing kept after Release or its drop).
func (m *hostileModel) sync(key string) {
	c := m.keys[key]
	switch {
	case c == nil:
		require.False(m.t, m.stored(key), "%q is stored though released or never claimed", key)
	case m.live(c):
		require.True(m.t, m.stored(key), "%q dropped before its expiry", key)
	case !m.stored(key):
		m.retire(key)
	}
}

// retire forgets key, remembering its holder's token as a past one.
func (m *hostileModel) retire(key string) {
	if c := m.keys[key]; c != nil && c.token != "" {
		m.past[key] = append(m.past[key], c.token)
	}
	delete(m.keys, key)
}

func (m *hostileModel) claim(key string) {
	lease := m.leases[m.rnd.IntN(len(m.leases))]
	m.sync(key)
	got, err := m.d.Claim(context.Background(), key, lease)
	require.NoError(m.t, err)
	c := m.keys[key]
	switch {
	case m.live(c) && c.token == "":
		require.Equal(m.t, ClaimResult{State: ClaimDone, Result: c.result}, got, "%q", key)
	case m.live(c):
		require.Equal(m.t, ClaimResult{State: ClaimBusy}, got, "%q", key)
	default:
		require.Equal(m.t, ClaimAcquired, got.State, "%q", key)
		require.False(m.t, m.issued[got.Token], "token %q handed out twice", got.Token)
		m.issued[got.Token] = true
		m.retire(key)
		m.keys[key] = &hostileClaim{expires: m.now.Add(lease), token: got.Token}
	}
	m.sync(key)
}

// token is one a caller of key could present: mostly the holder's,
// otherwise an earlier holder's, a stranger's or none.
func (m *hostileModel) token(key string) string {
	past := m.past[key]
	switch n := m.rnd.IntN(10); {
	case n < 6 && m.keys[key] != nil && m.keys[key].token != "":
		return m.keys[key].token
	case n < 8 && len(past) > 0:
		return past[m.rnd.IntN(len(past))]
	case n < 9:
		return m.prefix + []string{"zz", "0", "-1"}[m.rnd.IntN(3)]
	}
	return ""
}

// holds reports whether tok may act on key: it is the holder's and the
// claim is still stored (within its lease, or lapsed but not taken over or
// dropped).
func (m *hostileModel) holds(key, tok string) bool {
	c := m.keys[key]
	return c != nil && tok != "" && c.token == tok && m.stored(key)
}

// act renews, completes or releases key with one of its tokens.
func (m *hostileModel) act(key string, i int) {
	ctx := context.Background()
	m.sync(key)
	tok := m.token(key)
	ok := m.holds(key, tok)
	var err error
	switch op := m.rnd.IntN(3); op {
	case 0:
		lease := m.leases[m.rnd.IntN(len(m.leases))]
		if err = m.d.Renew(ctx, key, tok, lease); ok {
			m.keys[key].expires = m.now.Add(lease)
		}
	case 1:
		result := fmt.Sprint("GW", i, strings.Repeat("r", []int{0, 3, 16, 17, 200}[m.rnd.IntN(5)]))
		if err = m.d.Complete(ctx, key, tok, result); ok {
			m.past[key] = append(m.past[key], tok)
			*m.keys[key] = hostileClaim{expires: m.now.Add(m.d.Retention), result: result}
		}
	default:
		if err = m.d.Release(ctx, key, tok); ok {
			m.retire(key)
		}
	}
	if ok {
		require.NoError(m.t, err, "%q with the holder's token", key)
	} else {
		require.ErrorIs(m.t, err, ErrClaimLost, "%q with token %q, not the holder's", key, tok)
	}
	m.sync(key)
}

// sweep checks every key of pool against the model, and the count.
func (m *hostileModel) sweep(pool []string) {
	for _, k := range pool {
		m.sync(k)
	}
	require.Equal(m.t, len(m.keys), m.d.Len())
}

// hostileKeys is n keys as the handler writes them, and keys a store
// could mishandle: empty, NUL, non-UTF-8, long and the longest allowed.
func hostileKeys(n int) []string {
	pool := []string{"", "\x00", "\x00\x00", "a\x00", "\x00a", "\xff\xfe\xfd", strings.Repeat("k", 300), strings.Repeat("\x00", maxDedupeField), strings.Repeat("k", maxDedupeField)}
	for i := range n {
		pool = append(pool, fmt.Sprint("fulfil|INV-", i))
	}
	return pool
}

// MemoryDeduper answers as a map would under hostile use: tokens of
// earlier holders after a takeover and strangers' tokens get ErrClaimLost;
// a lapsed claim is taken over exactly once and its holder keeps it until
// then; a completed key answers done for its retention; no key is dropped
// before its expiry and none is kept after its release; empty and NUL
// keys, zero and negative leases, and many lease durations change
// nothing; and once every key has lapsed, claims drain the store to the
// one key claimed.
func TestMemoryDeduperHostileModel(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m := &hostileModel{
		t: t, now: start, rnd: rand.New(rand.NewPCG(7, 11)),
		keys: map[string]*hostileClaim{}, past: map[string][]string{}, issued: map[string]bool{},
		leases: []time.Duration{-time.Second, 0, time.Millisecond, 100 * time.Millisecond, time.Second, 5 * time.Second, time.Minute},
	}
	for i := range 16 { // odd leases
		m.leases = append(m.leases, time.Duration(1+i*37)*time.Millisecond)
	}
	m.d = &MemoryDeduper{Now: func() time.Time { return m.now }, Retention: 5 * time.Minute}
	m.claim("init")
	tok := m.keys["init"].token // a stranger's token may share the deduper's prefix
	m.prefix = tok[:strings.Index(tok, "-")+1]
	pool := append(hostileKeys(3000), "init")
	for i := range 80_000 {
		switch n := m.rnd.IntN(1000); {
		case n < 2:
			m.now = m.now.Add(time.Duration(m.rnd.IntN(120)) * time.Second)
		default:
			m.now = m.now.Add(time.Duration(m.rnd.IntN(30)) * time.Millisecond)
		}
		key := pool[m.rnd.IntN(len(pool))]
		if m.rnd.IntN(2) == 0 {
			m.claim(key)
		} else {
			m.act(key, i)
		}
		if i%10_000 == 0 {
			m.sweep(pool)
		}
	}
	m.sweep(pool)

	m.now = m.now.Add(time.Hour) // every key lapsed: claims drain them
	for range m.d.Len() {
		m.claim("init")
	}
	m.sweep(pool)
	require.Equal(t, 1, m.d.Len(), "claims drained every lapsed key")
}

// Concurrent claimants of one key, racing renewals, completions and
// releases, with earlier holders' tokens tried meanwhile: one holder at a
// time, and a released or completed claim's token never works again.
func TestMemoryDeduperConcurrentHolders(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		holder   string   // the token that holds "k", "" none
		retired  []string // tokens released or completed
		problems []string
		done     int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 3))
			for range 2000 {
				c, err := d.Claim(ctx, "k", time.Hour)
				if err != nil {
					fail("Claim: %v", err)
					return
				}
				if c.State != ClaimAcquired {
					mu.Lock()
					old := ""
					if len(retired) > 0 {
						old = retired[rnd.IntN(len(retired))]
					}
					mu.Unlock()
					if err := d.Renew(ctx, "k", old, time.Hour); old != "" && err != ErrClaimLost {
						fail("Renew with the retired token %q = %v", old, err)
					}
					continue
				}
				mu.Lock()
				if holder != "" {
					problems = append(problems, "two holders of one key: "+holder+" and "+c.Token)
				}
				holder = c.Token
				mu.Unlock()
				if err := d.Renew(ctx, "k", c.Token, time.Hour); err != nil {
					fail("the holder's Renew: %v", err)
				}
				mu.Lock()
				holder = "" // cleared while still held: nobody else can acquire yet
				mu.Unlock()
				complete := rnd.IntN(200) == 0
				if complete {
					err = d.Complete(ctx, "k", c.Token, "GW")
				} else {
					err = d.Release(ctx, "k", c.Token)
				}
				if err != nil {
					fail("the holder's Complete or Release: %v", err)
				}
				mu.Lock()
				retired = append(retired, c.Token)
				if complete {
					done++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Empty(t, problems)
	require.LessOrEqual(t, done, 1, "the key completed once")
	require.Equal(t, done, d.Len(), "a completed key stays, a released one goes")
}
