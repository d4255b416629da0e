// Package watchtest checks a watch.Store against the contract every store
// must keep, so a store on another database can prove itself the way
// watch.MemoryStore and pgstore's WatchStore do.
package watchtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/watch"
)

// Run runs every check, each on a fresh, empty Store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) watch.Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		fn   func(*testing.T, watch.Store)
	}{
		{name: "AddOnce", fn: addOnce},
		{name: "TakeDueEarliestFirst", fn: takeDueEarliestFirst},
		{name: "TakeIsExclusiveUntilTheLeaseEnds", fn: takeIsExclusive},
		{name: "RescheduleNeedsTheHold", fn: rescheduleNeedsTheHold},
		{name: "FinishNeedsTheHold", fn: finishNeedsTheHold},
		{name: "HoldNeedsTheHold", fn: holdNeedsTheHold},
		{name: "ConcurrentTakesHandEachOrderOnce", fn: concurrentTakes},
		{name: "FindByBase", fn: findByBase},
		{name: "BudgetBucket", fn: budgetBucket},
		{name: "ConcurrentSpendStaysWithinBudget", fn: concurrentSpend},
		{name: "ClockBackNeverStopsTheBudget", fn: clockBack},
		{name: "BudgetFollowsTheBucket", fn: budgetFollowsTheBucket},
		{name: "ConcurrentSpendsGrantTheBucket", fn: concurrentSpendsGrantTheBucket},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newStore(t)) })
	}
}

// t0 is the suites' start: whole seconds, which every database keeps.
var t0 = time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)

func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func add(t *testing.T, s watch.Store, ref string, next time.Time) {
	t.Helper()
	ok(t, "Add("+ref+")", s.Add(context.Background(), watch.Order{RefNo: ref, Created: t0, Next: next}))
}

func take(t *testing.T, s watch.Store, now time.Time, n int, lease time.Duration) []watch.Order {
	t.Helper()
	got, err := s.Take(context.Background(), now, n, lease)
	ok(t, "Take", err)
	return got
}

func refs(os []watch.Order) []string {
	var r []string
	for _, o := range os {
		r = append(r, o.RefNo)
	}
	return r
}

func same(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// addOnce: a second Add of an awaited reference changes nothing, and List
// returns every order, earliest Next first, at most limit.
func addOnce(t *testing.T, s watch.Store) {
	add(t, s, "INV-2", t0.Add(2*time.Minute))
	add(t, s, "INV-1~x", t0.Add(time.Minute))
	ok(t, "Add again", s.Add(context.Background(), watch.Order{RefNo: "INV-2", Created: t0.Add(time.Hour), Next: t0.Add(time.Hour), Checks: 5}))
	all, err := s.List(context.Background(), 10)
	ok(t, "List", err)
	if !same(refs(all), []string{"INV-1~x", "INV-2"}) {
		t.Fatalf("List = %v, want [INV-1~x INV-2]", refs(all))
	}
	o := all[1]
	if !o.Created.Equal(t0) || !o.Next.Equal(t0.Add(2*time.Minute)) || o.Checks != 0 || o.Token != "" {
		t.Fatalf("after a second Add, INV-2 = %+v; want it unchanged", o)
	}
	one, err := s.List(context.Background(), 1)
	ok(t, "List(1)", err)
	if !same(refs(one), []string{"INV-1~x"}) {
		t.Fatalf("List(1) = %v, want [INV-1~x]", refs(one))
	}
	for _, limit := range []int{0, -1} {
		none, err := s.List(context.Background(), limit)
		ok(t, "List", err)
		if len(none) != 0 {
			t.Fatalf("List(%d) = %v, want nothing", limit, refs(none))
		}
	}
}

// takeDueEarliestFirst: Take returns only due orders (Next at or before
// now), earliest first, at most n, each with a token and Next moved to
// the end of the lease.
func takeDueEarliestFirst(t *testing.T, s watch.Store) {
	for i, at := range []time.Duration{3, 1, 2, 5} {
		add(t, s, fmt.Sprint("R", i), t0.Add(at*time.Minute))
	}
	now := t0.Add(3 * time.Minute)
	got := take(t, s, now, 2, time.Minute)
	if !same(refs(got), []string{"R1", "R2"}) {
		t.Fatalf("Take(2) = %v, want [R1 R2] (due, earliest first)", refs(got))
	}
	for _, o := range got {
		if o.Token == "" || !o.Next.Equal(now.Add(time.Minute)) {
			t.Fatalf("taken %+v: want a token and Next at the lease's end", o)
		}
	}
	if got[0].Token == got[1].Token {
		t.Fatal("two taken orders share a token")
	}
	if rest := take(t, s, now, 10, time.Minute); !same(refs(rest), []string{"R0"}) {
		t.Fatalf("second Take = %v, want [R0] (R3 is not due until 5 minutes)", refs(rest))
	}
}

// takeIsExclusive: a taken order goes to nobody else until its lease ends,
// then to the next caller with a new token.
func takeIsExclusive(t *testing.T, s watch.Store) {
	add(t, s, "INV-9", t0)
	first := take(t, s, t0, 5, time.Minute)
	if len(first) != 1 {
		t.Fatalf("Take = %v, want INV-9", refs(first))
	}
	if again := take(t, s, t0.Add(59*time.Second), 5, time.Minute); len(again) != 0 {
		t.Fatalf("Take within the lease = %v, want nothing", refs(again))
	}
	second := take(t, s, t0.Add(time.Minute), 5, time.Minute)
	if len(second) != 1 || second[0].Token == first[0].Token {
		t.Fatalf("Take at the lease's end = %+v, want INV-9 with a new token", second)
	}
}

// rescheduleNeedsTheHold: Reschedule works with the token of the current
// hold only, sets Next and Checks, and ends the hold.
func rescheduleNeedsTheHold(t *testing.T, s watch.Store) {
	ctx := context.Background()
	add(t, s, "INV-7", t0)
	old := take(t, s, t0, 1, time.Minute)[0]
	cur := take(t, s, t0.Add(time.Minute), 1, time.Minute)[0]
	stale := old
	stale.Next, stale.Checks = t0.Add(time.Hour), 9
	if err := s.Reschedule(ctx, stale); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Reschedule with a lapsed hold's token = %v, want ErrLost", err)
	}
	noToken := cur
	noToken.Token = ""
	if err := s.Reschedule(ctx, noToken); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Reschedule without a token = %v, want ErrLost", err)
	}
	cur.Next, cur.Checks = t0.Add(10*time.Minute), 1
	ok(t, "Reschedule with the hold's token", s.Reschedule(ctx, cur))
	if err := s.Reschedule(ctx, cur); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("a second Reschedule with the same token = %v, want ErrLost (the hold ended)", err)
	}
	all, err := s.List(ctx, 10)
	ok(t, "List", err)
	if len(all) != 1 || !all[0].Next.Equal(t0.Add(10*time.Minute)) || all[0].Checks != 1 {
		t.Fatalf("after Reschedule: %+v, want Next at 10 minutes and 1 check", all)
	}
	if due := take(t, s, t0.Add(9*time.Minute), 1, time.Minute); len(due) != 0 {
		t.Fatalf("Take before the new Next = %v, want nothing", refs(due))
	}
	ok(t, "Remove", s.Remove(ctx, "INV-7"))
	ok(t, "Remove of a reference not awaited", s.Remove(ctx, "INV-7"))
	held := take(t, s, t0.Add(time.Hour), 1, time.Minute)
	if len(held) != 0 {
		t.Fatalf("Take after Remove = %v, want nothing", refs(held))
	}
	if err := s.Reschedule(ctx, cur); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Reschedule after Remove = %v, want ErrLost", err)
	}
}

// holdNeedsTheHold: Hold moves Next with the token of the current hold
// only, keeps the hold (the token still reschedules), and keeps the order
// from every other Take until then.
func holdNeedsTheHold(t *testing.T, s watch.Store) {
	ctx := context.Background()
	add(t, s, "INV-6", t0)
	old := take(t, s, t0, 1, time.Minute)[0]
	cur := take(t, s, t0.Add(time.Minute), 1, time.Minute)[0]
	if err := s.Hold(ctx, old, t0.Add(time.Hour)); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Hold with a lapsed hold's token = %v, want ErrLost", err)
	}
	ok(t, "Hold with the hold's token", s.Hold(ctx, cur, t0.Add(5*time.Minute)))
	if due := take(t, s, t0.Add(4*time.Minute), 1, time.Minute); len(due) != 0 {
		t.Fatalf("Take within the renewed hold = %v, want nothing", refs(due))
	}
	cur.Next, cur.Checks = t0.Add(10*time.Minute), 1
	ok(t, "Reschedule after Hold", s.Reschedule(ctx, cur))
	if err := s.Hold(ctx, cur, t0.Add(time.Hour)); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Hold after the hold ended = %v, want ErrLost", err)
	}
	all, err := s.List(ctx, 10)
	ok(t, "List", err)
	if len(all) != 1 || !all[0].Next.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("after Hold and Reschedule: %+v, want Next at 10 minutes", all)
	}
}

// finishNeedsTheHold: Finish removes an order only with the token of its
// current hold; a replica whose lease lapsed cannot remove (or give up)
// an order another replica now holds.
func finishNeedsTheHold(t *testing.T, s watch.Store) {
	ctx := context.Background()
	add(t, s, "INV-8", t0)
	old := take(t, s, t0, 1, time.Minute)[0]
	cur := take(t, s, t0.Add(time.Minute), 1, time.Minute)[0]
	if err := s.Finish(ctx, old); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Finish with a lapsed hold's token = %v, want ErrLost", err)
	}
	noToken := cur
	noToken.Token = ""
	if err := s.Finish(ctx, noToken); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("Finish without a token = %v, want ErrLost", err)
	}
	if all, err := s.List(ctx, 10); err != nil || len(all) != 1 {
		t.Fatalf("after refused Finishes: %v, %v; want INV-8 still awaited", refs(all), err)
	}
	ok(t, "Finish with the hold's token", s.Finish(ctx, cur))
	if all, err := s.List(ctx, 10); err != nil || len(all) != 0 {
		t.Fatalf("after Finish: %v, %v; want nothing awaited", refs(all), err)
	}
	if err := s.Finish(ctx, cur); !errors.Is(err, watch.ErrLost) {
		t.Fatalf("a second Finish = %v, want ErrLost", err)
	}
}

// clockBack: a spend more than a minute before the latest (a clock reset,
// or a replica's clock that was far ahead) fills nothing, and the bucket
// fills again from then: a clock far ahead stops the others for a minute
// at most; a spend just before the latest (replicas' spends arriving out
// of order) fills nothing either, and leaves the latest in place.
func clockBack(t *testing.T, s watch.Store) {
	b := watch.Budget{PerSecond: 1, Burst: 2}
	for _, step := range []struct {
		at        time.Duration
		ask, want int
	}{
		{time.Hour, 2, 2}, // a replica an hour ahead empties the bucket
		{0, 2, 0},         // an hour back: nothing filled, the bucket restarts
		{2 * time.Second, 2, 2},
		{time.Second, 2, 0}, // a spend arriving late fills nothing
		{3 * time.Second, 2, 1},
	} {
		got, err := s.Spend(context.Background(), t0.Add(step.at), b, step.ask)
		ok(t, "Spend", err)
		if got != step.want {
			t.Fatalf("Spend(%d) at +%v = %d, want %d", step.ask, step.at, got, step.want)
		}
	}
}

// concurrentTakes: replicas taking at once get every due order exactly
// once between them.
func concurrentTakes(t *testing.T, s watch.Store) {
	const orders, replicas = 120, 6
	for i := range orders {
		add(t, s, fmt.Sprint("C", i), t0)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, replicas)
	for range replicas {
		wg.Go(func() {
			for {
				got, err := s.Take(context.Background(), t0, 7, time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, o := range got {
					seen[o.RefNo]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		ok(t, "concurrent Take", err)
	}
	if len(seen) != orders {
		t.Fatalf("%d of %d orders taken", len(seen), orders)
	}
	for ref, n := range seen {
		if n != 1 {
			t.Fatalf("%s handed out %d times within its lease", ref, n)
		}
	}
}

// findByBase: Find returns the orders created as base or base~extra, and
// no other that merely starts with base.
func findByBase(t *testing.T, s watch.Store) {
	for _, ref := range []string{"INV-5~cart-2", "INV-5", "INV-5~cart-1", "INV-50", "INV-5x~a", "INV-%~b", "XINV-5",
		"INV-5}", "INV-5\x7f", "INV-5~", "INV-5~~", "INV-4~z", "INV-6~"} {
		add(t, s, ref, t0)
	}
	for _, c := range []struct {
		base string
		want []string
	}{
		{"INV-5", []string{"INV-5", "INV-5~", "INV-5~cart-1", "INV-5~cart-2", "INV-5~~"}},
		{"INV-50", []string{"INV-50"}},
		{"INV-%", []string{"INV-%~b"}},
		{"INV-_", nil},
		{"INV", nil},
	} {
		got, err := s.Find(context.Background(), c.base)
		ok(t, "Find", err)
		if !same(refs(got), c.want) {
			t.Fatalf("Find(%q) = %v, want %v", c.base, refs(got), c.want)
		}
		for _, o := range got {
			if !o.Created.Equal(t0) || o.Token != "" {
				t.Fatalf("Find(%q) gave %+v: want the order as awaited, without a token", c.base, o)
			}
		}
	}
}

// budgetBucket: the bucket starts full, grants no more than it holds, and
// fills at PerSecond up to Burst.
func budgetBucket(t *testing.T, s watch.Store) {
	b := watch.Budget{PerSecond: 2, Burst: 4}
	for _, step := range []struct {
		at        time.Duration
		ask, want int
	}{
		{0, 0, 0},           // asking none takes none
		{0, 3, 3},           // full at first
		{0, 3, 1},           // one left
		{0, 1, 0},           // empty
		{time.Second, 5, 2}, // two a second
		{1500 * time.Millisecond, 1, 1},
		{time.Hour, 10, 4}, // never more than Burst
		{time.Hour, 1, 0},
	} {
		got, err := s.Spend(context.Background(), t0.Add(step.at), b, step.ask)
		ok(t, "Spend", err)
		if got != step.want {
			t.Fatalf("Spend(%d) at +%v = %d, want %d", step.ask, step.at, got, step.want)
		}
	}
}

// concurrentSpend: replicas spending at once never get more between them
// than the bucket allows.
func concurrentSpend(t *testing.T, s watch.Store) {
	b := watch.Budget{PerSecond: 10, Burst: 5}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for i := range 20 {
				// 20 steps of 100 ms: two seconds in all.
				got, err := s.Spend(context.Background(), t0.Add(time.Duration(i)*100*time.Millisecond), b, 1+r%2)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += got
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if limit := 5 + 10*2; total > limit {
		t.Fatalf("replicas spent %d lookups in 1.9 s, above the budget's %d", total, limit)
	}
	if total < 5 {
		t.Fatalf("replicas spent %d lookups; the bucket held 5 at first", total)
	}
}
