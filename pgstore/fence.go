package pgstore

// A lease claim whose statement reached PostgreSQL but whose answer did not
// come back (the connection dropped, the server restarted after COMMIT,
// the caller's context ended while the statement sat in a partitioned
// network and landed once it healed) holds its key under a token nobody
// knows: before fencing, the event's next delivery got 503 for a whole
// lease (30 s by default), a status event's claim holding off the order's
// success (issue 44). Claim knows the token it sent, so it fences the
// claim itself: in the background it deletes the key's row under that
// token (the release's statement, which never touches a done row or
// another token's claim) until the delete found the row, or found none
// after the backend that ran the claim was seen gone from
// pg_stat_activity: a statement still queued on a live backend can land
// after any number of deletes found nothing, one whose backend is gone
// cannot. The check comes before the delete, in a statement of its own,
// so that the delete's snapshot is taken after the backend ended. Without
// the backend's process id (a driver other than pgx's), it deletes until
// the row is found or the bound below passes.
//
// The attempts start fenceFirst after the failure and double to fenceMax,
// so the key is free at most fenceMax after the store answers again. They
// end at the latest a lease and fenceGiveUp after the failure: a claim
// that lands later than that, from a network partitioned that long, holds
// its key for one lease, as before.

import (
	"context"
	"time"
)

// The schedule of a fence.
const (
	fenceFirst   = 50 * time.Millisecond
	fenceMax     = 500 * time.Millisecond
	fenceGiveUp  = time.Minute
	fenceTimeout = 5 * time.Second // each attempt's
)

// fence releases key under token, claimed by a statement that failed after
// it may have reached the backend pid (0: not known).
func (d *Deduper) fence(key, token string, pid uint32, lease time.Duration) {
	end := time.Now().Add(lease + fenceGiveUp)
	for wait := fenceFirst; time.Now().Before(end); wait = min(2*wait, fenceMax) {
		t := time.NewTimer(wait)
		<-t.C
		if d.fenceOnce(key, token, pid) {
			return
		}
	}
}

// fenceOnce is one attempt of fence; true once the claim can no longer
// hold the key.
func (d *Deduper) fenceOnce(key, token string, pid uint32) bool {
	ctx, cancel := context.WithTimeout(context.Background(), fenceTimeout)
	defer cancel()
	gone := false
	if pid != 0 {
		var alive bool
		if err := d.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, int64(pid)).Scan(&alive); err != nil {
			return false
		}
		gone = !alive
	}
	res, err := d.db.ExecContext(ctx, d.releaseSQL, key, token)
	if err != nil {
		return false
	}
	n, err := res.RowsAffected()
	return err == nil && (n == 1 || gone)
}
