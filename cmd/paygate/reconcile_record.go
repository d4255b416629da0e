package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver of PAYGATE_DEDUPE_DSN's database

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// envDedupeDSN names the variable with the DSN of the merchant's
// pgstore database, which paygate reconcile reads (never writes) to tell
// a fulfilled order from one it would fulfil. A DSN holds a password, so
// it comes from the environment, never from a flag.
const envDedupeDSN = "PAYGATE_DEDUPE_DSN"

// recordLookup is what the dry run needs of a Deduper on a database: a
// read of a key's state that claims nothing (pgstore.Deduper.Lookup).
type recordLookup interface {
	Lookup(ctx context.Context, key string) (paygate.ClaimResult, error)
}

// readOnlyRecord is a paygate.Deduper that answers each claim from the
// merchant's record as it stands and records nothing: a done key is
// ClaimDone with its result (the handler then says already fulfilled, or
// double payment), a live claim ClaimBusy (in flight), and a key a claim
// would take is ClaimAcquired; Renew, Complete and Release do nothing.
// So the handler keys each event itself, as it does when a callback
// comes, and the dry run reads exactly the keys a delivery would claim.
type readOnlyRecord struct{ record recordLookup }

// dryRunToken is the token of a claim readOnlyRecord pretends to grant.
const dryRunToken = "paygate-reconcile-dry-run"

// Claim reads key's state; it never takes it.
func (r readOnlyRecord) Claim(ctx context.Context, key string, _ time.Duration) (paygate.ClaimResult, error) {
	res, err := r.record.Lookup(ctx, key)
	if err == nil && res.State == paygate.ClaimAcquired {
		res.Token = dryRunToken
	}
	return res, err
}

// Renew does nothing: no claim was taken.
func (readOnlyRecord) Renew(context.Context, string, string, time.Duration) error { return nil }

// Complete records nothing.
func (readOnlyRecord) Complete(context.Context, string, string, string) error { return nil }

// Release does nothing: no claim was taken.
func (readOnlyRecord) Release(context.Context, string, string) error { return nil }

// openRecord opens, read-only, the merchant's record named by
// PAYGATE_DEDUPE_DSN and table, and checks that the table can be read;
// nil (and a no-op close) without the variable. The DSN is never printed.
func openRecord(ctx context.Context, table string) (paygate.Deduper, func(), error) {
	dsn := os.Getenv(envDedupeDSN)
	if dsn == "" {
		return nil, func() {}, nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a DSN pgx reads", envDedupeDSN)
	}
	d, err := pgstore.New(db, pgstore.WithTable(table))
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("-dedupe-table: %w", err)
	}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := d.Lookup(probe, "paygate reconcile: probe"); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%s: reading table %s: %w", envDedupeDSN, table, err)
	}
	return readOnlyRecord{record: d}, func() { db.Close() }, nil
}
