package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL for database/sql

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
	"github.com/paygate-go/paygate/watch"
)

// schema is the shop's own tables: its orders, a ledger of payments (no
// unique constraint: exactly once is the SDK's job), and the orders to
// review by hand.
const schema = `
CREATE TABLE IF NOT EXISTS shop_orders (ref_no text PRIMARY KEY, amount_sen bigint NOT NULL, paid_sen bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS shop_ledger (ref_no text NOT NULL, order_no text NOT NULL, amount_sen bigint NOT NULL, at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS shop_review (ref_no text NOT NULL, reason text NOT NULL, at timestamptz NOT NULL DEFAULT now())`

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address this replica serves on")
	public := flag.String("public", "", "the shop's address the gateway calls back (the load balancer); default: this replica's")
	schedule := flag.String("schedule", "", "the watch's waits before each lookup, comma-separated (default: the watch's, minutes to a day)")
	maxAge := flag.Duration("max-age", 0, "how long an order is awaited (default watch.DefaultMaxAge, 8 days)")
	perSecond := flag.Float64("lookups", 0, "the fleet's lookups a second (default watch.DefaultPerSecond)")
	lease := flag.Duration("watch-lease", 0, "how long a replica holds an order it looks up (default watch.DefaultLease, 20 s, renewed while the lookup runs)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, config{addr: *addr, public: *public, schedule: *schedule,
		maxAge: *maxAge, perSecond: *perSecond, lease: *lease}); err != nil {
		log.Fatal(err)
	}
}

// config is a replica's command line.
type config struct {
	addr, public, schedule string
	maxAge, lease          time.Duration
	perSecond              float64
}

func run(ctx context.Context, cfg config) error {
	client, err := paygate.NewClientFromEnv() // PAYGATE_*: the gateway's URLs and credentials
	if err != nil {
		return err
	}
	key, err := paygate.KeyFromEnv()
	if err != nil {
		return err
	}
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer db.Close()
	// Bursts of duplicate callbacks must not open and close connections:
	// as many idle as open.
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)

	handler, w, err := newShop(ctx, db, client, key, cfg)
	if err != nil {
		return err
	}

	l, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	if cfg.public == "" {
		cfg.public = "http://" + l.Addr().String()
	}
	mux := http.NewServeMux()
	mux.Handle("POST /paygate/return", handler)
	mux.Handle("POST /orders", createOrder(db, w, client, cfg.public+"/paygate/return"))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		_ = w.Run(ctx)
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Printf("replica %s\n", l.Addr())
	err = srv.Serve(l)
	<-watching // its lookup and hooks done before the database closes
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newShop migrates the tables and builds the replica's callback handler
// and its watch, both on the shared database.
func newShop(ctx context.Context, db *sql.DB, client *paygate.Client, key paygate.Key, cfg config) (*paygate.CallbackHandler, *watch.Watch, error) {
	dedupe, err := pgstore.New(db)
	if err != nil {
		return nil, nil, err
	}
	store, err := dedupe.WatchStore("") // on the Deduper's *sql.DB: a fulfilment removes its order in its own transaction
	if err != nil {
		return nil, nil, err
	}
	// Every replica migrates at start-up; concurrent runs are safe.
	for _, migrate := range []func(context.Context) error{dedupe.Migrate, store.Migrate, shopMigrate(db)} {
		if err := migrate(ctx); err != nil {
			return nil, nil, err
		}
	}

	handler := &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		// The payment and the record of its callback commit together.
		Fulfil: dedupe.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO shop_ledger (ref_no, order_no, amount_sen) VALUES ($1, $2, $3)`,
				cb.CreatedRefNo(), cb.OrderNo, int64(cb.Amount)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE shop_orders SET paid_sen = paid_sen + $2 WHERE ref_no = $1`, cb.CreatedRefNo(), int64(cb.Amount))
			return err
		}),
		OnStatus: func(context.Context, *paygate.Callback) error { return nil }, // pending, failed: nothing to do
	}
	w := &watch.Watch{Handler: handler, Client: client, Store: store, MaxAge: cfg.maxAge, Lease: cfg.lease,
		// An error keeps the order in the watch, to be given up again.
		OnGiveUp: func(ctx context.Context, o watch.Order, last paygate.ReconcileEntry) error {
			_, err := db.ExecContext(ctx, `INSERT INTO shop_review (ref_no, reason) VALUES ($1, $2)`,
				o.RefNo, "not settled after the watch's maximum age; last lookup: "+string(last.Outcome))
			return err
		}}
	handler.Settler = w // an order its callback settles leaves the watch at once, costing no lookup
	if w.Schedule, err = parseSchedule(cfg.schedule); err != nil {
		return nil, nil, err
	}
	if cfg.perSecond > 0 {
		w.Budget = watch.Budget{PerSecond: cfg.perSecond, Burst: max(1, int(cfg.perSecond))}
	}

	return handler, w, nil
}

// shopMigrate creates the shop's tables.
func shopMigrate(db *sql.DB) func(context.Context) error {
	return func(ctx context.Context) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		// One replica at a time (CREATE TABLE IF NOT EXISTS races).
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(20261125)`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return err
		}
		return tx.Commit()
	}
}

// createOrder is the shop's checkout: POST /orders with ref and amount
// (sen). The order is awaited first, then created at the gateway.
func createOrder(db *sql.DB, w *watch.Watch, client *paygate.Client, returnURL string) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ref := r.FormValue("ref")
		amount, err := strconv.ParseInt(r.FormValue("amount"), 10, 64)
		if ref == "" || err != nil {
			http.Error(rw, "want ref and amount (sen)", http.StatusBadRequest)
			return
		}
		order := paygate.Order{RefNo: ref, Amount: paygate.Amount(amount), Email: "buyer@example.com", ReturnURL: returnURL}
		if _, err := db.ExecContext(r.Context(), `INSERT INTO shop_orders (ref_no, amount_sen) VALUES ($1, $2) ON CONFLICT DO NOTHING`, ref, amount); err != nil {
			http.Error(rw, "database unavailable", http.StatusServiceUnavailable)
			return
		}
		// Awaited first (a crash in between loses nothing), forgotten again
		// if the create is refused for sure.
		res, err := w.CreateOrder(r.Context(), order)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		fmt.Fprintln(rw, res.Location)
	})
}

// parseSchedule reads -schedule: "" for the default.
func parseSchedule(s string) ([]time.Duration, error) {
	if s == "" {
		return nil, nil
	}
	var waits []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-schedule %q: want positive durations separated by commas", s)
		}
		waits = append(waits, d)
	}
	return waits, nil
}
