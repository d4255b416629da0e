package pgstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// planRowsVar names the number of completed events TestQueryPlans fills
// its table with (default 20,000); BENCHMARKS.md's plans are of
// PAYGATE_PLAN_ROWS=1000000.
const planRowsVar = "PAYGATE_PLAN_ROWS"

// Every statement a callback, a reconciliation or a purge runs on the
// dedupe table finds its rows by an index: the primary key for everything
// keyed by the event, the expiry index for Purge. Each runs under EXPLAIN
// (ANALYZE, BUFFERS), rolled back, on a table of completed events,
// analysed as autovacuum would, and a day of expired ones added since
// (statistics that do not know of them, as a daily purge finds them); no
// plan may read the heap in full, and Purge deletes by ctid. The plans are
// logged.
func TestQueryPlans(t *testing.T) {
	rows := 20000
	if v := os.Getenv(planRowsVar); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, planRowsVar)
		rows = n
	}
	d, db := testDeduper(t)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `INSERT INTO `+d.table+` (key, token, done, result, expires_at)
SELECT 'fulfil|R' || lpad(i::text, 12, '0'), NULL, true, 'GW-' || i, now() + interval '1 day' + (i % 400) * interval '1 day'
FROM generate_series(1, $1::int) AS i`, rows)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `VACUUM ANALYZE `+d.table)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO `+d.table+` (key, token, done, result, expires_at)
SELECT 'fulfil|X' || lpad(i::text, 12, '0'), NULL, true, 'GW-' || i, now() - i * interval '1 second'
FROM generate_series(1, $1::int) AS i`, 25000) // a day of a shop of 25,000 payments
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO `+d.table+` (key, token, done, result, expires_at) VALUES ('fulfil|LIVE', 'tok', false, NULL, now() + interval '1 minute')`)
	require.NoError(t, err)

	done, live, absent := "fulfil|R"+fmt.Sprintf("%012d", rows/2), "fulfil|LIVE", "fulfil|NEW"
	lease, retention := (30 * time.Second).Microseconds(), d.retention.Microseconds()
	for _, q := range []struct {
		name, sql string
		args      []any
		settings  string // for the statement's transaction
	}{
		{"Claim, a duplicate (the lease path's claim)", d.claimSQL, []any{done, "t", lease}, ""},
		{"Claim, a new event (the lease path's claim)", d.claimSQL, []any{absent, "t", lease}, ""},
		{"the claim function's INSERT", `INSERT INTO ` + d.table + ` AS t (key, token, done, result, expires_at)
VALUES ($1::text, $2::text, false, NULL, now() + $3::bigint * interval '1 microsecond')
ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, done = false, result = NULL, expires_at = EXCLUDED.expires_at
WHERE ` + lapsedRow, []any{absent, "t", lease}, ""},
		{"Claim without the claim function", d.claimCTESQL, []any{absent, "t", lease}, ""},
		{"FulfilTx's and FulfilPgx's claim", d.txClaimSQL, []any{absent, "GW", retention}, ""},
		{"Lookup, and FulfilTx's read of a duplicate", d.lookupSQL, []any{done}, ""},
		{"Renew", d.renewSQL, []any{live, "tok", lease}, ""},
		{"Complete (and HookTx's fenced completion)", d.completeSQL, []any{live, "tok", "GW", retention}, ""},
		{"Release (and the fence's delete)", d.releaseSQL, []any{live, "tok"}, ""},
		{"HookTx's read after a completion that touched nothing", `SELECT 1 FROM ` + d.table + ` WHERE key = $1`, []any{live}, ""},
		{"Purge, one batch", d.purgeSQL, []any{purgeBatch}, purgeSettings},
	} {
		t.Run(q.name, func(t *testing.T) {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback() }()
			if q.settings != "" {
				_, err := tx.ExecContext(ctx, q.settings)
				require.NoError(t, err)
			}
			plan, err := tx.QueryContext(ctx, `EXPLAIN (ANALYZE, BUFFERS) `+q.sql, q.args...)
			require.NoError(t, err)
			defer plan.Close()
			var b strings.Builder
			for plan.Next() {
				var line string
				require.NoError(t, plan.Scan(&line))
				b.WriteString(line + "\n")
			}
			require.NoError(t, plan.Err())
			t.Logf("%s, %d rows:\n%s", q.name, rows, b.String())
			require.NotContains(t, b.String(), "Seq Scan", "a plan that reads the whole table")
			require.Regexp(t, `Index (Only )?Scan|Bitmap Index Scan|Tid Scan|Result`, b.String())
			if q.sql == d.purgeSQL {
				require.Contains(t, b.String(), "Tid Scan", "Purge deletes by ctid, not by filtering every expired row")
			}
		})
	}
}
