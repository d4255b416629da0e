package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/pgstore"
	"github.com/paygate-go/paygate/watch"
)

func TestAwaitedListsTheWatchEarliestFirst(t *testing.T) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("no PostgreSQL: set PAYGATE_TEST_POSTGRES_DSN (bash -c 'source .ci/postgres.sh && go test ./cmd/paygate/...')")
	}
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	table := fmt.Sprintf("paygate_watch_cli_%d", rand.Uint32())
	store, err := pgstore.NewWatchStore(db, table)
	require.NoError(t, err)
	require.NoError(t, store.Migrate(context.Background()))
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
		_, _ = db.Exec("DROP TABLE IF EXISTS " + table + "_budget")
	})
	at := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	require.NoError(t, store.Add(context.Background(), watch.Order{RefNo: "INV-2~cart", Created: at, Next: at.Add(time.Hour)}))
	require.NoError(t, store.Add(context.Background(), watch.Order{RefNo: "INV-1", Created: at, Next: at.Add(5 * time.Minute)}))

	t.Setenv(envDedupeDSN, dsn)
	code, out, errOut := runCLI(t, "", "awaited", "-watch-table", table)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "refno,created,next_check,checks\n"+
		"INV-1,2026-11-25T01:00:00Z,2026-11-25T01:05:00Z,0\n"+
		"INV-2~cart,2026-11-25T01:00:00Z,2026-11-25T02:00:00Z,0\n", out)
	require.Equal(t, "2 awaited\n", errOut)
	require.NotContains(t, out+errOut, "postgres://", "the DSN is never printed")
}

func TestAwaitedRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		dsn  string
		args []string
		code int
		want string
	}{
		{"no DSN", "", nil, exitUsage, envDedupeDSN + " is not set: want the DSN"},
		{"bad table", "postgres://user:secret-pw@127.0.0.1:1/x", []string{"-watch-table", "Bad"}, exitUsage, `watch table name "Bad"`},
		{"bad limit", "postgres://user:secret-pw@127.0.0.1:1/x", []string{"-limit", "0"}, exitUsage, "-limit 0: want 1 or more"},
		{"argument", "postgres://user:secret-pw@127.0.0.1:1/x", []string{"INV-1"}, exitUsage, `unexpected argument "INV-1"`},
		{"unreachable", "postgres://user:secret-pw@127.0.0.1:1/x?connect_timeout=2", nil, exitUsage, "reading table paygate_watch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envDedupeDSN, c.dsn)
			code, out, errOut := runCLI(t, "", append([]string{"awaited"}, c.args...)...)
			require.Equal(t, c.code, code, errOut)
			require.Contains(t, errOut, c.want)
			require.NotContains(t, out+errOut, "secret-pw")
		})
	}
}
