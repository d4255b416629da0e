package watch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/observe"
	"github.com/paygate-go/paygate/watch"
)

var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// shop is a merchant on a sandbox driven by a test clock: its handler,
// its client, and what its hooks saw.
type shop struct {
	clock     *gatewaytest.TestClock
	sb        *gatewaytest.Server
	client    *paygate.Client
	handler   *paygate.CallbackHandler
	returnURL string

	mu        sync.Mutex
	fulfilled map[string][]time.Time // base refNo: when each Fulfil ran
	gaveUp    map[string]paygate.Outcome
	gaveUpAt  map[string]time.Time
}

func newShop(t *testing.T, opts ...gatewaytest.Option) *shop {
	t.Helper()
	s := &shop{clock: gatewaytest.NewTestClock(start), fulfilled: map[string][]time.Time{}, gaveUp: map[string]paygate.Outcome{},
		gaveUpAt: map[string]time.Time{}}
	s.sb = gatewaytest.NewServer(append([]gatewaytest.Option{gatewaytest.WithTestClock(s.clock)}, opts...)...)
	t.Cleanup(s.sb.Close)
	s.handler = &paygate.CallbackHandler{
		Keys: []paygate.Key{s.sb.Key()}, Now: s.clock.Now, Logger: slog.New(slog.DiscardHandler),
		ReconcileInterval: -1,
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.fulfilled[cb.RefNo] = append(s.fulfilled[cb.RefNo], s.clock.Now())
			return nil
		}),
	}
	srv := httptest.NewServer(s.handler)
	t.Cleanup(srv.Close)
	s.returnURL = srv.URL + "/return"
	client, err := s.sb.Client()
	require.NoError(t, err)
	s.client = client
	return s
}

// watch is a replica's Watch over s's orders, on store.
func (s *shop) watch(store watch.Store) *watch.Watch {
	return &watch.Watch{
		Handler: s.handler, Client: s.client, Store: store, Now: s.clock.Now,
		Logger: slog.New(slog.DiscardHandler),
		OnGiveUp: func(_ context.Context, o watch.Order, last paygate.ReconcileEntry) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.gaveUp[o.RefNo] = last.Outcome
			s.gaveUpAt[o.RefNo] = s.clock.Now()
			return nil
		},
	}
}

// order awaits, then creates, one order.
func (s *shop) order(t *testing.T, w *watch.Watch, ref, extra string) {
	t.Helper()
	o := paygate.Order{RefNo: ref, ExtraData: extra, Amount: 1000, Email: "a@example.com", ReturnURL: s.returnURL}
	require.NoError(t, w.AwaitOrder(context.Background(), o))
	_, err := s.client.CreateOrder(context.Background(), o)
	require.NoError(t, err)
}

func prefixed(ref string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(ref, p) {
			return true
		}
	}
	return false
}

// A shop that never runs a reconciliation by hand: callbacks lost, a
// payment settled three days late with its callbacks lost too, a failure,
// an order never paid. The watch fulfils every paid order exactly once,
// on the default schedule, fulfils nothing else, and gives up the order
// never paid at its maximum age.
func TestWatchSettlesWhatTheCallbacksMissed(t *testing.T) {
	const late = 3 * 24 * time.Hour
	s := newShop(t,
		gatewaytest.WithCallbackLoss(func(ref string) bool { return prefixed(ref, "LOST", "LATE", "FAIL", "EXTRA") }),
		gatewaytest.WithLateSettlement(late, func(ref string) bool { return prefixed(ref, "LATE") }))
	w := s.watch(&watch.MemoryStore{})
	groups := map[string]int{"LOST": 6, "OK": 3, "LATE": 3, "FAIL": 3, "GONE": 2, "EXTRA": 2}
	for g, n := range groups {
		for i := range n {
			ref, extra := fmt.Sprint(g, "-", i), ""
			if g == "EXTRA" {
				extra = "cart-" + fmt.Sprint(i)
			}
			s.order(t, w, ref, extra)
			switch g {
			case "LOST", "OK", "LATE", "EXTRA":
				require.NoError(t, s.sb.Pay(ref, paygate.StatusSuccess))
			case "FAIL":
				require.NoError(t, s.sb.Pay(ref, paygate.StatusFailed))
			}
		}
	}
	awaited, err := w.List(context.Background(), 100)
	require.NoError(t, err)
	require.Len(t, awaited, 19)

	ctx := context.Background()
	var checked int
	for s.clock.Now().Before(start.Add(watch.DefaultMaxAge + time.Hour)) {
		s.clock.Advance(5 * time.Minute)
		p, err := w.Step(ctx)
		require.NoError(t, err)
		checked += p.Checked
	}

	for g, n := range groups {
		for i := range n {
			ref := fmt.Sprint(g, "-", i)
			got := s.fulfilled[ref]
			switch g {
			case "LOST", "OK", "EXTRA":
				require.Len(t, got, 1, ref)
				require.LessOrEqual(t, got[0].Sub(start), 10*time.Minute, "%s: a lost callback is settled by the first lookup, 5 minutes on", ref)
			case "LATE":
				require.Len(t, got, 1, ref)
				delay := got[0].Sub(start.Add(late))
				require.Positive(t, delay, ref)
				require.LessOrEqual(t, delay, 24*time.Hour+5*time.Minute, "%s: the daily lookup finds the late settlement", ref)
				t.Logf("%s settled %v after creation, fulfilled by the watch %v later", ref, late, delay)
			default:
				require.Empty(t, got, ref)
			}
		}
	}
	require.Equal(t, map[string]paygate.Outcome{"GONE-0": paygate.OutcomePending, "GONE-1": paygate.OutcomePending}, s.gaveUp)
	for ref, at := range s.gaveUpAt {
		require.WithinRange(t, at, start.Add(watch.DefaultMaxAge), start.Add(watch.DefaultMaxAge+5*time.Minute), "%s given up at its maximum age", ref)
	}
	awaited, err = w.List(context.Background(), 100)
	require.NoError(t, err)
	require.Empty(t, awaited, "nothing awaited past its maximum age")
	t.Logf("%d lookups for 19 orders over %v", checked, watch.DefaultMaxAge)
}

// Two replicas share one store: each order is looked up by one of them
// (every paid order is settled by its first lookup, so lookups equal
// orders), and their lookups together keep within the one budget: at most
// Burst + PerSecond*T in any span T. The same run on replicas that keep a
// bucket each breaks the budget check: it catches a budget that is not
// shared. (That a take is exclusive is the store contract's,
// watchtest.Run.)
func TestWatchReplicasShareTheOrdersAndTheBudget(t *testing.T) {
	budget := watch.Budget{PerSecond: 2, Burst: 3}
	for _, c := range []struct {
		name   string
		stores func() [2]watch.Store
		fair   bool // the budget holds
	}{
		{"one shared store", func() [2]watch.Store {
			m := &watch.MemoryStore{}
			return [2]watch.Store{m, m}
		}, true},
		{"a bucket per replica", func() [2]watch.Store {
			m := &watch.MemoryStore{}
			return [2]watch.Store{ownBucket{m, &watch.MemoryStore{}}, ownBucket{m, &watch.MemoryStore{}}}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			perSecond, lookups := runReplicas(t, c.stores(), budget)
			require.Equal(t, c.fair, withinBudget(perSecond, budget), "lookups a second: %v", perSecond)
			require.Equal(t, 30, lookups, "each order looked up once, by one replica")
		})
	}
}

// ownBucket is a shared store whose replica keeps a budget of its own.
type ownBucket struct {
	watch.Store
	bucket *watch.MemoryStore
}

func (o ownBucket) Spend(ctx context.Context, now time.Time, b watch.Budget, n int) (int, error) {
	return o.bucket.Spend(ctx, now, b, n)
}

// runReplicas runs two replicas' watches, on stores, over 30 paid orders
// whose callbacks are lost, due at once, for a minute of test time, both
// replicas stepping at the same time every second; it
// returns the lookups of each second and their total, and checks that
// each order was fulfilled exactly once.
func runReplicas(t *testing.T, stores [2]watch.Store, budget watch.Budget) (perSecond []int, total int) {
	s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	replicas := []*watch.Watch{s.watch(stores[0]), s.watch(stores[1])}
	for _, w := range replicas {
		w.Budget = budget
	}
	const orders = 30
	for i := range orders {
		ref := fmt.Sprint("INV-", i)
		s.order(t, replicas[i%2], ref, "")
		require.NoError(t, s.sb.Pay(ref, paygate.StatusSuccess))
	}
	s.clock.Advance(5 * time.Minute)
	for len(perSecond) < 60 {
		var passes [2]watch.Pass
		var errs [2]error
		var wg sync.WaitGroup
		for i, w := range replicas {
			wg.Go(func() { passes[i], errs[i] = w.Step(context.Background()) })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs[:]...))
		n := passes[0].Checked + passes[1].Checked
		perSecond = append(perSecond, n)
		total += n
		s.clock.Advance(time.Second)
	}
	for i := range orders {
		require.Len(t, s.fulfilled[fmt.Sprint("INV-", i)], 1, "INV-%d", i)
	}
	return perSecond, total
}

// withinBudget says whether every span of seconds i..j holds at most
// Burst + PerSecond*(j-i) lookups.
func withinBudget(perSecond []int, b watch.Budget) bool {
	for i := range perSecond {
		sum := 0
		for j := i; j < len(perSecond); j++ {
			sum += perSecond[j]
			if float64(sum) > float64(b.Burst)+b.PerSecond*float64(j-i) {
				return false
			}
		}
	}
	return true
}

// A replica that dies holding an order (taken, never rescheduled) delays
// it by one lease: then another replica takes it and settles it.
func TestWatchOrderOfADeadReplicaIsTakenOver(t *testing.T) {
	s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	store := &watch.MemoryStore{}
	w := s.watch(store)
	s.order(t, w, "INV-1", "")
	require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
	s.clock.Advance(5 * time.Minute)
	dead, err := store.Take(context.Background(), s.clock.Now(), 1, watch.DefaultLease)
	require.NoError(t, err)
	require.Len(t, dead, 1)

	p, err := w.Step(context.Background())
	require.NoError(t, err)
	require.Zero(t, p.Checked, "held by the dead replica within its lease")
	s.clock.Advance(watch.DefaultLease)
	p, err = w.Step(context.Background())
	require.NoError(t, err)
	require.Equal(t, watch.Pass{Checked: 1, Settled: 1}, p)
	require.Len(t, s.fulfilled["INV-1"], 1)
	require.ErrorIs(t, store.Reschedule(context.Background(), dead[0]), watch.ErrLost, "the dead replica's hold is gone")
}

func TestWatchNeedsItsParts(t *testing.T) {
	s := newShop(t)
	full := s.watch(&watch.MemoryStore{})
	for _, c := range []struct {
		name   string
		break_ func(*watch.Watch)
		want   string
	}{
		{"no handler", func(w *watch.Watch) { w.Handler = nil }, "Watch.Handler is nil"},
		{"no client", func(w *watch.Watch) { w.Client = nil }, "Watch.Client is nil"},
		{"no store", func(w *watch.Watch) { w.Store = nil }, "Watch.Store is nil"},
		{"no burst", func(w *watch.Watch) { w.Budget = watch.Budget{PerSecond: 1} }, "Burst of at least 1"},
		{"no rate", func(w *watch.Watch) { w.Budget = watch.Budget{Burst: 1} }, "PerSecond above 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := *full
			c.break_(&w)
			_, err := w.Step(context.Background())
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, w.Await(context.Background(), "INV-1"), c.want)
			bounded, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.ErrorContains(t, w.Run(bounded), c.want, "refused at once, not after running")
			require.ErrorContains(t, w.Forget(context.Background(), "INV-1"), c.want)
			_, err = w.List(context.Background(), 1)
			require.ErrorContains(t, err, c.want)
			_, err = w.Reconcile(context.Background(), []string{"INV-1"})
			require.ErrorContains(t, err, c.want)
		})
	}
	require.ErrorContains(t, full.Await(context.Background(), ""), "refNo is empty")
}

// The base reference a callback carries (and a ledger keeps) is enough:
// the watch knows the reference as created and looks that up; two awaited
// orders on one base are refused with both forms named.
func TestWatchReconcileTakesTheCallbacksReference(t *testing.T) {
	s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	w := s.watch(&watch.MemoryStore{})
	ctx := context.Background()
	s.order(t, w, "INV-3", "cart-9")
	s.order(t, w, "INV-4", "a")
	s.order(t, w, "INV-4", "b")
	require.NoError(t, s.sb.Pay("INV-3", paygate.StatusSuccess))

	for _, c := range []struct {
		ref, want, err string
	}{
		{"INV-3", "INV-3~cart-9", ""},
		{"INV-3~cart-9", "INV-3~cart-9", ""},
		{"INV-7", "INV-7", ""},
		{"INV-4", "", `2 awaited orders have the reference "INV-4" (INV-4~a, INV-4~b): pass the one to look up as created`},
	} {
		got, err := watch.CreatedRefNo(ctx, w.Store, c.ref)
		if c.err != "" {
			require.EqualError(t, err, "watch: "+c.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.want, got, c.ref)
	}

	rec, err := w.Reconcile(ctx, []string{"INV-3", "INV-4", "INV-7"})
	require.NoError(t, err)
	require.Len(t, rec.Entries, 3)
	require.Equal(t, "INV-3~cart-9", rec.Entries[0].RefNo)
	require.Equal(t, paygate.OutcomeFulfilled, rec.Entries[0].Outcome)
	require.Equal(t, paygate.OutcomeNotFound, rec.Entries[1].Outcome, "INV-7: looked up as given")
	require.ErrorContains(t, rec.Entries[1].Err, "give refNo~extraData")
	require.Equal(t, paygate.ReconcileEntry{RefNo: "INV-4", Outcome: paygate.OutcomeError, Err: rec.Entries[2].Err}, rec.Entries[2])
	require.ErrorContains(t, rec.Entries[2].Err, "INV-4~a, INV-4~b")
	require.Equal(t, map[paygate.Outcome]int{paygate.OutcomeFulfilled: 1, paygate.OutcomeNotFound: 1, paygate.OutcomeError: 1}, rec.Counts)
	require.Len(t, s.fulfilled["INV-3"], 1)
}

// How long a paid order whose callbacks are all lost waits for the watch,
// by when it settles, on the default schedule (test time). BENCHMARKS.md
// quotes the log of: go test -run TestWatchSettlementToFulfilment -v ./watch
func TestWatchSettlementToFulfilment(t *testing.T) {
	for _, settle := range []time.Duration{0, 20 * time.Minute, 3 * time.Hour, 24 * time.Hour, 3 * 24 * time.Hour, 7 * 24 * time.Hour} {
		opts := []gatewaytest.Option{gatewaytest.WithCallbackLoss(func(string) bool { return true })}
		if settle > 0 {
			opts = append(opts, gatewaytest.WithLateSettlement(settle, func(string) bool { return true }))
		}
		s := newShop(t, opts...)
		w := s.watch(&watch.MemoryStore{})
		s.order(t, w, "INV-1", "")
		require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
		lookups := 0
		for len(s.fulfilled["INV-1"]) == 0 {
			require.Less(t, s.clock.Now().Sub(start), watch.DefaultMaxAge, "settled at %v, never fulfilled", settle)
			s.clock.Advance(time.Minute)
			p, err := w.Step(context.Background())
			require.NoError(t, err)
			lookups += p.Checked
		}
		delay := s.fulfilled["INV-1"][0].Sub(start.Add(settle))
		require.LessOrEqual(t, delay, 24*time.Hour+time.Minute, "never more than the longest wait")
		t.Logf("settled %-8v after creation: fulfilled %-8v later, after %d lookups", settle, delay, lookups)
	}
}

// Each order is taken just before its lookup, so a replica's slow
// lookups never let the lease of an order still queued lapse: another
// replica stepping in the middle takes the orders not yet looked up, and
// no order is looked up twice. (Taking a batch under one lease, ten
// lookups of 20 s each outlived a 2-minute lease: 14 lookups for 10.)
func TestWatchSlowLookupsNeverShareAnOrder(t *testing.T) {
	s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	store := &watch.MemoryStore{}
	a, b := s.watch(store), s.watch(store)
	for _, w := range []*watch.Watch{a, b} {
		w.Now, w.Lease = clock, 2*time.Minute
	}
	var passB watch.Pass
	fulfils := 0
	s.handler.Fulfil = paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error {
		mu.Lock()
		now = now.Add(20 * time.Second) // a slow hook
		fulfils++
		n := fulfils
		mu.Unlock()
		if n == 7 { // the other replica steps in while A is busy
			var err error
			passB, err = b.Step(ctx)
			require.NoError(t, err)
		}
		return nil
	})
	for i := range 10 {
		ref := fmt.Sprint("INV-", i)
		s.order(t, a, ref, "")
		require.NoError(t, s.sb.Pay(ref, paygate.StatusSuccess))
	}
	mu.Lock()
	now = now.Add(5 * time.Minute)
	mu.Unlock()
	passA, err := a.Step(context.Background())
	require.NoError(t, err)
	require.Equal(t, 10, passA.Checked+passB.Checked, "each order looked up once: A %+v, B %+v", passA, passB)
	require.Positive(t, passB.Checked)
	require.Equal(t, 10, fulfils)
}

// A give-up the merchant's hook could not take keeps the order: it is
// given up again at the next pass, never lost; an order whose last lookup
// failed at its maximum age is looked up again for a day first.
func TestWatchGiveUpIsNeverLost(t *testing.T) {
	s := newShop(t)
	w := s.watch(&watch.MemoryStore{})
	w.MaxAge, w.Schedule = time.Hour, []time.Duration{30 * time.Minute}
	failing := true
	var told []string
	w.OnGiveUp = func(_ context.Context, o watch.Order, last paygate.ReconcileEntry) error {
		told = append(told, fmt.Sprint(o.RefNo, " ", last.Outcome, " ", s.clock.Now().Sub(start)))
		if failing {
			return errors.New("review table unavailable")
		}
		return nil
	}
	s.order(t, w, "INV-1", "") // never paid: pending
	step := func(d time.Duration) watch.Pass {
		s.clock.Advance(d)
		p, err := w.Step(context.Background())
		if failing && p.Checked > 0 && s.clock.Now().Sub(start) >= time.Hour {
			require.ErrorContains(t, err, "review table unavailable")
		}
		return p
	}
	step(30 * time.Minute)
	step(30 * time.Minute) // at its maximum age: the hook fails
	left, err := w.List(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, left, 1, "kept for another try")
	failing = false
	p := step(time.Minute)
	require.Equal(t, 1, p.GivenUp)
	require.Equal(t, []string{"INV-1 pending 1h0m0s", "INV-1 pending 1h1m0s"}, told)
	left, err = w.List(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, left)
}

// down is a transport for a gateway that cannot be reached.
type down struct{}

func (down) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// An order whose lookups fail (the gateway unreachable) at its maximum
// age is not given up then: it is looked up again for a day, and given up
// only after, its last outcome the error.
func TestWatchGatewayDownAtMaxAgeGetsADay(t *testing.T) {
	s := newShop(t)
	w := s.watch(&watch.MemoryStore{})
	w.MaxAge = time.Hour
	s.order(t, w, "INV-1", "")
	client, err := s.sb.Client(paygate.WithHTTPClient(&http.Client{Transport: down{}}),
		paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	w.Client = client
	for s.clock.Now().Before(start.Add(time.Hour + 24*time.Hour + time.Hour)) {
		s.clock.Advance(10 * time.Minute)
		_, err := w.Step(context.Background())
		require.NoError(t, err)
		if _, gone := s.gaveUp["INV-1"]; !gone {
			continue
		}
		require.GreaterOrEqual(t, s.clock.Now().Sub(start), 25*time.Hour, "given up a day after its maximum age")
		require.Equal(t, paygate.OutcomeError, s.gaveUp["INV-1"])
		return
	}
	t.Fatal("never given up")
}

// broken is a store that fails every call but Take (which hands out one
// due order when due is set) and Find.
type broken struct {
	watch.Store
	due              bool
	take, reschedule error
}

var errStore = errors.New("store unreachable")

func (b *broken) Add(context.Context, watch.Order) error                           { return errStore }
func (b *broken) Remove(context.Context, string) error                             { return errStore }
func (b *broken) Finish(context.Context, watch.Order) error                        { return errStore }
func (b *broken) List(context.Context, int) ([]watch.Order, error)                 { return nil, errStore }
func (b *broken) Find(context.Context, string) ([]watch.Order, error)              { return nil, errStore }
func (b *broken) Reschedule(context.Context, watch.Order) error                    { return b.reschedule }
func (b *broken) Spend(context.Context, time.Time, watch.Budget, int) (int, error) { return 1, nil }
func (b *broken) Take(_ context.Context, now time.Time, _ int, _ time.Duration) ([]watch.Order, error) {
	if !b.due {
		return nil, b.take
	}
	b.due = false
	return []watch.Order{{RefNo: "INV-1", Created: now.Add(-time.Minute), Next: now.Add(time.Minute), Token: "t"}}, nil
}

// Every store failure reaches the caller, named; a reschedule that finds
// the order held by another replica (ErrLost) is not a failure.
func TestWatchStoreFailuresReachTheCaller(t *testing.T) {
	s := newShop(t)
	store := &broken{take: errStore}
	w := s.watch(store)
	ctx := context.Background()
	require.ErrorIs(t, w.Await(ctx, "INV-1"), errStore)
	require.ErrorContains(t, w.Await(ctx, "INV-1"), "watch: Await: ")
	require.ErrorIs(t, w.Forget(ctx, "INV-1"), errStore)
	_, err := w.List(ctx, 5)
	require.ErrorIs(t, err, errStore)
	_, err = watch.CreatedRefNo(ctx, store, "INV-1")
	require.ErrorContains(t, err, `watch: finding "INV-1": store unreachable`)
	rec, err := w.Reconcile(ctx, []string{"INV-1"})
	require.NoError(t, err, "a reference the store cannot resolve is an entry, not the call's error")
	require.ErrorIs(t, rec.Entries[0].Err, errStore)
	_, err = w.Step(ctx)
	require.ErrorIs(t, err, errStore, "Take failed")

	for _, c := range []struct {
		name       string
		reschedule error
		want       error
	}{
		{"lost to another replica", watch.ErrLost, nil},
		{"store down", errStore, errStore},
	} {
		t.Run(c.name, func(t *testing.T) {
			store.due, store.take, store.reschedule = true, nil, c.reschedule
			p, err := w.Step(ctx) // INV-1 was never created: not found, rescheduled
			require.Equal(t, 1, p.Rescheduled)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.want)
		})
	}

	var logs strings.Builder
	store.take = errStore
	w.Logger, w.Poll = slog.New(slog.NewTextHandler(&logs, nil)), time.Millisecond
	runCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, w.Run(runCtx), context.DeadlineExceeded)
	require.Contains(t, logs.String(), "watch: pass failed; trying again")
	require.Contains(t, logs.String(), "store unreachable")

	done, stop := context.WithCancel(ctx)
	stop()
	store.due = true
	_, err = w.Step(done)
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, store.due, "an ended context stops the pass before it takes anything")
}

func TestWatchRefusesBadSettings(t *testing.T) {
	s := newShop(t)
	for _, c := range []struct {
		name string
		set  func(*watch.Watch)
		want string
	}{
		{"one at a time", func(w *watch.Watch) { w.Budget = watch.Budget{PerSecond: 1, Burst: 1} }, ""},
		{"shortest wait", func(w *watch.Watch) { w.Schedule = []time.Duration{time.Nanosecond} }, ""},
		{"zero wait", func(w *watch.Watch) { w.Schedule = []time.Duration{time.Minute, 0} }, "Schedule's waits must be positive"},
		{"negative poll", func(w *watch.Watch) { w.Poll = -time.Second }, "must not be negative"},
		{"negative lease", func(w *watch.Watch) { w.Lease = -time.Second }, "must not be negative"},
		{"negative age", func(w *watch.Watch) { w.MaxAge = -time.Second }, "must not be negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := s.watch(&watch.MemoryStore{})
			c.set(w)
			_, err := w.Step(context.Background())
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.want)
		})
	}
}

// recorder is an Observer that keeps the watch's events.
type recorder struct {
	observe.Base
	checks []observe.WatchCheck
}

func (r *recorder) WatchCheck(_ context.Context, c observe.WatchCheck) {
	r.checks = append(r.checks, c)
}

// The Observer is told of each lookup: its outcome, the order's age and
// lookups so far, and whether it is settled or given up; the Logger, not
// the default one, gets the give-up.
func TestWatchTellsItsObserverAndLogger(t *testing.T) {
	s := newShop(t)
	w := s.watch(&watch.MemoryStore{})
	rec := &recorder{}
	var logs strings.Builder
	w.Observer, w.Logger = rec, slog.New(slog.NewTextHandler(&logs, nil))
	w.MaxAge, w.Schedule = 30*time.Minute, []time.Duration{10 * time.Minute}
	s.order(t, w, "INV-1", "") // never paid
	for range 3 {
		s.clock.Advance(10 * time.Minute)
		_, err := w.Step(context.Background())
		require.NoError(t, err)
	}
	require.Equal(t, []observe.WatchCheck{
		{Outcome: "pending", Age: 10 * time.Minute, Checks: 1},
		{Outcome: "pending", Age: 20 * time.Minute, Checks: 2},
		{Outcome: "pending", Age: 30 * time.Minute, Checks: 3, GivenUp: true},
	}, rec.checks)
	require.Contains(t, logs.String(), "order given up at its maximum age")
	require.Contains(t, logs.String(), "checks=3")
}

// cancelOnTake ends the pass's context once it has taken an order.
type cancelOnTake struct {
	watch.Store
	cancel context.CancelFunc
}

func (c cancelOnTake) Take(ctx context.Context, now time.Time, n int, lease time.Duration) ([]watch.Order, error) {
	due, err := c.Store.Take(ctx, now, n, lease)
	if len(due) > 0 {
		c.cancel()
	}
	return due, err
}

// A pass whose context ends between the take and the lookup stops with
// the context's error and leaves the order to its lease: looked up at the
// next pass after it, never dropped.
func TestWatchPassEndedMidwayKeepsTheOrder(t *testing.T) {
	s := newShop(t, gatewaytest.WithCallbackLoss(func(string) bool { return true }))
	mem := &watch.MemoryStore{}
	ctx, cancel := context.WithCancel(context.Background())
	w := s.watch(cancelOnTake{mem, cancel})
	s.order(t, w, "INV-1", "")
	require.NoError(t, s.sb.Pay("INV-1", paygate.StatusSuccess))
	s.clock.Advance(5 * time.Minute)
	p, err := w.Step(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, watch.Pass{Checked: 1}, p)
	require.Empty(t, s.fulfilled["INV-1"])

	w.Store = mem
	s.clock.Advance(watch.DefaultLease)
	p, err = w.Step(context.Background())
	require.NoError(t, err)
	require.Equal(t, watch.Pass{Checked: 1, Settled: 1}, p)
	require.Len(t, s.fulfilled["INV-1"], 1)
}

// A pass with nothing due returns at once (bounded here, so that a pass
// that never ends fails the test rather than hangs it).
func TestWatchStepReturnsWhenNothingIsDue(t *testing.T) {
	s := newShop(t)
	w := s.watch(&watch.MemoryStore{})
	s.order(t, w, "INV-1", "") // due in 5 minutes
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := w.Step(ctx)
	require.NoError(t, err)
	require.Equal(t, watch.Pass{}, p)
}
