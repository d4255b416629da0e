package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// rowText is key's row in d's table as JSON, "" when there is none: two
// equal texts are the same row, every column and expires_at to the
// microsecond.
func rowText(t *testing.T, db *sql.DB, d *Deduper, key string) string {
	t.Helper()
	var text string
	require.NoError(t, db.QueryRow(`SELECT coalesce((SELECT row_to_json(t)::text FROM `+d.table+` AS t WHERE key = $1), '')`, key).Scan(&text))
	return text
}

// The two statements that take a row over, the lease path's claim
// function and FulfilTx's takeover (FulfilPgx's too), take only a lapsed
// lease claim whose key's lock no other transaction holds: never a live
// claim (one a claim's lookup could not see yet), never a done row, even
// past its retention until Purge deletes it, never under another's lock.
// A refused claim leaves the row as it was; a taken one carries the new
// holder's token (the old holder fenced) or, taken by a transactional
// delivery, is done for the retention.
func TestTakeoverOnlyOfALapsedClaim(t *testing.T) {
	ctx := context.Background()
	d, db := testDeduper(t)
	const key = "fulfil|INV-1"
	const lapsed = `'tok-old', false, NULL, now() - interval '1 second'`
	cases := []struct {
		name string
		row  string // the key's row before the claim, after its key; "" for none
		// locked: another transaction holds the key's advisory lock.
		locked                  bool
		wantClaim, wantTakeover bool
	}{
		{name: "no row", wantClaim: true},
		{name: "a live lease claim", row: `'tok-old', false, NULL, now() + interval '1 minute'`},
		{name: "a lapsed lease claim", row: lapsed, wantClaim: true, wantTakeover: true},
		{name: "a lapsed lease claim, its key's lock held", row: lapsed, locked: true},
		{name: "no row, its key's lock held", locked: true},
		{name: "a done row", row: `NULL, true, 'GW1', now() + interval '400 days'`},
		{name: "a done row past its retention", row: `NULL, true, 'GW1', now() - interval '1 second'`},
	}
	for _, c := range cases {
		for _, via := range []string{"claim function", "transactional takeover"} {
			t.Run(c.name+", "+via, func(t *testing.T) {
				_, err := db.Exec(`DELETE FROM ` + d.table)
				require.NoError(t, err)
				if c.row != "" {
					_, err = db.Exec(`INSERT INTO `+d.table+` (key, token, done, result, expires_at) VALUES ($1, `+c.row+`)`, key)
					require.NoError(t, err)
				}
				if c.locked {
					other, err := db.BeginTx(ctx, nil)
					require.NoError(t, err)
					t.Cleanup(func() { _ = other.Rollback() })
					_, err = other.Exec(`SELECT pg_advisory_xact_lock(`+keyLock(d.table, "$1::text")+`)`, key)
					require.NoError(t, err)
				}
				before := rowText(t, db, d, key)
				var got, want bool
				switch via {
				case "claim function":
					want = c.wantClaim
					require.NoError(t, db.QueryRow(`SELECT `+d.claimFunc+`($1, $2, $3)`, key, "tok-new", time.Minute.Microseconds()).Scan(&got))
				default:
					want = c.wantTakeover
					tx, err := db.BeginTx(ctx, nil)
					require.NoError(t, err)
					got, err = d.tookOver(ctx, tx, paygate.HookClaim{Key: key, Result: "GW2"})
					require.NoError(t, err)
					require.NoError(t, tx.Commit())
				}
				require.Equal(t, want, got, "claimed")
				if !got {
					require.Equal(t, before, rowText(t, db, d, key), "a refused claim leaves the row as it was")
					return
				}
				var token, result sql.NullString
				var done, live, retained bool
				require.NoError(t, db.QueryRow(`SELECT token, done, result, expires_at > now(), expires_at > now() + $2::bigint * interval '1 microsecond' - interval '1 day'
FROM `+d.table+` WHERE key = $1`, key, DefaultRetention.Microseconds()).Scan(&token, &done, &result, &live, &retained))
				if via == "claim function" {
					require.Equal(t, sql.NullString{String: "tok-new", Valid: true}, token, "the new holder's token: the old one fenced")
					require.False(t, done)
					require.True(t, live, "the new lease runs")
					return
				}
				require.False(t, token.Valid, "no token on a done row")
				require.True(t, done)
				require.Equal(t, sql.NullString{String: "GW2", Valid: true}, result)
				require.True(t, retained, "a done row is kept for the retention")
			})
		}
	}
}

// answerOrLockWait returns the answer that ch brings, or waited true as
// soon as a backend is seen waiting on a lock in a statement on table
// (pg_stat_activity): a duplicate that queues behind the delivery in
// flight instead of answering.
func answerOrLockWait(t *testing.T, db *sql.DB, table string, ch <-chan int) (code int, waited bool) {
	t.Helper()
	for range 30_000 { // a bound, so that neither never happening fails rather than hangs
		select {
		case code := <-ch:
			return code, false
		default:
		}
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0`, table).Scan(&n))
		if n > 0 {
			return 0, true
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the duplicate neither answered nor waited on a lock")
	return 0, false
}

// A lapsed lease claim taken over by one transactional delivery is that
// delivery's until it commits: a duplicate meanwhile is answered 503 at
// once, without queueing on the row and without running fn (its takeover
// touches no row: busy); afterwards it is done, fn having run once, and
// the lapsed claim's holder is fenced off.
func TestLapsedClaimTakenOverOnce(t *testing.T) {
	for _, p := range fulfilPaths() {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			db, opts := p.open(t)
			s := newTxShop(t, db, opts...)
			entered, proceed := make(chan struct{}), make(chan struct{})
			letGo := sync.OnceFunc(func() { close(proceed) })
			t.Cleanup(letGo) // a failed assertion must not leave fn blocked
			h := s.handlerOn(p, s.d, func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
				if s.calls.Add(1) > 1 {
					return errors.New("fn ran again while the takeover was in flight")
				}
				if err := tx.exec(ctx, `INSERT INTO `+s.ledger+` (ref_no, order_no, by_replica) VALUES ($1, $2, 'A')`, cb.RefNo, cb.OrderNo); err != nil {
					return err
				}
				close(entered)
				<-proceed
				return nil
			})
			c, err := s.d.Claim(ctx, "fulfil|INV-1", time.Minute)
			require.NoError(t, err)
			require.Equal(t, paygate.ClaimAcquired, c.State)
			_, err = s.db.Exec(`UPDATE `+s.d.table+` SET expires_at = now() - interval '1 second' WHERE key = $1`, "fulfil|INV-1")
			require.NoError(t, err)

			first, second := make(chan int, 1), make(chan int, 1)
			go func() { first <- s.deliver(t, h, "INV-1") }()
			waitFor(t, entered, "the first delivery's fn")
			go func() { second <- s.deliver(t, h, "INV-1") }()
			code, waited := answerOrLockWait(t, s.db, s.d.table, second)
			if waited {
				letGo()
				t.Fatal("the duplicate queued on the row the first delivery took over")
			}
			require.Equal(t, http.StatusServiceUnavailable, code, "a duplicate while the takeover is in flight")
			letGo()
			require.Equal(t, http.StatusOK, <-first)
			require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
			require.EqualValues(t, 1, s.calls.Load(), "fn ran once")
			require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
			require.ErrorIs(t, s.d.Complete(ctx, "fulfil|INV-1", c.Token, "late"), paygate.ErrClaimLost, "the lapsed claim's holder is fenced off")
		})
	}
}

// A lease claim is lapsed by the database's clock whenever it lapsed,
// before or after the Deduper was made: a transactional delivery takes
// over one whose lease ended a moment ago as it does an old one.
func TestFulfilTxTakesOverAClaimJustLapsed(t *testing.T) {
	lapses := []struct{ name, at string }{
		{"a second ago", `now() - interval '1 second'`},
		{"just now", `clock_timestamp()`},
	}
	for _, p := range fulfilPaths() {
		for _, l := range lapses {
			t.Run(p.name+", "+l.name, func(t *testing.T) {
				ctx := context.Background()
				db, opts := p.open(t)
				s := newTxShop(t, db, opts...)
				h := s.ledgerHandler(p)
				c, err := s.d.Claim(ctx, "fulfil|INV-1", time.Minute)
				require.NoError(t, err)
				require.Equal(t, paygate.ClaimAcquired, c.State)
				_, err = s.db.Exec(`UPDATE `+s.d.table+` SET expires_at = `+l.at+` WHERE key = $1`, "fulfil|INV-1")
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, s.deliver(t, h, "INV-1"))
				require.Equal(t, []string{"A"}, s.rows(t, "INV-1"))
			})
		}
	}
}
