package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/internal/testbound"
	"github.com/paygate-go/paygate/watch"
)

// watchFleet is three replicas of a shop on one database: each a handler on
// the shared Deduper and a watch on the shared WatchStore, all on one test
// clock, behind one URL that spreads callbacks over the live replicas.
type watchFleet struct {
	clock    *gatewaytest.TestClock
	sb       *gatewaytest.Server
	replicas []*watchReplica
	next     atomic.Int64

	mu        sync.Mutex
	fulfilled map[string]int
	gaveUp    map[string]time.Time
}

type watchReplica struct {
	handler *paygate.CallbackHandler
	watch   *watch.Watch
	dead    atomic.Bool
}

// ServeHTTP hands a callback to the next live replica, as a load balancer
// would; with none alive the gateway sees a 502 and retries.
func (f *watchFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for range f.replicas {
		rp := f.replicas[int(f.next.Add(1))%len(f.replicas)]
		if !rp.dead.Load() {
			rp.handler.ServeHTTP(w, r)
			return
		}
	}
	http.Error(w, "no replica", http.StatusBadGateway)
}

// The watchFleet, in one process on the sandbox's test clock: 300
// orders, 30% of callbacks lost, 10% settled five days late with their
// callbacks lost, 1% sent a stale failed callback after their success,
// 5% failed and 5% never paid; one of the three replicas dies an hour in,
// holding orders it took. Every paid order is fulfilled exactly once,
// nothing failed or unpaid is, the watchFleet's lookups stay within the one
// budget, and the unpaid orders are given up at their maximum age. A soak
// (testbound.SoakVar).
func TestWatchFleetSettlesEveryOrderOnce(t *testing.T) {
	testbound.Soak(t, "TestWatchStoreContract")
	db := openDB(t, testDSN(t))
	dedupe, _ := testDeduperOn(t, db)
	store := testWatchStore(t)
	const orders, late = 300, 5 * 24 * time.Hour
	kind := func(ref string) int { var i int; _, _ = fmt.Sscanf(ref, "INV-%d", &i); return i % 100 }
	f := &watchFleet{clock: gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)),
		fulfilled: map[string]int{}, gaveUp: map[string]time.Time{}}
	f.sb = gatewaytest.NewServer(gatewaytest.WithTestClock(f.clock),
		gatewaytest.WithCallbackLoss(func(ref string) bool { k := kind(ref); return k < 30 || (k >= 30 && k < 40) }),
		gatewaytest.WithLateSettlement(late, func(ref string) bool { k := kind(ref); return k >= 30 && k < 40 }),
		gatewaytest.WithStaleCallbacks(paygate.StatusFailed, func(ref string) bool { return kind(ref) == 40 }))
	t.Cleanup(f.sb.Close)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client, err := f.sb.Client()
	require.NoError(t, err)
	budget := watch.Budget{PerSecond: 0.5, Burst: 8}
	for range 3 {
		h := &paygate.CallbackHandler{Keys: []paygate.Key{f.sb.Key()}, Deduper: dedupe, Now: f.clock.Now,
			Logger: slog.New(slog.DiscardHandler), ReconcileInterval: -1,
			Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.fulfilled[cb.RefNo]++
				return nil
			}),
			OnStatus: func(context.Context, *paygate.Callback) error { return nil },
		}
		w := &watch.Watch{Handler: h, Client: client, Store: store, Budget: budget, Now: f.clock.Now,
			Logger: slog.New(slog.DiscardHandler),
			OnGiveUp: func(_ context.Context, o watch.Order, _ paygate.ReconcileEntry) error {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.gaveUp[o.RefNo] = f.clock.Now()
				return nil
			}}
		f.replicas = append(f.replicas, &watchReplica{handler: h, watch: w})
	}

	ctx := context.Background()
	start := f.clock.Now()
	for i := range orders {
		ref := fmt.Sprint("INV-", i)
		o := paygate.Order{RefNo: ref, Amount: 1000, Email: "a@example.com", ReturnURL: srv.URL}
		require.NoError(t, f.replicas[i%3].watch.AwaitOrder(ctx, o))
		_, err := client.CreateOrder(ctx, o)
		require.NoError(t, err)
		switch k := kind(ref); {
		case k < 90:
			require.NoError(t, f.sb.Pay(ref, paygate.StatusSuccess))
		case k < 95:
			require.NoError(t, f.sb.Pay(ref, paygate.StatusFailed))
		}
	}

	type step struct {
		at      time.Time
		lookups int
	}
	var steps []step
	for f.clock.Now().Before(start.Add(watch.DefaultMaxAge + time.Hour)) {
		d := 30 * time.Second
		if f.clock.Now().Sub(start) > 2*time.Hour {
			d = 15 * time.Minute
		}
		f.clock.Advance(d)
		if f.clock.Now().Sub(start) >= time.Hour && !f.replicas[2].dead.Load() {
			// Replica 2 dies holding what it takes now.
			_, err := store.Take(ctx, f.clock.Now(), 2, watch.DefaultLease)
			require.NoError(t, err)
			f.replicas[2].dead.Store(true)
		}
		var wg sync.WaitGroup
		passes := make([]watch.Pass, 3)
		errs := make([]error, 3)
		for i, rp := range f.replicas {
			if !rp.dead.Load() {
				wg.Go(func() { passes[i], errs[i] = rp.watch.Step(ctx) })
			}
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		steps = append(steps, step{f.clock.Now(), passes[0].Checked + passes[1].Checked + passes[2].Checked})
	}

	for i := range orders {
		ref := fmt.Sprint("INV-", i)
		want := 0
		if kind(ref) < 90 {
			want = 1
		}
		require.Equal(t, want, f.fulfilled[ref], ref)
		if k := kind(ref); k >= 95 {
			at, ok := f.gaveUp[ref]
			require.True(t, ok, "%s never paid: given up", ref)
			// At the first step past the maximum age, or the next: the
			// budget (8 at once) lets 8 of the 15 through per step.
			require.WithinRange(t, at, start.Add(watch.DefaultMaxAge), start.Add(watch.DefaultMaxAge+31*time.Minute), ref)
		}
	}
	require.Len(t, f.gaveUp, orders/20)
	left, err := store.List(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, left, "nothing awaited past its maximum age")
	total := 0
	for i := range steps {
		sum := 0
		for j := i; j < len(steps); j++ {
			sum += steps[j].lookups
			span := steps[j].at.Sub(steps[i].at).Seconds()
			// The bucket holds at most Burst when step i begins.
			require.LessOrEqual(t, float64(sum), float64(budget.Burst)+budget.PerSecond*span,
				"lookups from %v to %v", steps[i].at.Sub(start), steps[j].at.Sub(start))
		}
		total += steps[i].lookups
	}
	t.Logf("%d lookups for %d orders over %v of test time", total, orders, watch.DefaultMaxAge)
}
