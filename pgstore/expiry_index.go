package pgstore

// The expiry index, on expires_at, is what Purge walks: without it every
// purge reads the whole heap (measured 2.0-3.0 s at 30 M rows, claims at
// sixteen callers down to 0.55-0.7x meanwhile). Migrate builds it with
// CREATE INDEX CONCURRENTLY, so that a live table keeps taking claims
// while it is built: that statement cannot run in a transaction, so it
// runs after Migrate's transaction, on a connection of its own.
//
// Replicas that migrate at once take turns on a session advisory lock,
// tried every 50 ms rather than waited for: a session waiting inside
// pg_advisory_lock holds a snapshot, which CREATE INDEX CONCURRENTLY waits
// out, while the builder holds the lock the waiter wants (a deadlock
// PostgreSQL breaks by failing one of them). A build that died midway (its
// replica killed, the connection lost) leaves an invalid index: the next
// Migrate, holding the lock, drops it concurrently and builds it again.
// With the index valid, Migrate reads the catalogue and takes no lock.
// Design and figures: docs/postgres.md "Purge and the retention".

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"time"
)

// expiryIndexPoll is how often a Migrate waiting for another's index build
// tries the lock again.
const expiryIndexPoll = 50 * time.Millisecond

// migrateExpiryIndex builds the expiry index unless a valid one exists.
func (d *Deduper) migrateExpiryIndex(ctx context.Context) (err error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if exists, valid, err := d.expiryIndexState(ctx, conn); err != nil || exists && valid {
		return err
	}
	lock := expiryLock(d.table)
	if err := lockByPolling(ctx, conn, lock); err != nil {
		return err
	}
	defer func() {
		// A lock not given back would stay with the pooled connection:
		// close the connection instead, which ends its session.
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock); uerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			if err == nil {
				err = uerr
			}
		}
	}()
	return d.buildExpiryIndex(ctx, conn)
}

// lockByPolling takes the session advisory lock on conn, trying it every
// expiryIndexPoll until ctx ends.
func lockByPolling(ctx context.Context, conn *sql.Conn, lock int64) error {
	for {
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&got); err != nil || got {
			return err
		}
		t := time.NewTimer(expiryIndexPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// buildExpiryIndex builds the expiry index on conn, holding the lock,
// unless another replica built it meanwhile; an invalid one, left by a
// build that died midway, is dropped first.
func (d *Deduper) buildExpiryIndex(ctx context.Context, conn *sql.Conn) error {
	exists, valid, err := d.expiryIndexState(ctx, conn)
	switch {
	case err != nil:
		return err
	case exists && valid: // another replica built it meanwhile
		return nil
	case exists:
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+d.expiryIndex); err != nil {
			return err
		}
	}
	_, err = conn.ExecContext(ctx, `CREATE INDEX CONCURRENTLY IF NOT EXISTS `+unqualified(d.expiryIndex)+` ON `+d.table+` (expires_at)`)
	return err
}

// expiryIndexState reports whether the expiry index exists and whether it
// is valid (built to its end).
func (d *Deduper) expiryIndexState(ctx context.Context, conn *sql.Conn) (exists, valid bool, err error) {
	err = conn.QueryRowContext(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, d.expiryIndex).Scan(&valid)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, valid, err
}

// unqualified is name without its schema: CREATE INDEX puts an index in
// its table's schema and takes only the bare name.
func unqualified(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// expiryLock is the advisory lock key of the expiry index's build on
// table. Its seed is as stable as keyLock's.
func expiryLock(table string) int64 { return tableHash("paygate/sqldedup.expiry " + table) }
