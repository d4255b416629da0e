package dedupetest

import (
	"context"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
)

// Aging is what Replay needs of a store beyond the Deduper interface: Age
// passes the store's time by d for the records it holds (a fake clock
// moved on, or rows backdated), and Purge deletes whatever the store's
// retention lets it delete (pgstore's Purge; nil for a store that forgets
// on its own, as MemoryDeduper does). A store with a Purge keeps a
// completed key until Purge deletes it, past its retention too.
type Aging struct {
	// Age moves the store's time on by d. Required.
	Age func(t *testing.T, d time.Duration)
	// Purge deletes what the retention allows; nil: nothing to call.
	Purge func(t *testing.T)
}

// Replay checks the replay bound (docs/assumptions.md A-replay-bound) on
// d: a completed key is reported done, never acquired again, when its
// callback is replayed after paygate.DefaultMaxTxnAge (the 30 days a
// completed key used to be kept, and the handler's replay window) and a
// purge; a lapsed claim beside it is still taken over and purged as
// before. A claim within its lease outlives a purge: its holder keeps it.
// With a Purge, a completed key is done until Purge deletes it, however
// far past its retention. d must keep completed keys for its default
// retention (paygate.DefaultRetention).
func Replay(t *testing.T, d paygate.Deduper, a Aging) {
	t.Helper()
	ctx := context.Background()
	purge := func() {
		if a.Purge != nil {
			a.Purge(t)
		}
	}
	c := claim(t, d, "fulfil|R", time.Minute, paygate.ClaimAcquired)
	ok(t, "Complete", d.Complete(ctx, "fulfil|R", c.Token, "GW1"))
	lapsed := claim(t, d, "fulfil|L", time.Minute, paygate.ClaimAcquired)
	for _, age := range []time.Duration{paygate.DefaultMaxTxnAge + 24*time.Hour, paygate.DefaultMaxTxnAge} {
		a.Age(t, age)
		purge()
		if got := claim(t, d, "fulfil|R", time.Minute, paygate.ClaimDone); got.Result != "GW1" {
			t.Fatalf("a completed key replayed %v later: result %q, want GW1", age, got.Result)
		}
	}
	lost(t, "Complete with a lapsed and purged claim's token", d.Complete(ctx, "fulfil|L", lapsed.Token, "GW2"))
	c = claim(t, d, "fulfil|L", time.Minute, paygate.ClaimAcquired)
	ok(t, "Complete", d.Complete(ctx, "fulfil|L", c.Token, "GW3"))
	claim(t, d, "fulfil|L", time.Minute, paygate.ClaimDone)

	// A live claim outlives a purge, however old the store: the delivery
	// that holds it keeps it, and the next finds it busy.
	live := claim(t, d, "fulfil|H", 2*time.Hour, paygate.ClaimAcquired)
	a.Age(t, time.Hour)
	purge()
	claim(t, d, "fulfil|H", time.Minute, paygate.ClaimBusy)
	ok(t, "Renew of a live claim after a purge", d.Renew(ctx, "fulfil|H", live.Token, 2*time.Hour))
	ok(t, "Complete of a live claim after a purge", d.Complete(ctx, "fulfil|H", live.Token, "GW4"))
	if a.Purge == nil {
		return // the store forgets a completed key at the end of its retention
	}
	// Past the retention, before the purge: every completed key still done.
	a.Age(t, paygate.DefaultRetention+24*time.Hour)
	for key, result := range map[string]string{"fulfil|R": "GW1", "fulfil|L": "GW3", "fulfil|H": "GW4"} {
		if got := claim(t, d, key, time.Minute, paygate.ClaimDone); got.Result != result {
			t.Fatalf("%s past its retention, not yet purged: result %q, want %s", key, got.Result, result)
		}
	}
}
