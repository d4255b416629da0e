package paygate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// modelClaim is the reference deduper's state of one key.
type modelClaim struct {
	expires time.Time
	token   string // "" once done
	result  string
}

// dedupeModel drives a MemoryDeduper and a map-based reference side by side
// on a fake clock.
type dedupeModel struct {
	t    *testing.T
	d    *MemoryDeduper
	now  time.Time
	keys map[string]*modelClaim
	rnd  *rand.Rand
}

// randomText is n bytes of a key or result.
func (m *dedupeModel) randomText(prefix string, i int) string {
	lengths := []int{0, 1, 7, 16, 23, 40, 300, 1500}
	s := fmt.Sprint(prefix, i, "|")
	return s + strings.Repeat("x", lengths[m.rnd.IntN(len(lengths))])
}

// claim claims key on both and requires the same answer.
func (m *dedupeModel) claim(key string, lease time.Duration) {
	c, err := m.d.Claim(context.Background(), key, lease)
	require.NoError(m.t, err)
	want, ok := m.keys[key]
	switch {
	case ok && m.now.Before(want.expires) && want.token == "":
		require.Equal(m.t, ClaimResult{State: ClaimDone, Result: want.result}, c, key)
	case ok && m.now.Before(want.expires):
		require.Equal(m.t, ClaimResult{State: ClaimBusy}, c, key)
	default:
		require.Equal(m.t, ClaimAcquired, c.State, key)
		m.keys[key] = &modelClaim{expires: m.now.Add(lease), token: c.Token}
	}
}

// held is a key whose claim is within its lease, if any of a few picked
// at random is.
func (m *dedupeModel) held(pool []string) (string, *modelClaim) {
	for range 4 {
		k := pool[m.rnd.IntN(len(pool))]
		if c, ok := m.keys[k]; ok && c.token != "" && m.now.Before(c.expires) {
			return k, c
		}
	}
	return "", nil
}

// step runs one random operation on both.
func (m *dedupeModel) step(pool []string, i int) {
	ctx := context.Background()
	leases := []time.Duration{time.Second, 5 * time.Second, time.Minute}
	m.now = m.now.Add(time.Duration(m.rnd.IntN(50)) * time.Millisecond)
	key, c := m.held(pool)
	switch op := m.rnd.IntN(10); {
	case op < 5 || c == nil:
		m.claim(pool[m.rnd.IntN(len(pool))], leases[m.rnd.IntN(len(leases))])
	case op < 7:
		result := m.randomText("GW", i)
		require.NoError(m.t, m.d.Complete(ctx, key, c.token, result))
		require.ErrorIs(m.t, m.d.Complete(ctx, key, c.token, result), ErrClaimLost)
		c.token, c.result, c.expires = "", result, m.now.Add(m.d.Retention)
	case op < 8:
		require.NoError(m.t, m.d.Release(ctx, key, c.token))
		require.ErrorIs(m.t, m.d.Release(ctx, key, c.token), ErrClaimLost)
		delete(m.keys, key)
	default:
		lease := leases[m.rnd.IntN(len(leases))]
		require.NoError(m.t, m.d.Renew(ctx, key, c.token, lease))
		c.expires = m.now.Add(lease)
	}
}

// The store answers as a map would, through growth (table splits,
// directory doubling), keys of every length, results that do not fit a
// claim's chunk (moves), releases and expiry; and its index stays
// consistent: every key in the table its tag chooses, found from its own
// home slot, and counted once.
func TestMemoryDeduperMatchesModel(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m := &dedupeModel{t: t, now: start, keys: map[string]*modelClaim{}, rnd: rand.New(rand.NewPCG(1, 2))}
	m.d = &MemoryDeduper{Now: func() time.Time { return m.now }, Retention: 10 * time.Second}
	pool := make([]string, 20_000)
	for i := range pool {
		pool[i] = m.randomText("fulfil|INV-", i)
	}
	for i := range 200_000 {
		m.step(pool, i)
	}
	for _, k := range pool { // every key answers as the model says
		m.claim(k, time.Hour)
	}
	s := m.d.store
	require.Greater(t, s.index.depth, uint(3), "the index split tables")
	checkIndex(t, s)
}

// checkIndex requires every slot of s's index to hold a live chunk whose
// key has the slot's tag, in the table its tag chooses, reachable from its
// home slot without crossing an empty one; and the counts to add up.
func checkIndex(t *testing.T, s *dedupeStore) {
	seen, total := map[*indexTable]bool{}, 0
	for _, tab := range s.index.dir {
		if seen[tab] {
			continue
		}
		seen[tab] = true
		n := 0
		for pos, slot := range tab.slots {
			if slot == 0 {
				continue
			}
			n++
			tag, c := uint32(slot>>32), s.arena.chunk(uint32(slot))
			require.Equal(t, tag, s.tag(string(c.key())))
			require.NotEqual(t, int64(entryGone), c.expires())
			require.Same(t, tab, s.index.table(tag))
			for p := tab.home(tag); p != uint32(pos); p = tab.next(p) {
				require.NotZero(t, tab.slots[p], "slot %d unreachable from its home %d", pos, tab.home(tag))
			}
		}
		require.Equal(t, n, tab.n)
		total += n
	}
	require.Equal(t, total, s.index.n)
}

// Keys and results are at most maxDedupeField bytes: a longer one is
// refused with an error naming it and the rule, and the longest ones are
// kept whole.
func TestMemoryDeduperFieldLimits(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	long := strings.Repeat("k", maxDedupeField)
	_, err := d.Claim(ctx, long+"k", time.Minute)
	require.EqualError(t, err, "paygate: MemoryDeduper: key of 65536 bytes: want at most 65535")
	require.ErrorIs(t, d.Renew(ctx, long+"k", "t", time.Minute), ErrClaimLost)
	c, err := d.Claim(ctx, long, time.Minute)
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, c.State)
	require.EqualError(t, d.Complete(ctx, long, c.Token, long+"r"), "paygate: MemoryDeduper: result of 65536 bytes: want at most 65535")
	require.NoError(t, d.Complete(ctx, long, c.Token, long))
	again, err := d.Claim(ctx, long, time.Minute)
	require.NoError(t, err)
	require.Equal(t, ClaimResult{State: ClaimDone, Result: long}, again)
}

// A store whose arena is full refuses new keys with an error and goes on
// answering for the keys it holds; a released key's room is reused.
func TestMemoryDeduperFull(t *testing.T) {
	ctx := context.Background()
	d := &MemoryDeduper{}
	first, err := d.Claim(ctx, "fulfil|INV-0", time.Hour)
	require.NoError(t, err)
	d.store.arena.maxPages = 1
	var last ClaimResult
	n := 1
	for ; ; n++ {
		c, err := d.Claim(ctx, fmt.Sprint("fulfil|INV-", n), time.Hour)
		if err != nil {
			require.ErrorIs(t, err, errDedupeFull)
			break
		}
		last = c
		require.Less(t, n, pageSize/chunkSize(len("fulfil|INV-0"), 0), "the arena holds no more than a page")
	}
	require.Equal(t, n, d.Len())
	require.NoError(t, d.Complete(ctx, "fulfil|INV-0", first.Token, "GW1"))
	done, err := d.Claim(ctx, "fulfil|INV-0", time.Hour)
	require.NoError(t, err)
	require.Equal(t, ClaimResult{State: ClaimDone, Result: "GW1"}, done)
	require.ErrorIs(t, d.Complete(ctx, fmt.Sprint("fulfil|INV-", n-1), last.Token, strings.Repeat("r", 100)), errDedupeFull,
		"a result that needs a larger chunk finds no room")
	require.NoError(t, d.Release(ctx, fmt.Sprint("fulfil|INV-", n-1), last.Token))
	c, err := d.Claim(ctx, fmt.Sprint("fulfil|INV-", n), time.Hour)
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, c.State, "the released chunk is reused")
}

// Every table of the index stays between about 2/3 and 7/8 full as the
// store grows (tables grow through tableSizes before they split), so no
// number of keys leaves the index mostly empty; and the index stays
// consistent through the growth. The lower bound checked is half full: a
// split shares a full table's 896 keys between two tables by a bit of
// their random hash, so a half holds 448 keys give or take 15 (one
// standard deviation), and a bound of 2/3 minus a little (0.58, 3.9
// deviations) failed about once in 3,000 runs (388 of 672 slots, 0.577).
// Half full is 7.5 deviations away, and one table size for all (the
// defect this guards against) leaves 448 of 1,024 slots, 0.44.
func TestDedupeIndexTablesStayFull(t *testing.T) {
	s := newDedupeStore()
	for i := range 120_000 {
		key := fmt.Sprint("fulfil|INV-", i)
		tag := s.tag(key)
		tab, pos, ref := s.lookup(key, tag)
		require.Zero(t, ref)
		require.NotZero(t, s.add(key, tag, tab, pos))
		if i%10_000 != 9_999 || i < 2*tableSlots {
			continue
		}
		for _, tab := range s.index.dir {
			require.LessOrEqual(t, tab.n, len(tab.slots)*7/8, "at %d keys", i+1)
			require.GreaterOrEqual(t, 2*tab.n, len(tab.slots), "at %d keys, a table of %d slots is under half full", i+1, len(tab.slots))
		}
	}
	checkIndex(t, s)
}
