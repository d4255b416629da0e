package sqldedup

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"time"

	"github.com/paygate-go/paygate"
)

// DefaultTable is the table name unless WithTable says otherwise.
const DefaultTable = "paygate_dedupe"

// DefaultRetention is how long completed keys are kept.
const DefaultRetention = paygate.DefaultRetention

// Deduper implements paygate.Deduper on one table. Each call is a single
// statement in its own implicit transaction: no transaction or row lock is
// held while the caller's hook runs.
type Deduper struct {
	db        *sql.DB
	table     string
	retention time.Duration

	claimSQL, renewSQL, completeSQL, releaseSQL, purgeSQL string
}

// Option configures a Deduper.
type Option func(*Deduper) error

// tableName is what WithTable accepts: an identifier, optionally
// schema-qualified, in lower case (no quoting needed).
var tableName = regexp.MustCompile(`^([a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*$`)

// WithTable sets the table name (default paygate_dedupe).
func WithTable(name string) Option {
	return func(d *Deduper) error {
		if !tableName.MatchString(name) {
			return fmt.Errorf("sqldedup: table name %q: want a lower-case identifier, optionally schema-qualified", name)
		}
		d.table = name
		return nil
	}
}

// WithRetention sets how long completed keys are remembered (default 30
// days); after that a key may be claimed again.
func WithRetention(r time.Duration) Option {
	return func(d *Deduper) error {
		if r <= 0 {
			return fmt.Errorf("sqldedup: retention %v: want a positive duration", r)
		}
		d.retention = r
		return nil
	}
}

// New returns a Deduper on db. Call Migrate once to create its table.
func New(db *sql.DB, opts ...Option) (*Deduper, error) {
	if db == nil {
		return nil, errors.New("sqldedup: nil *sql.DB")
	}
	d := &Deduper{db: db, table: DefaultTable, retention: DefaultRetention}
	for _, o := range opts {
		if err := o(d); err != nil {
			return nil, err
		}
	}
	t := d.table
	// One atomic statement, one round trip. A live row (a claim within its
	// lease, a completed key within retention) is only read: no row lock,
	// so a duplicate commits without a WAL flush. Otherwise insert the key,
	// or take it over when the existing row has lapsed. A row the
	// statement's snapshot cannot see yet (a concurrent first claim) makes
	// the insert conflict without taking over, and no row comes back, which
	// Claim reports as busy: the safe direction.
	d.claimSQL = `WITH live AS (
	SELECT done, coalesce(result, '') AS result FROM ` + t + `
	WHERE key = $1::text AND expires_at > now()
), claimed AS (
	INSERT INTO ` + t + ` AS t (key, token, done, result, expires_at)
	SELECT $1::text, $2::text, false, NULL, now() + $3::bigint * interval '1 microsecond'
	WHERE NOT EXISTS (SELECT 1 FROM live)
	ON CONFLICT (key) DO UPDATE
	SET token = EXCLUDED.token, done = false, result = NULL, expires_at = EXCLUDED.expires_at
	WHERE t.expires_at <= now()
	RETURNING true AS acquired, false AS done, ''::text AS result
)
SELECT acquired, done, result FROM claimed
UNION ALL
SELECT false, done, result FROM live`
	d.renewSQL = `UPDATE ` + t + ` SET expires_at = now() + $3::bigint * interval '1 microsecond'
WHERE key = $1 AND token = $2 AND NOT done`
	d.completeSQL = `UPDATE ` + t + ` SET done = true, token = NULL, result = $3, expires_at = now() + $4::bigint * interval '1 microsecond'
WHERE key = $1 AND token = $2 AND NOT done`
	d.releaseSQL = `DELETE FROM ` + t + ` WHERE key = $1 AND token = $2 AND NOT done`
	d.purgeSQL = `DELETE FROM ` + t + ` WHERE expires_at <= now()`
	return d, nil
}

// Migrate creates the table if it does not exist, and adds the result
// column to a table made by an earlier version. It is safe to run from
// every replica at start-up, all at once: it runs in one transaction that
// first takes a PostgreSQL advisory lock named after the table
// (pg_advisory_xact_lock), so concurrent Migrates of one table run one
// after the other and each later one finds the table made. The lock is
// needed because CREATE TABLE IF NOT EXISTS does not make concurrent
// creation safe: two sessions that both find no table both insert its row
// type, and one fails on pg_type's unique index (SQLSTATE 23505). The lock
// ends with the transaction, so a process killed mid-Migrate holds nothing.
// The column is added only when missing, so a Migrate against a live table
// takes no table lock that would queue its claims.
func (d *Deduper) Migrate(ctx context.Context) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqldedup: migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock(d.table)); err != nil {
		return fmt.Errorf("sqldedup: migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+d.table+` (
	key        text PRIMARY KEY,
	token      text,
	done       boolean NOT NULL DEFAULT false,
	result     text,
	expires_at timestamptz NOT NULL
)`); err != nil {
		return fmt.Errorf("sqldedup: migrate: %w", err)
	}
	var hasResult bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
WHERE attrelid = to_regclass($1) AND attname = 'result' AND NOT attisdropped)`, d.table).Scan(&hasResult); err != nil {
		return fmt.Errorf("sqldedup: migrate: %w", err)
	}
	if !hasResult {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+d.table+` ADD COLUMN IF NOT EXISTS result text`); err != nil {
			return fmt.Errorf("sqldedup: migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqldedup: migrate: %w", err)
	}
	return nil
}

// migrateLock is the advisory lock key of Migrate on table: a hash of the
// name, so that Migrates of other tables do not wait on each other (a
// collision only makes two of them take turns).
func migrateLock(table string) int64 {
	h := fnv.New64a()
	h.Write([]byte("paygate/sqldedup.Migrate " + table))
	return int64(h.Sum64())
}

// Claim implements paygate.Deduper in one statement.
func (d *Deduper) Claim(ctx context.Context, key string, lease time.Duration) (paygate.ClaimResult, error) {
	token, err := newToken()
	if err != nil {
		return paygate.ClaimResult{}, err
	}
	var acquired, done bool
	var result string
	switch err := d.db.QueryRowContext(ctx, d.claimSQL, key, token, lease.Microseconds()).Scan(&acquired, &done, &result); {
	case errors.Is(err, sql.ErrNoRows):
		return paygate.ClaimResult{State: paygate.ClaimBusy}, nil
	case err != nil:
		return paygate.ClaimResult{}, fmt.Errorf("sqldedup: claim: %w", err)
	case acquired:
		return paygate.ClaimResult{State: paygate.ClaimAcquired, Token: token}, nil
	case done:
		return paygate.ClaimResult{State: paygate.ClaimDone, Result: result}, nil
	}
	return paygate.ClaimResult{State: paygate.ClaimBusy}, nil
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

// Purge deletes the rows no claim needs any more: claims whose lease has
// lapsed (their holder crashed or stopped renewing; a Claim of the key would
// take the row over anyway, and a holder still running finds its claim lost)
// and completed keys older than the retention (DefaultRetention, 30 days,
// unless WithRetention). It never deletes a live claim or a key completed
// within the retention, so correctness never depends on it: it only keeps
// the table (one row per event) from growing. Run it about once a day, from
// one replica or a scheduled job (several at once are harmless); the table
// then holds about a retention's worth of events. What must hold is the
// retention itself: keep it far beyond the longest the gateway may go on
// retrying one callback (about every 30 s until a 2xx, docs/assumptions.md
// A-callback-retries) and beyond the oldest order you reconcile, since an
// event purged while a delivery of it can still arrive is handled again.
func (d *Deduper) Purge(ctx context.Context) (int64, error) {
	res, err := d.db.ExecContext(ctx, d.purgeSQL)
	if err != nil {
		return 0, fmt.Errorf("sqldedup: purge: %w", err)
	}
	return res.RowsAffected()
}

// exactlyOne runs a statement that must touch one row, else the claim is lost.
func (d *Deduper) exactlyOne(ctx context.Context, what, query string, args ...any) error {
	res, err := d.db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("sqldedup: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqldedup: %s: %w", what, err)
	}
	if n != 1 {
		return paygate.ErrClaimLost
	}
	return nil
}

// newToken makes a random claim token.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
