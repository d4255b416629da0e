// Package sqldedup is a paygate.Deduper on database/sql, for merchants who
// run several replicas of their callback handler: every replica shares one
// table, so a paid order is fulfilled once whichever replica the gateway's
// callback (or its retry, or a concurrent duplicate) reaches.
//
// The SQL is PostgreSQL's (9.5 or later: INSERT ... ON CONFLICT). The package
// imports no driver; open the *sql.DB with the one you use (pgx's stdlib,
// lib/pq). Times come from the database clock, so replicas with skewed
// clocks still agree on when a lease ends.
package sqldedup

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/paygate-go/paygate"
)

// DefaultTable is the table name unless WithTable says otherwise.
const DefaultTable = "paygate_dedupe"

// DefaultRetention is how long completed keys are kept.
const DefaultRetention = 30 * 24 * time.Hour

// Deduper implements paygate.Deduper on one table. Each call is a single
// statement in its own implicit transaction: no transaction or row lock is
// held while the caller's hook runs.
type Deduper struct {
	db        *sql.DB
	table     string
	retention time.Duration

	claimSQL, stateSQL, completeSQL, releaseSQL, purgeSQL string
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
	// One atomic statement: insert the key, or take it over when the
	// existing claim's lease (or a completed key's retention) has ended.
	d.claimSQL = `INSERT INTO ` + t + ` AS t (key, token, done, expires_at)
VALUES ($1, $2, false, now() + $3 * interval '1 microsecond')
ON CONFLICT (key) DO UPDATE
SET token = EXCLUDED.token, done = false, expires_at = EXCLUDED.expires_at
WHERE t.expires_at <= now()
RETURNING token`
	d.stateSQL = `SELECT done FROM ` + t + ` WHERE key = $1`
	d.completeSQL = `UPDATE ` + t + ` SET done = true, token = NULL, expires_at = now() + $3 * interval '1 microsecond'
WHERE key = $1 AND token = $2 AND NOT done`
	d.releaseSQL = `DELETE FROM ` + t + ` WHERE key = $1 AND token = $2 AND NOT done`
	d.purgeSQL = `DELETE FROM ` + t + ` WHERE expires_at <= now()`
	return d, nil
}

// Migrate creates the table if it does not exist.
func (d *Deduper) Migrate(ctx context.Context) error {
	_, err := d.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+d.table+` (
	key        text PRIMARY KEY,
	token      text,
	done       boolean NOT NULL DEFAULT false,
	expires_at timestamptz NOT NULL
)`)
	if err != nil {
		return fmt.Errorf("sqldedup: migrate: %w", err)
	}
	return nil
}

// Claim implements paygate.Deduper.
func (d *Deduper) Claim(ctx context.Context, key string, lease time.Duration) (paygate.ClaimState, string, error) {
	token, err := newToken()
	if err != nil {
		return 0, "", err
	}
	var got string
	err = d.db.QueryRowContext(ctx, d.claimSQL, key, token, lease.Microseconds()).Scan(&got)
	switch {
	case err == nil && got == token:
		return paygate.Claimed, token, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return 0, "", fmt.Errorf("sqldedup: claim: %w", err)
	}
	// Held by someone else, or done: say which (a later change only makes
	// the answer stale in the safe direction: Busy means "come back").
	var done bool
	switch err := d.db.QueryRowContext(ctx, d.stateSQL, key).Scan(&done); {
	case errors.Is(err, sql.ErrNoRows):
		return paygate.Busy, "", nil
	case err != nil:
		return 0, "", fmt.Errorf("sqldedup: claim state: %w", err)
	case done:
		return paygate.Done, "", nil
	}
	return paygate.Busy, "", nil
}

// Complete implements paygate.Deduper.
func (d *Deduper) Complete(ctx context.Context, key, token string) error {
	return d.exactlyOne(ctx, "complete", d.completeSQL, key, token, d.retention.Microseconds())
}

// Release implements paygate.Deduper.
func (d *Deduper) Release(ctx context.Context, key, token string) error {
	return d.exactlyOne(ctx, "release", d.releaseSQL, key, token)
}

// Purge deletes lapsed claims and completed keys past retention. Claim takes
// such rows over anyway; run Purge now and then only to keep the table small.
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
