package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate-go/paygate/pgstore"
	"github.com/paygate-go/paygate/watch"
)

// createdRefs turns references as callbacks carry them (the base refNo a
// ledger keeps) into the references as created (refNo~extraData), which
// the gateway's lookups take, where the pending watch's table in
// PAYGATE_DEDUPE_DSN's database knows them. Without the variable, or
// without the table (the watch not in use), refs are returned as given.
func createdRefs(ctx context.Context, refs []string, table string) ([]string, error) {
	dsn := os.Getenv(envDedupeDSN)
	if dsn == "" {
		return refs, nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: not a DSN pgx reads", envDedupeDSN)
	}
	defer db.Close()
	store, err := pgstore.NewWatchStore(db, table)
	if err != nil {
		return nil, fmt.Errorf("-watch-table: %w", err)
	}
	out := make([]string, len(refs))
	for i, ref := range refs {
		if strings.Contains(ref, "~") {
			out[i] = ref
			continue
		}
		created, err := watch.CreatedRefNo(ctx, store, ref)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: no watch here
			return refs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading table %s: %w", envDedupeDSN, table, err)
		}
		out[i] = created
	}
	return out, nil
}
