package pgstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/paygate-go/paygate"
)

// DefaultTable is the table name unless WithTable says otherwise.
const DefaultTable = "paygate_dedupe"

// DefaultRetention is how long completed keys are kept at least: 400
// days (paygate.DefaultRetention).
const DefaultRetention = paygate.DefaultRetention

// Deduper implements paygate.Deduper on one table. Each call is a single
// statement in its own implicit transaction: no transaction or row lock is
// held while the caller's hook runs.
type Deduper struct {
	db *sql.DB
	// pool is NewPgx's: claims and FulfilPgx acquire from it, not db.
	pool      *pgxpool.Pool
	table     string
	retention time.Duration

	// claimFunc names the claim function Migrate creates (the table's name
	// and "_claim"), claimFuncBody is its body.
	claimFunc, claimFuncBody string

	claimSQL, claimCTESQL, lookupSQL, renewSQL, completeSQL, releaseSQL, purgeSQL string
	// expiryIndex is the name of the index on expires_at that Purge walks
	// (the table's own name and "_purge", in the table's schema).
	expiryIndex string
	// FulfilTx's claim, the first statement of its transaction, and its
	// takeover of a lapsed lease claim (fulfil_tx.go).
	txClaimSQL, txReadSQL, txTakeoverSQL string
}

// lapsedRow is the SQL condition of a row a claim may take over: a claim
// whose lease has lapsed, never a done row, whatever its age (a done row
// answers every claim until Purge deletes it; docs/assumptions.md
// A-replay-bound). A claim reads any other row as it is. Every statement
// that uses it names the table t.
const lapsedRow = `NOT t.done AND t.expires_at <= now()`

// Option configures a Deduper.
type Option func(*Deduper) error

// tableName is what WithTable accepts: an identifier, optionally
// schema-qualified, in lower case (no quoting needed).
// The table's own name has at most 57 characters, so that its claim
// function's name (the table's and "_claim") fits PostgreSQL's 63.
var tableName = regexp.MustCompile(`^([a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]{0,56}$`)

// WithTable sets the table name (default paygate_dedupe).
func WithTable(name string) Option {
	return func(d *Deduper) error {
		if !tableName.MatchString(name) {
			return fmt.Errorf("pgstore: table name %q: want a lower-case identifier of at most 57 characters (its claim function adds _claim to it), optionally schema-qualified", name)
		}
		d.table = name
		return nil
	}
}

// WithRetention sets how long completed keys are kept (default
// DefaultRetention, 400 days): a completed key is never claimed again while
// its row exists, and Purge deletes it only once the retention has passed.
// Keep it far above the handler's paygate.CallbackHandler.MaxTxnAge (30
// days by default), so that every replay the handler would fulfil finds
// the row (docs/assumptions.md A-replay-bound).
func WithRetention(r time.Duration) Option {
	return func(d *Deduper) error {
		if r <= 0 {
			return fmt.Errorf("pgstore: retention %v: want a positive duration", r)
		}
		d.retention = r
		return nil
	}
}

// NewPgx returns a Deduper on pool, for merchants whose code speaks pgx:
// New on stdlib.OpenDBFromPool(pool), except that claims and FulfilPgx
// take their connections from pool itself, which saves a tenth of a
// duplicate's time over database/sql's connection handling. Call it once
// per pool (the *sql.DB it opens lives as long as the process), and
// Migrate once to create the table.
func NewPgx(pool *pgxpool.Pool, opts ...Option) (*Deduper, error) {
	if pool == nil {
		return nil, errors.New("pgstore: nil *pgxpool.Pool")
	}
	return New(stdlib.OpenDBFromPool(pool), append(opts, withPool(pool))...)
}

// withPool is NewPgx's option: claims and FulfilPgx acquire from pool.
func withPool(pool *pgxpool.Pool) Option {
	return func(d *Deduper) error { d.pool = pool; return nil }
}

// New returns a Deduper on db. Call Migrate once to create its table.
func New(db *sql.DB, opts ...Option) (*Deduper, error) {
	if db == nil {
		return nil, errors.New("pgstore: nil *sql.DB")
	}
	d := &Deduper{db: db, table: DefaultTable, retention: DefaultRetention}
	for _, o := range opts {
		if err := o(d); err != nil {
			return nil, err
		}
	}
	t := d.table
	d.claimFunc = t + "_claim"
	// One statement, one round trip. A live row (a claim within its lease,
	// or a completed key, whatever its age: a done row is never taken over)
	// is only read, by a plain index
	// lookup: no row lock, so a duplicate commits without a WAL flush, and
	// nothing but the lookup runs, since COALESCE evaluates its second
	// argument only when the first is NULL. Otherwise (no row,
	// or a lapsed one) the claim function Migrate creates inserts the key
	// or takes the lapsed row over. The answer is one text: the state's
	// letter (claimResult), then a completed key's result.
	d.claimSQL = `SELECT coalesce((
	SELECT CASE WHEN done THEN 'D' || coalesce(result, '') ELSE 'B' END FROM ` + t + ` AS t
	WHERE key = $1::text AND NOT (` + lapsedRow + `)
), CASE WHEN ` + d.claimFunc + `($1::text, $2::text, $3::bigint) THEN 'A' ELSE 'B' END)`
	// The claim function: insert the key, or take it over when the
	// existing row is a lapsed claim (never a done row); true when the
	// claim is acquired. A live row the statement's lookup could not see (a
	// concurrent first claim, committed since or still in flight: the
	// insert waits for it) makes the insert do nothing and the UPDATE match
	// nothing, and false comes back, which Claim reports as busy: the safe
	// direction. ON CONFLICT DO NOTHING, then an UPDATE of a lapsed row
	// only, rather than ON CONFLICT DO UPDATE ... WHERE, which locks (and
	// so writes) the conflicting row even when its WHERE is false.
	// PL/pgSQL, so that its statements are planned once per connection.
	d.claimFuncBody = `
BEGIN
	IF NOT pg_try_advisory_xact_lock(` + keyLock(t, "claim_key") + `) THEN
		RETURN false; -- a FulfilTx transaction holds the key
	END IF;
	INSERT INTO ` + t + ` AS t (key, token, done, result, expires_at)
	VALUES (claim_key, claim_token, false, NULL, now() + lease_us * interval '1 microsecond')
	ON CONFLICT (key) DO NOTHING;
	IF FOUND THEN
		RETURN true;
	END IF;
	UPDATE ` + t + ` AS t
	SET token = claim_token, done = false, result = NULL, expires_at = now() + lease_us * interval '1 microsecond'
	WHERE t.key = claim_key AND ` + lapsedRow + `;
	RETURN FOUND;
END
`
	// The same claim in one statement without the function, for a table
	// Migrate has not yet given one: a data-modifying CTE, which PostgreSQL
	// plans and runs in full for every claim, duplicates included.
	d.claimCTESQL = `WITH live AS (
	SELECT done, coalesce(result, '') AS result FROM ` + t + ` AS t
	WHERE key = $1::text AND NOT (` + lapsedRow + `)
), claimed AS (
	INSERT INTO ` + t + ` AS t (key, token, done, result, expires_at)
	SELECT $1::text, $2::text, false, NULL, now() + $3::bigint * interval '1 microsecond'
	WHERE NOT EXISTS (SELECT 1 FROM live)
	ON CONFLICT (key) DO UPDATE
	SET token = EXCLUDED.token, done = false, result = NULL, expires_at = EXCLUDED.expires_at
	WHERE ` + lapsedRow + `
	RETURNING 'A'::text AS state
)
SELECT state FROM claimed
UNION ALL
SELECT CASE WHEN done THEN 'D' || result ELSE 'B' END FROM live`
	// FulfilTx's claim, the first statement of the merchant's transaction
	// (fulfil_tx.go): the key's lock, tried and, when taken, held to the end
	// of the transaction, then the key's row inserted done. One row
	// affected when claimed; none when the lock is held or the key has a
	// row (txReadSQL then says which, and txTakeoverSQL takes a lapsed
	// lease claim over). The floor's own statement, INSERT ... ON CONFLICT
	// DO NOTHING, so that a new payment costs what the floor costs (a
	// PL/pgSQL function or a CTE that also read the row measured 15-25%
	// more) and a duplicate neither locks the row nor takes a transaction
	// id: ON CONFLICT DO UPDATE ... WHERE locks the row it conflicts with
	// even when its WHERE is false (docs/operations.md).
	d.txClaimSQL = `INSERT INTO ` + t + ` AS t (key, token, done, result, expires_at)
SELECT $1::text, NULL, true, $2::text, now() + $3::bigint * interval '1 microsecond'
WHERE pg_try_advisory_xact_lock(` + keyLock(t, "$1::text") + `)
ON CONFLICT (key) DO NOTHING`
	// The transactional claim of a key whose row is a lapsed lease claim
	// (its holder crashed): taken over and made done, under the key's lock
	// (tried, as txClaimSQL's). One row affected when taken over; none when
	// the lock is held or the row is not, or no longer, a lapsed claim.
	d.txTakeoverSQL = `UPDATE ` + t + ` AS t
SET token = NULL, done = true, result = $2::text, expires_at = now() + $3::bigint * interval '1 microsecond'
WHERE t.key = $1::text AND ` + lapsedRow + ` AND pg_try_advisory_xact_lock(` + keyLock(t, "$1::text") + `)`
	// The transactional claim's read when txClaimSQL wrote nothing: the
	// key's row, whatever its state, with the letter L for a lapsed lease
	// claim (which claimResult reads as busy), so that only such a row
	// costs txTakeoverSQL's statement.
	d.txReadSQL = `SELECT CASE WHEN done THEN 'D' || coalesce(result, '') WHEN ` + lapsedRow + ` THEN 'L' ELSE 'B' END FROM ` + t + ` AS t
WHERE key = $1::text`
	// Lookup's: the claim statement's read of a live row, alone.
	d.lookupSQL = `SELECT CASE WHEN done THEN 'D' || coalesce(result, '') ELSE 'B' END FROM ` + t + ` AS t
WHERE key = $1::text AND NOT (` + lapsedRow + `)`
	d.renewSQL = `UPDATE ` + t + ` SET expires_at = now() + $3::bigint * interval '1 microsecond'
WHERE key = $1 AND token = $2 AND NOT done`
	d.completeSQL = `UPDATE ` + t + ` SET done = true, token = NULL, result = $3, expires_at = now() + $4::bigint * interval '1 microsecond'
WHERE key = $1 AND token = $2 AND NOT done`
	d.releaseSQL = `DELETE FROM ` + t + ` WHERE key = $1 AND token = $2 AND NOT done`
	// One batch of Purge: at most $1 expired rows, the oldest first, found
	// on the expiry index and deleted by their ctid (a Tid Scan). The
	// expiry is checked again on the row itself, so a lapsed claim a
	// concurrent claim took over meanwhile (its expires_at moved on) is left
	// alone (PostgreSQL 15 also skips it, its new version having another
	// ctid: the recheck is the rule said, not only that accident;
	// TestPurgeLeavesAClaimTakenOverMeanwhile); written with IS TRUE so that the planner cannot use it as an
	// index condition: with statistics from before the rows expired, it
	// chose the expiry index for the outer scan too, filtering every
	// expired row by the array of ctids (1.3 s for a batch of 10,000 rows
	// of 25,000, where the Tid Scan takes 8 ms).
	// The time is read as (SELECT now()), a value the planner cannot see:
	// with now() it probed the expiry index for the lowest live expiry
	// on every statement, walking the dead entries a purge leaves until
	// vacuum cleans the index (which PostgreSQL skips while under 2 % of
	// the table's pages hold dead rows): 1.3-5.5 ms of planning a
	// statement at 40 M rows, 0.08 ms now.
	d.purgeSQL = `DELETE FROM ` + t + ` AS t
WHERE t.ctid = ANY(ARRAY(SELECT ctid FROM ` + t + ` WHERE expires_at <= (SELECT now()) ORDER BY expires_at LIMIT $1::int))
AND (t.expires_at <= (SELECT now())) IS TRUE`
	d.expiryIndex = t + "_purge"
	return d, nil
}

// Migrate creates the table if it does not exist and brings a table of an
// earlier version up to date (the result column, the <table>_claim
// function, autovacuum settings that follow Purge, each set only where
// the table has none, so an operator's ALTER TABLE ... SET is kept, and
// the <table>_purge index on the expiry that Purge walks, built
// concurrently while claims go on). Every replica may run it at start-up
// at once: it runs under advisory locks named after the table, and takes
// no table lock when nothing changes. Details: docs/postgres.md.
func (d *Deduper) Migrate(ctx context.Context) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock(d.table)); err != nil {
		return fmt.Errorf("pgstore: migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+d.table+` (
	key        text PRIMARY KEY,
	token      text,
	done       boolean NOT NULL DEFAULT false,
	result     text,
	expires_at timestamptz NOT NULL
)`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	var hasResult bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
WHERE attrelid = to_regclass($1) AND attname = 'result' AND NOT attisdropped)`, d.table).Scan(&hasResult); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if !hasResult {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+d.table+` ADD COLUMN IF NOT EXISTS result text`); err != nil {
			return fmt.Errorf("pgstore: migrate: %w", err)
		}
	}
	if err := d.migrateClaimFunc(ctx, tx); err != nil {
		return fmt.Errorf("pgstore: migrate: claim function: %w", err)
	}
	if err := d.migrateVacuum(ctx, tx); err != nil {
		return fmt.Errorf("pgstore: migrate: autovacuum settings: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if err := d.migrateExpiryIndex(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: expiry index: %w", err)
	}
	return nil
}

// migrateClaimFunc creates the claim function unless one with its body
// exists.
func (d *Deduper) migrateClaimFunc(ctx context.Context, tx *sql.Tx) error {
	var body string
	err := tx.QueryRowContext(ctx, `SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure($1)`, d.claimFunc+"(text,text,bigint)").Scan(&body)
	if err == nil && body == d.claimFuncBody {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = tx.ExecContext(ctx, `CREATE OR REPLACE FUNCTION `+d.claimFunc+`(claim_key text, claim_token text, lease_us bigint)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $claim$`+d.claimFuncBody+`$claim$`)
	return err
}

// tableVacuum are the storage parameters Migrate gives the table, so that
// autovacuum follows the daily Purge: PostgreSQL's default waits for 20 %
// of the table to be dead, about 80 days of purges at a 400-day retention,
// where these wait for 0.2 % and 1,000 rows, under a day's purge at any
// size (docs/operations.md). Both exist since PostgreSQL 8.4.
var tableVacuum = []string{"autovacuum_vacuum_scale_factor=0.002", "autovacuum_vacuum_threshold=1000"}

// migrateVacuum sets each of tableVacuum the table does not have a value
// for. An operator's own value (ALTER TABLE ... SET) is kept, whatever it
// is; nothing is altered, and no lock taken, when every one is set.
func (d *Deduper) migrateVacuum(ctx context.Context, tx *sql.Tx) error {
	var have string // the table's reloptions, name=value each
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(array_to_string(reloptions, ' '), '') FROM pg_class WHERE oid = to_regclass($1)`, d.table).Scan(&have); err != nil {
		return err
	}
	var missing []string
	for _, opt := range tableVacuum {
		name, _, _ := strings.Cut(opt, "=")
		if !slices.ContainsFunc(strings.Fields(have), func(o string) bool { return strings.HasPrefix(o, name+"=") }) {
			missing = append(missing, opt)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `ALTER TABLE `+d.table+` SET (`+strings.Join(missing, ", ")+`)`)
	return err
}

// keyLock is the SQL expression of the advisory lock key of the event key
// expr in table: a 64-bit hash of the key, seeded by the table's name, so
// that tables do not share locks (a collision only makes two events take
// turns). The seeds' "paygate/sqldedup." prefix is the package's first
// name, kept because replicas of two releases share these locks during a
// rolling deploy: it must never change (TestLockKeysAreStable).
func keyLock(table, expr string) string {
	return fmt.Sprintf("hashtextextended(%s, %d)", expr, tableHash("paygate/sqldedup.key "+table))
}

// migrateLock is the advisory lock key of Migrate on table: a hash of the
// name, so that Migrates of other tables do not wait on each other (a
// collision only makes two of them take turns). Its seed is as stable as
// keyLock's.
func migrateLock(table string) int64 { return tableHash("paygate/sqldedup.Migrate " + table) }

// tableHash is the 64-bit FNV-1a hash of name, as a PostgreSQL bigint.
func tableHash(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// CompletedRetention implements paygate.RetentionReporter: WithRetention,
// or DefaultRetention.
func (d *Deduper) CompletedRetention() time.Duration { return d.retention }

// Claim implements paygate.Deduper in one statement (two on a table
// Migrate has not given its claim function). A claim that fails once its
// statement may have reached the server (its answer lost, or it lands
// after ctx ended) is fenced in the background: released under its token
// as soon as the store answers and the connection that sent it is gone
// (fence.go), so the event's next delivery is not held off for a lease.
func (d *Deduper) Claim(ctx context.Context, key string, lease time.Duration) (paygate.ClaimResult, error) {
	token := newToken()
	state, sent, err := d.claimState(ctx, d.claimSQL, key, token, lease.Microseconds())
	if isUndefinedFunction(err) {
		state, sent, err = d.claimState(ctx, d.claimCTESQL, key, token, lease.Microseconds())
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return paygate.ClaimResult{State: paygate.ClaimBusy}, nil
	case err != nil:
		if sent.maybe && !answered(err) {
			go d.fence(key, token, sent.pid, lease)
		}
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: claim: %w", err)
	}
	return claimResult(state, token), nil
}

// Lookup answers what a Claim of key would answer now, without claiming
// or writing anything: ClaimDone with the recorded result for a completed
// key, ClaimBusy for a claim within its lease, and ClaimAcquired, with no
// Token, when a Claim would take the key (no row, or a lapsed claim). It
// is for reports and dry runs (paygate reconcile reads the record with
// it); the answer may be out of date as soon as it is returned, so never
// act on the key on the strength of it: Claim it.
func (d *Deduper) Lookup(ctx context.Context, key string) (paygate.ClaimResult, error) {
	var state string
	err := d.db.QueryRowContext(ctx, d.lookupSQL, key).Scan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return paygate.ClaimResult{State: paygate.ClaimAcquired}, nil
	case err != nil:
		return paygate.ClaimResult{}, fmt.Errorf("pgstore: lookup: %w", err)
	}
	return claimResult(state, ""), nil
}

// pgxConn is what a connection of pgx's database/sql driver
// (github.com/jackc/pgx/v5/stdlib) offers: its native connection.
type pgxConn interface{ Conn() *pgx.Conn }

// claimSent says whether a claim statement may have reached the server
// (maybe), and on which backend (pid, its process id; 0 when the driver
// does not say).
type claimSent struct {
	maybe bool
	pid   uint32
}

// claimState runs a claim statement and returns its answer: on pgx's
// native connection when d's *sql.DB is pgx's, else through database/sql.
func (d *Deduper) claimState(ctx context.Context, query string, args ...any) (state string, sent claimSent, err error) {
	native, err := d.onPgx(ctx, func(c *pgx.Conn) error {
		sent = claimSent{maybe: true, pid: c.PgConn().PID()}
		return c.QueryRow(ctx, query, args...).Scan(&state)
	})
	if !native && err == nil {
		sent = claimSent{maybe: true}
		err = d.db.QueryRowContext(ctx, query, args...).Scan(&state)
	}
	return state, sent, err
}

// onPgx runs fn on a native pgx connection: one of d's pool (NewPgx), or
// of d's *sql.DB when its driver is pgx's. native is false, and fn not
// run, on another driver.
func (d *Deduper) onPgx(ctx context.Context, fn func(*pgx.Conn) error) (native bool, err error) {
	if d.pool != nil {
		c, err := d.pool.Acquire(ctx)
		if err != nil {
			return true, err
		}
		defer c.Release()
		return true, fn(c.Conn())
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return true, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(pgxConn)
		if !ok {
			return nil
		}
		native = true
		return fn(pc.Conn())
	})
	return native, err
}

// claimResult decodes a claim statement's answer: its first letter names
// the state (A acquired, D done, with the result after it, B busy); an
// answer it does not know (L, txReadSQL's lapsed claim, among them) is
// busy, the safe direction.
func claimResult(state, token string) paygate.ClaimResult {
	switch {
	case strings.HasPrefix(state, "A"):
		return paygate.ClaimResult{State: paygate.ClaimAcquired, Token: token}
	case strings.HasPrefix(state, "D"):
		return paygate.ClaimResult{State: paygate.ClaimDone, Result: state[1:]}
	}
	return paygate.ClaimResult{State: paygate.ClaimBusy}
}

// isUndefinedFunction reports whether err is PostgreSQL's undefined_function
// (SQLSTATE 42883), as a driver whose errors have a SQLState method (pgx's
// do) reports it: the claim function does not exist.
func isUndefinedFunction(err error) bool {
	var pg interface{ SQLState() string }
	return errors.As(err, &pg) && pg.SQLState() == "42883"
}

// answered reports whether err is PostgreSQL's own answer (an error with a
// SQLSTATE): the statement ran and failed, so nothing of it was committed.
func answered(err error) bool {
	var pg interface{ SQLState() string }
	return errors.As(err, &pg)
}

// Renew implements paygate.Deduper.
func (d *Deduper) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	return d.exactlyOne(ctx, "renew", d.renewSQL, key, token, lease.Microseconds())
}

// Complete implements paygate.Deduper.
func (d *Deduper) Complete(ctx context.Context, key, token, result string) error {
	return d.exactlyOne(ctx, "complete", d.completeSQL, key, token, result, d.retention.Microseconds())
}

// Release implements paygate.Deduper.
func (d *Deduper) Release(ctx context.Context, key, token string) error {
	return d.exactlyOne(ctx, "release", d.releaseSQL, key, token)
}

// purgeBatch is how many rows one statement of Purge deletes at most, and
// purgeRest how many times a statement's duration Purge pauses after it:
// the purge uses at most a fifth of one PostgreSQL backend, so claims
// keep 0.9x of their rate while it runs on a machine they keep busy
// (docs/postgres.md#purge-and-the-retention).
const (
	purgeBatch = 2500
	purgeRest  = 4
)

// Purge deletes lapsed claims and completed keys older than the retention,
// and returns how many rows it deleted. It never deletes a live claim or a
// key completed within the retention, so correctness never depends on it;
// run it about once a day to keep the table small. It walks the expiry
// index Migrate creates, in statements of at most 2,500 rows (a few
// milliseconds each), each followed by a rest four times as long, so
// its cost follows the rows it deletes, not the table's size, and claims
// keep their rate meanwhile. Keep the retention far beyond
// paygate.CallbackHandler.MaxTxnAge and the oldest order you reconcile
// (docs/postgres.md).
func (d *Deduper) Purge(ctx context.Context) (int64, error) {
	var total int64
	for {
		batchStart := time.Now()
		n, err := d.purgeOnce(ctx)
		if err != nil {
			return total, fmt.Errorf("pgstore: purge: %w", err)
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
		if err := purgeSleep(ctx, purgeRest*time.Since(batchStart)); err != nil {
			return total, fmt.Errorf("pgstore: purge: %w", err)
		}
	}
}

// purgeSettings are what a batch of Purge sets for its transaction: no
// bitmap scan, so that the batch walks the expiry index in order with a
// plain index scan, which marks the entries of rows an earlier batch
// deleted as dead as it passes them. A bitmap scan, which the planner
// picks when it expects a few thousand rows, never does: until vacuum
// runs, each batch would read again every row the purges before it
// deleted (a precaution: not measured apart from the recheck below).
const purgeSettings = `SET LOCAL enable_bitmapscan = off`

// purgeOnce deletes one batch, in a transaction of its own, and returns
// how many rows it deleted.
func (d *Deduper) purgeOnce(ctx context.Context) (int64, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if _, err := tx.ExecContext(ctx, purgeSettings); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, d.purgeSQL, purgeBatch)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// purgeSleep is how Purge rests between statements (a test records it).
var purgeSleep = pause

// pause waits for d, or returns ctx's error once ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// exactlyOne runs a statement that must touch one row, else the claim is lost.
func (d *Deduper) exactlyOne(ctx context.Context, what, query string, args ...any) error {
	res, err := d.db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("pgstore: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("pgstore: %s: %w", what, err)
	}
	if n != 1 {
		return paygate.ErrClaimLost
	}
	return nil
}

// newToken makes a random claim token. crypto/rand.Read never returns an
// error (since Go 1.24 it crashes the program instead).
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
