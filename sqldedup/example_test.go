package sqldedup_test

import (
	"context"
	"database/sql"
	"log"
	"net/http"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/sqldedup"
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
	dedupe, err := sqldedup.New(db)
	if err != nil {
		log.Fatal(err)
	}
	if err := dedupe.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	key, err := paygate.ParseKey(os.Getenv("PAYGATE_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/paygate/return", &paygate.CallbackHandler{
		Keys:    []paygate.Key{key},
		Deduper: dedupe,
		Fulfil: func(ctx context.Context, cb *paygate.Callback) error {
			return nil // mark cb.RefNo paid, idempotently
		},
	})
}
