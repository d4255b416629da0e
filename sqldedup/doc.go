// Package sqldedup is a paygate.Deduper on database/sql, for merchants who
// run several replicas of their callback handler: every replica shares one
// table, so a paid order is fulfilled once whichever replica the gateway's
// callback (or its retry, or a concurrent duplicate) reaches.
//
// The SQL is PostgreSQL's (11 or later: INSERT ... ON CONFLICT,
// hashtextextended), with one PL/pgSQL function per table, <table>_claim,
// that Migrate creates: a claim reads the key's live row with a plain index
// lookup and only when there is none calls the function, which inserts the
// key or takes a lapsed claim over, so a duplicate costs PostgreSQL little
// more than a lookup. A table without its function (made by hand, or not
// migrated since an upgrade) still works, at one more round trip per claim.
//
// Open the *sql.DB with github.com/jackc/pgx/v5/stdlib (what the tests
// use; the package imports it for NewPgx, which registers its driver as
// "pgx"), whose statement cache makes every call one round trip, or make
// the Deduper with NewPgx on a *pgxpool.Pool. Then claims run on pgx's
// native connection (NewPgx's pool, or (*sql.Conn).Raw): they skip
// database/sql's rows and conversions, 14 allocations a duplicate instead
// of 22 and about 5-10% of its time on loopback. With any other driver
// claims go through database/sql.
//
// Times come from the database clock, so replicas with skewed clocks still
// agree on when a lease ends.
//
// Two paths. With the Deduper alone (the lease path) the handler claims an
// event with a lease (one statement; a duplicate's answer), runs the hook
// and records its completion (one more): a hook runs at most once while the
// processes live and at least once after a crash, once the lease has
// lapsed, so the hook must be idempotent. With Fulfil: d.FulfilTx(fn)
// (the transactional path) the claim is the first statement of the
// merchant's own transaction, a PostgreSQL advisory lock tried without
// waiting and the event's row written done, so the claim, the merchant's
// effect and its record commit together in one commit: exactly once for
// what fn writes, whatever crashes, and nothing to wait out after one,
// since PostgreSQL rolls an interrupted transaction back at once. Why the
// claim lives there, and what a duplicate costs on it: FulfilTx. On pgx,
// d.FulfilPgx(fn), on a Deduper of the merchant's pool (NewPgx), does the
// same with fn writing through pgx, and sends
// BEGIN and the claim together: a new payment costs no round trip beyond
// the merchant's own transaction. HookTx gives the other hooks the same
// one-transaction record on the lease path.
//
// Size the pool for bursts of duplicate callbacks: set SetMaxIdleConns equal
// to SetMaxOpenConns. database/sql keeps two idle connections by default, so
// every burst otherwise opens (and PostgreSQL forks) new connections, and a
// renewal that waits behind them can let a lease lapse.
//
// Set-up, once per process; Migrate is safe when every replica of a fleet
// runs it at the same instant (it takes an advisory lock), and Purge, run
// about once a day, keeps the table small:
//
//	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL")) // import _ "github.com/jackc/pgx/v5/stdlib"
//	db.SetMaxOpenConns(20)
//	db.SetMaxIdleConns(20)
//	dedupe, err := sqldedup.New(db)
//	err = dedupe.Migrate(ctx)
//	handler := &paygate.CallbackHandler{Keys: keys, Fulfil: dedupe.FulfilTx(fulfil), Deduper: dedupe}
//
// dedupetest.Run checks it (and any other Deduper) against the contract.
package sqldedup
