package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Purge rests after each full statement and not after the last, each rest
// at most four times as long as the statement before it took; a context that ends
// during a rest stops the purge with the rows deleted so far. (Not
// parallel: it swaps purgeSleep.)
func TestPurgeRestsBetweenStatements(t *testing.T) {
	d, db := testDeduper(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		expired   int
		stopAfter int // the rest that ends the context: 0 for none
		rests     int
		deleted   int64
	}{
		{name: "one short statement", expired: 17, rests: 0, deleted: 17},
		{name: "two full and a short one", expired: 2*purgeBatch + 17, rests: 2, deleted: 2*purgeBatch + 17},
		{name: "exactly two full", expired: 2 * purgeBatch, rests: 2, deleted: 2 * purgeBatch},
		{name: "stopped in the first rest", expired: 2*purgeBatch + 17, stopAfter: 1, rests: 1, deleted: purgeBatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.Exec(`DELETE FROM ` + d.table)
			require.NoError(t, err)
			_, err = db.Exec(`INSERT INTO `+d.table+` (key, token, done, result, expires_at)
SELECT 'old-' || i, NULL, true, 'GW', now() - interval '1 second' FROM generate_series(1, $1::int) AS i`, tc.expired)
			require.NoError(t, err)
			var rests []time.Duration
			var statements []time.Duration
			last := time.Now()
			stopped := errors.New("stopped")
			purgeSleep = func(_ context.Context, d time.Duration) error {
				statements = append(statements, time.Since(last))
				rests = append(rests, d)
				defer func() { last = time.Now() }()
				if len(rests) == tc.stopAfter {
					return stopped
				}
				return nil
			}
			t.Cleanup(func() { purgeSleep = pause })
			n, err := d.Purge(ctx)
			if tc.stopAfter > 0 {
				require.ErrorIs(t, err, stopped)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.deleted, n)
			require.Len(t, rests, tc.rests)
			for i, r := range rests {
				// The rest follows the statement: some rest, and at most
				// four times what the statement took as seen from outside,
				// which holds the statement Purge times.
				require.Positive(t, r, "rest %d", i)
				require.LessOrEqual(t, r, purgeRest*statements[i], "rest %d", i)
			}
		})
	}
}
