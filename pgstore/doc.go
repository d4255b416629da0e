// Package pgstore holds the callback handler's state on PostgreSQL (11 or
// later), for merchants who run several replicas: the Deduper's table of
// claimed and completed events (a paid order is fulfilled once whichever
// replica the gateway's callback, its retry or a concurrent duplicate
// reaches), the transactional fulfilment on it (FulfilTx, FulfilPgx,
// HookTx), and the WatchStore of orders the watch awaits. The bank's
// outbox is zakat/outbox. Times come from the database's clock.
//
// Open the *sql.DB with github.com/jackc/pgx/v5/stdlib, or make the Deduper
// with NewPgx on a *pgxpool.Pool; set SetMaxIdleConns equal to
// SetMaxOpenConns. With the Deduper alone (the lease path) a hook runs at
// most once while the processes live and at least once after a crash.
// FulfilTx, and FulfilPgx on pgx, put the claim in the merchant's own
// transaction: exactly once for what fn writes, one commit. HookTx gives
// the other hooks a one-transaction record on the lease path.
//
// Set-up, once per process (every replica may Migrate at once; Purge about
// once a day):
//
//	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL")) // import _ "github.com/jackc/pgx/v5/stdlib"
//	db.SetMaxOpenConns(20)
//	db.SetMaxIdleConns(20)
//	dedupe, err := pgstore.New(db)
//	err = dedupe.Migrate(ctx)
//	handler := &paygate.CallbackHandler{Keys: keys, Fulfil: dedupe.FulfilTx(fulfil), Deduper: dedupe}
//
// Operating notes (Migrate, Purge, pool size, the rules for fn, round
// trips): docs/postgres.md. dedupetest.Run checks any Deduper against the
// contract.
package pgstore
