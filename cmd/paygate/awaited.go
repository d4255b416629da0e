package main

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/paygate-go/paygate/pgstore"
)

// runAwaited lists the orders the fleet's watch awaits (package watch, on
// pgstore.WatchStore), the earliest due first, as CSV: the reference as
// created, when it was first awaited, its next lookup, the lookups so far.
func runAwaited(e env, args []string) int {
	fs := newFlags(e, "awaited", "[flags]",
		"Lists the orders the pending watch awaits (pgstore.WatchStore in the database of "+envDedupeDSN+"), earliest next check first, as CSV:\n"+
			"refno (as created), created, next_check, checks. An order whose next_check has passed is due; while a replica looks it up, next_check is the end of its lease.")
	table := fs.String("watch-table", pgstore.DefaultWatchTable, "the watch's table")
	limit := fs.Int("limit", 1000, "at most this many orders")
	raw := csvRawFlag(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (awaited takes flags only)", fs.Arg(0))
	}
	if *limit < 1 {
		return usageError(e, fs, "-limit %d: want 1 or more", *limit)
	}
	dsn := os.Getenv(envDedupeDSN)
	if dsn == "" {
		return fail(e, "%s is not set: want the DSN of the database the watch's replicas share", envDedupeDSN)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return fail(e, "%s: not a DSN pgx reads", envDedupeDSN)
	}
	defer db.Close()
	store, err := pgstore.NewWatchStore(db, *table)
	if err != nil {
		return usageError(e, fs, "-watch-table: %v", err)
	}
	orders, err := store.List(e.ctx, *limit)
	if err != nil {
		return fail(e, "%s: reading table %s: %v", envDedupeDSN, *table, err)
	}
	w := newCSVWriter(e.stdout, *raw)
	_ = w.Write([]string{"refno", "created", "next_check", "checks"})
	for _, o := range orders {
		_ = w.Write([]string{o.RefNo, o.Created.UTC().Format(time.RFC3339), o.Next.UTC().Format(time.RFC3339), strconv.Itoa(o.Checks)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fail(e, "writing: %v", err)
	}
	fmt.Fprintf(e.stderr, "%d awaited\n", len(orders))
	return exitOK
}
