package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/pgstore"
	"github.com/paygate-go/paygate/watch"
)

// BenchmarkWatchFleetKeepsUp: three replicas' watches on one WatchStore
// and Deduper (PostgreSQL), on the sandbox's test clock, through one
// simulated hour of orders, 10 % of whose callbacks are lost, then ten
// minutes more. Scaled to a tenth: 10,000 orders an hour against a budget
// of 0.5 requests a second (the default is 5), so the lookups needed per
// unit of budget are those of 100,000 orders an hour on the default. Side
// "settler": the watch is the handlers' Settler (an order leaves it when
// its callback settles it); side "before": it is not, as before issue 43.
// Reported: lookups, the largest lateness of a lookup past its due time
// (lag-s, simulated seconds), the orders still awaited at the end, and
// the lookups of orders whose callback was delivered. Run it once
// (-benchtime 1x), without -short; it needs PAYGATE_TEST_POSTGRES_DSN.
func BenchmarkWatchFleetKeepsUp(b *testing.B) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("PAYGATE_TEST_POSTGRES_DSN is not set")
	}
	if testing.Short() {
		b.Skip("a simulated hour takes minutes: only without -short")
	}
	for _, side := range []string{"settler", "before"} {
		b.Run(side, func(b *testing.B) {
			for range b.N {
				r := runWatchFleet(b, dsn, side == "settler", 10_000, watch.Budget{PerSecond: 0.5, Burst: 10})
				b.ReportMetric(float64(r.lookups), "lookups")
				b.ReportMetric(r.lag.Seconds(), "lag-s")
				b.ReportMetric(float64(r.left), "awaited-at-end")
				b.ReportMetric(float64(r.delivered), "lookups-of-delivered")
			}
		})
	}
}

type fleetRun struct {
	lookups, left, delivered int
	lag                      time.Duration
}

func runWatchFleet(b *testing.B, dsn string, settler bool, perHour int, budget watch.Budget) fleetRun {
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	suffix := time.Now().UnixNano()
	d, err := pgstore.New(db, pgstore.WithTable(fmt.Sprint("bench_fleet_dedupe_", suffix)))
	if err != nil {
		b.Fatal(err)
	}
	store, err := d.WatchStore(fmt.Sprint("bench_fleet_watch_", suffix))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, t := range []string{fmt.Sprint("bench_fleet_dedupe_", suffix), fmt.Sprint("bench_fleet_watch_", suffix), fmt.Sprint("bench_fleet_watch_", suffix, "_budget")} {
			_, _ = db.Exec("DROP TABLE IF EXISTS " + t)
		}
		_, _ = db.Exec(fmt.Sprint("DROP FUNCTION IF EXISTS bench_fleet_dedupe_", suffix, "_claim(text, text, bigint)"))
	}()
	if err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clock := gatewaytest.NewTestClock(start)
	lost := func(ref string) bool { var i int; _, _ = fmt.Sscanf(ref, "F-%d", &i); return i%10 == 0 }
	sb := gatewaytest.NewServer(gatewaytest.WithTestClock(clock), gatewaytest.WithCallbackLoss(lost))
	defer sb.Close()
	client, err := sb.Client()
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var watches []*watch.Watch
	var servers []*httptest.Server
	for range 3 {
		h := &paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()}, Deduper: d, Now: clock.Now, Logger: quiet, ReconcileInterval: -1,
			Fulfil: d.FulfilTx(func(context.Context, *sql.Tx, *paygate.Callback) error { return nil })}
		w := &watch.Watch{Handler: h, Client: client, Store: store, Budget: budget, Now: clock.Now, Logger: quiet}
		if settler {
			h.Settler = w
		}
		watches = append(watches, w)
		srv := httptest.NewServer(h)
		defer srv.Close()
		servers = append(servers, srv)
	}
	created := map[string]time.Time{}
	n := 0
	for sec := 1; sec <= 3600+600; sec++ {
		for ; sec <= 3600 && n < perHour*sec/3600; n++ {
			ref := fmt.Sprint("F-", n)
			created[ref] = clock.Now()
			o := paygate.Order{RefNo: ref, Amount: 1000, Email: "a@example.com", ReturnURL: servers[n%3].URL}
			if _, err := watches[n%3].CreateOrder(ctx, o); err != nil {
				b.Fatal(err)
			}
			if err := sb.Pay(ref, paygate.StatusSuccess); err != nil {
				b.Fatal(err)
			}
		}
		sb.Settle()
		clock.Advance(time.Second)
		var wg sync.WaitGroup
		for _, w := range watches {
			wg.Go(func() {
				if _, err := w.Step(ctx); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	var r fleetRun
	delivered := map[string]bool{}
	for _, dl := range sb.Callbacks() {
		delivered[dl.RefNo] = dl.Delivered
	}
	for _, l := range sb.Lookups() {
		r.lookups++
		r.lag = max(r.lag, l.At.Sub(created[l.RefNo].Add(5*time.Minute)))
		if delivered[l.RefNo] {
			r.delivered++
		}
	}
	left, err := store.List(ctx, perHour)
	if err != nil {
		b.Fatal(err)
	}
	r.left = len(left)
	return r
}
