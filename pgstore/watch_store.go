package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate-go/paygate/watch"
)

// DefaultWatchTable is the table of a WatchStore unless told otherwise.
const DefaultWatchTable = "paygate_watch"

// WatchStore is a watch.Store on PostgreSQL: the awaited orders of a fleet
// and its lookup budget, shared by every replica's watch.Watch. It passes
// watchtest.Run. Each due order goes to one replica at a time: a take
// locks the due rows it moves with FOR UPDATE SKIP LOCKED, so replicas
// taking at once get different orders and never wait on each other.
type WatchStore struct {
	db     *sql.DB
	table  string // the orders
	budget string // the budget's bucket, one row
}

// NewWatchStore returns a WatchStore on db, in table (DefaultWatchTable
// when ""; its budget in table_budget). Call Migrate once to create them.
func NewWatchStore(db *sql.DB, table string) (*WatchStore, error) {
	if db == nil {
		return nil, errors.New("pgstore: nil *sql.DB")
	}
	if table == "" {
		table = DefaultWatchTable
	}
	if !tableName.MatchString(table) || len(indexName(table)) > len("_next")+56 {
		// (refIndexName is shorter than indexName: one bound covers both.)
		return nil, fmt.Errorf("pgstore: watch table name %q: want a lower-case identifier of at most 56 characters (its budget table adds _budget), optionally schema-qualified", table)
	}
	return &WatchStore{db: db, table: table, budget: table + "_budget"}, nil
}

// Migrate creates the store's tables if they do not exist. Like
// Deduper.Migrate, it is safe when every replica runs it at once.
func (s *WatchStore) Migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgstore: migrate watch: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	for _, stmt := range []string{
		`SELECT pg_advisory_xact_lock(` + fmt.Sprint(migrateLock(s.table)) + `)`,
		`CREATE TABLE IF NOT EXISTS ` + s.table + ` (
	ref        text PRIMARY KEY,
	created    timestamptz NOT NULL,
	next_check timestamptz NOT NULL,
	checks     integer NOT NULL DEFAULT 0,
	token      text NOT NULL DEFAULT ''
)`,
		`CREATE INDEX IF NOT EXISTS ` + indexName(s.table) + ` ON ` + s.table + ` (next_check)`,
		// Find's index: ref in byte order, whatever the database's collation.
		`CREATE INDEX IF NOT EXISTS ` + refIndexName(s.table) + ` ON ` + s.table + ` (ref COLLATE "C")`,
		`CREATE TABLE IF NOT EXISTS ` + s.budget + ` (
	id     boolean PRIMARY KEY DEFAULT true CHECK (id),
	tokens double precision NOT NULL,
	filled timestamptz NOT NULL
)`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("pgstore: migrate watch: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("pgstore: migrate watch: %w", err)
	}
	return nil
}

// indexName is the next_check index of table, in table's schema: its own
// name and "_next".
func indexName(table string) string {
	return table[strings.LastIndexByte(table, '.')+1:] + "_next"
}

// refIndexName is Find's index of table: its own name and "_ref".
func refIndexName(table string) string {
	return table[strings.LastIndexByte(table, '.')+1:] + "_ref"
}

// Add implements watch.Store.
func (s *WatchStore) Add(ctx context.Context, o watch.Order) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO `+s.table+` (ref, created, next_check)
VALUES ($1, $2, $3) ON CONFLICT (ref) DO NOTHING`, o.RefNo, o.Created, o.Next)
	return wrap("add", err)
}

// Take implements watch.Store in one statement: the due rows, earliest
// first, locked with SKIP LOCKED (rows another replica is taking are
// skipped, not waited for), each given a new token and a next_check at
// the lease's end.
func (s *WatchStore) Take(ctx context.Context, now time.Time, n int, lease time.Duration) ([]watch.Order, error) {
	rows, err := s.db.QueryContext(ctx, `WITH due AS (
	SELECT ref, next_check FROM `+s.table+`
	WHERE next_check <= $1 ORDER BY next_check LIMIT $2 FOR UPDATE SKIP LOCKED)
UPDATE `+s.table+` w SET next_check = $3, token = md5(random()::text || w.ref)
FROM due WHERE w.ref = due.ref
RETURNING w.ref, w.created, w.next_check, w.checks, w.token, due.next_check`, now, n, now.Add(lease))
	if err != nil {
		return nil, wrap("take", err)
	}
	defer rows.Close()
	type taken struct {
		o   watch.Order
		due time.Time
	}
	var all []taken
	for rows.Next() {
		var t taken
		if err := rows.Scan(&t.o.RefNo, &t.o.Created, &t.o.Next, &t.o.Checks, &t.o.Token, &t.due); err != nil {
			return nil, wrap("take", err)
		}
		all = append(all, t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("take", err)
	}
	slices.SortFunc(all, func(a, b taken) int { return a.due.Compare(b.due) })
	orders := make([]watch.Order, len(all))
	for i, t := range all {
		orders[i] = t.o
	}
	return orders, nil
}

// Reschedule implements watch.Store.
func (s *WatchStore) Reschedule(ctx context.Context, o watch.Order) error {
	res, err := s.db.ExecContext(ctx, `UPDATE `+s.table+` SET next_check = $3, checks = $4, token = ''
WHERE ref = $1 AND token = $2 AND token <> ''`, o.RefNo, o.Token, o.Next, o.Checks)
	if err != nil {
		return wrap("reschedule", err)
	}
	return heldRow(res, "reschedule")
}

// Hold implements watch.Store.
func (s *WatchStore) Hold(ctx context.Context, o watch.Order, until time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE `+s.table+` SET next_check = $3
WHERE ref = $1 AND token = $2 AND token <> ''`, o.RefNo, o.Token, until)
	if err != nil {
		return wrap("hold", err)
	}
	return heldRow(res, "hold")
}

// heldRow is ErrLost when res touched no row: the token no longer holds.
func heldRow(res sql.Result, op string) error {
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return wrap(op, err)
	case n == 0:
		return watch.ErrLost
	}
	return nil
}

// Finish implements watch.Store.
func (s *WatchStore) Finish(ctx context.Context, o watch.Order) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM `+s.table+` WHERE ref = $1 AND token = $2 AND token <> ''`, o.RefNo, o.Token)
	if err != nil {
		return wrap("finish", err)
	}
	return heldRow(res, "finish")
}

// Remove implements watch.Store.
func (s *WatchStore) Remove(ctx context.Context, refNo string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM `+s.table+` WHERE ref = $1`, refNo)
	return wrap("remove", err)
}

// List implements watch.Store.
func (s *WatchStore) List(ctx context.Context, limit int) ([]watch.Order, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT ref, created, next_check, checks FROM `+s.table+`
ORDER BY next_check, ref LIMIT $1`, max(limit, 0))
	if err != nil {
		return nil, wrap("list", err)
	}
	return scanOrders(rows, "list")
}

// scanOrders reads the rows of List and Find.
func scanOrders(rows *sql.Rows, op string) ([]watch.Order, error) {
	defer rows.Close()
	var orders []watch.Order
	for rows.Next() {
		var o watch.Order
		if err := rows.Scan(&o.RefNo, &o.Created, &o.Next, &o.Checks); err != nil {
			return nil, wrap(op, err)
		}
		orders = append(orders, o)
	}
	return orders, wrap(op, rows.Err())
}

// Find implements watch.Store by index at any size (ref in byte order,
// Migrate's _ref index): base itself, and the range from base~ up to base
// and the next byte after '~' (0x7f), which holds exactly the references
// that start with base~. No LIKE, so a base holding % or _ matches only
// itself.
func (s *WatchStore) Find(ctx context.Context, base string) ([]watch.Order, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT ref, created, next_check, checks FROM `+s.table+`
WHERE ref COLLATE "C" = $1
   OR (ref COLLATE "C" >= $1 || '~' AND ref COLLATE "C" < $1 || chr(127))
ORDER BY ref COLLATE "C"`, base)
	if err != nil {
		return nil, wrap("find", err)
	}
	return scanOrders(rows, "find")
}

// Spend implements watch.Store on the budget's one row, which serialises
// the fleet's spends: the bucket is refilled from its last spend to now
// (by nothing when now is earlier), min(n, the whole tokens in it) are
// taken, and the later of the two times stays the last spend, or now when
// it is more than a minute earlier (a clock reset: as MemoryStore). The
// first spend finds no row and inserts a full bucket.
func (s *WatchStore) Spend(ctx context.Context, now time.Time, b watch.Budget, n int) (int, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO `+s.budget+` (tokens, filled) VALUES ($1, $2)
ON CONFLICT (id) DO NOTHING`, float64(b.Burst), now); err != nil {
		return 0, wrap("spend", err)
	}
	var granted int
	err := s.db.QueryRowContext(ctx, `WITH cur AS (
	SELECT LEAST($1::float8, tokens + GREATEST(0, EXTRACT(EPOCH FROM $2::timestamptz - filled)) * $3::float8) AS avail,
	       CASE WHEN $2::timestamptz < filled - interval '1 minute' THEN $2::timestamptz
	            ELSE GREATEST(filled, $2::timestamptz) END AS filled
	FROM `+s.budget+` FOR UPDATE)
UPDATE `+s.budget+` SET tokens = cur.avail - LEAST($4::int, floor(cur.avail)::int), filled = cur.filled
FROM cur RETURNING LEAST($4::int, floor(cur.avail)::int)`, float64(b.Burst), now, b.PerSecond, max(n, 0)).Scan(&granted)
	return granted, wrap("spend", err)
}

// wrap names the store's operation in a database error.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgstore: watch %s: %w", op, err)
}
