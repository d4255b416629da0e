package pgstore_test

import (
	"context"
	"database/sql"
	"log"
	"net/http"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// A merchant with several replicas shares one table between them.
func ExampleNew() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20) // keep the pool warm: duplicates come in bursts
	dedupe, err := pgstore.New(db)
	if err != nil {
		log.Fatal(err)
	}
	if err := dedupe.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	key, err := paygate.KeyFromEnv() // PAYGATE_API_KEY, as NewClientFromEnv reads it
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/paygate/return", &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		Fulfil: paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error {
			return nil // mark cb.RefNo paid, idempotently
		}),
	})
}

// Fulfilment in the merchant's own transaction: the order's update and the
// record that the callback was handled commit together, so the order is
// marked paid exactly once whatever crashes, without a unique constraint
// or an "already paid" check.
func ExampleDeduper_FulfilTx() {
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	dedupe, err := pgstore.New(db)
	if err != nil {
		log.Fatal(err)
	}
	key, err := paygate.KeyFromEnv() // PAYGATE_API_KEY, as NewClientFromEnv reads it
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/paygate/return", &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		Fulfil: dedupe.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
			if _, err := tx.ExecContext(ctx, `UPDATE orders SET paid_sen = $2 WHERE ref_no = $1`, cb.RefNo, int64(cb.Amount)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO ledger (ref_no, order_no) VALUES ($1, $2)`, cb.RefNo, cb.OrderNo)
			return err
		}),
	})
}

// Fulfilment in the merchant's own transaction on pgx: the Deduper is made
// on the merchant's pool, fn writes through pgx, and BEGIN goes to
// PostgreSQL with the claim in one round trip.
func ExampleDeduper_FulfilPgx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	dedupe, err := pgstore.NewPgx(pool)
	if err != nil {
		log.Fatal(err)
	}
	if err := dedupe.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	key, err := paygate.KeyFromEnv() // PAYGATE_API_KEY, as NewClientFromEnv reads it
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/paygate/return", &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		Fulfil: dedupe.FulfilPgx(func(ctx context.Context, tx pgx.Tx, cb *paygate.Callback) error {
			_, err := tx.Exec(ctx, `UPDATE orders SET paid_sen = $2 WHERE ref_no = $1`, cb.RefNo, int64(cb.Amount))
			return err
		}),
	})
}
