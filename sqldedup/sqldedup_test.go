package sqldedup

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// dsnVar names the environment variable with the test server's DSN.
const dsnVar = "PAYGATE_TEST_POSTGRES_DSN"

// testDeduper opens the test database and a fresh table, dropped afterwards.
// Without a DSN it skips on a developer's machine and fails in CI.
func testDeduper(t *testing.T, opts ...Option) (*Deduper, *sql.DB) {
	t.Helper()
	dsn := os.Getenv(dsnVar)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run these tests against a real PostgreSQL (.ci/run starts one)", dsnVar)
		}
		t.Skipf("%s is not set: skipping the PostgreSQL tests (bash .ci/run starts a server and sets it)", dsnVar)
	}
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	db.SetMaxOpenConns(20)
	t.Cleanup(func() { db.Close() })
	table := fmt.Sprintf("paygate_dedupe_test_%d", rand.Uint32())
	d, err := New(db, append([]Option{WithTable(table)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, d.Migrate(context.Background()))
	require.NoError(t, d.Migrate(context.Background()), "Migrate is idempotent")
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	return d, db
}

func TestDeduperLifecycle(t *testing.T) {
	ctx := context.Background()
	d, _ := testDeduper(t)
	s, tok, err := d.Claim(ctx, "fulfil|A", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.Claimed, s)
	s, _, err = d.Claim(ctx, "fulfil|A", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.Busy, s)
	require.ErrorIs(t, d.Complete(ctx, "fulfil|A", "other"), paygate.ErrClaimLost)
	require.NoError(t, d.Release(ctx, "fulfil|A", tok))
	require.ErrorIs(t, d.Release(ctx, "fulfil|A", tok), paygate.ErrClaimLost)

	s, tok, err = d.Claim(ctx, "fulfil|A", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.Claimed, s)
	require.NoError(t, d.Complete(ctx, "fulfil|A", tok))
	require.ErrorIs(t, d.Complete(ctx, "fulfil|A", tok), paygate.ErrClaimLost)
	s, _, err = d.Claim(ctx, "fulfil|A", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.Done, s)
}

// A lapsed lease can be taken over, and the old token is then worthless.
func TestDeduperExpiredLease(t *testing.T) {
	ctx := context.Background()
	d, _ := testDeduper(t)
	s, old, err := d.Claim(ctx, "k", 50*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, paygate.Claimed, s)
	time.Sleep(150 * time.Millisecond)
	s, tok, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.Claimed, s)
	require.ErrorIs(t, d.Complete(ctx, "k", old), paygate.ErrClaimLost)
	require.NoError(t, d.Complete(ctx, "k", tok))
}

// Completed keys are forgotten after retention; Purge removes them.
func TestDeduperRetentionAndPurge(t *testing.T) {
	ctx := context.Background()
	d, _ := testDeduper(t, WithRetention(50*time.Millisecond))
	_, tok, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.NoError(t, d.Complete(ctx, "k", tok))
	time.Sleep(150 * time.Millisecond)
	n, err := d.Purge(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	s, _, err := d.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	require.Equal(t, paygate.Claimed, s)
}

// Two handlers (two replicas) share one PostgreSQL-backed deduper; 100
// concurrent duplicates split between them give exactly one fulfilment.
func TestTwoReplicasOneFulfilment(t *testing.T) {
	d, _ := testDeduper(t)
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	var mu sync.Mutex
	fulfilled := map[string]int{}
	newReplica := func() *paygate.CallbackHandler {
		return &paygate.CallbackHandler{
			Keys:    []paygate.Key{key},
			Deduper: d,
			Fulfil: func(_ context.Context, cb *paygate.Callback) error {
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				defer mu.Unlock()
				fulfilled[cb.RefNo]++
				return nil
			},
		}
	}
	replicas := []*paygate.CallbackHandler{newReplica(), newReplica()}
	fields := url.Values{"status": {"success"}, "refNo": {"INV-100~x"}, "orderNo": {"GW100"}, "amount": {"10.00"},
		"fpx": {`{"fpx_debit_auth_code":"00"}`}}
	codes := make([]int, 100)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range codes {
		r, err := paygate.NewCallbackRequest(key, "/return", fields)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			w := httptest.NewRecorder()
			replicas[i%2].ServeHTTP(w, r)
			codes[i] = w.Code
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, map[string]int{"INV-100~x": 1}, fulfilled)
	for _, c := range codes {
		require.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, c)
	}
}

// A replica that crashed mid-fulfilment leaves a claim; once its lease ends,
// the gateway's retry is fulfilled by the other replica.
func TestCrashedReplicaLeaseExpires(t *testing.T) {
	ctx := context.Background()
	d, _ := testDeduper(t)
	key, _ := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	s, _, err := d.Claim(ctx, "fulfil|INV-200", 100*time.Millisecond) // the crashed replica
	require.NoError(t, err)
	require.Equal(t, paygate.Claimed, s)
	calls := 0
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Fulfil: func(context.Context, *paygate.Callback) error {
		calls++
		return nil
	}}
	fields := url.Values{"status": {"success"}, "refNo": {"INV-200"}, "orderNo": {"GW200"}}
	deliver := func() int {
		r, err := paygate.NewCallbackRequest(key, "/return", fields)
		require.NoError(t, err)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusServiceUnavailable, deliver())
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, http.StatusOK, deliver())
	require.Equal(t, http.StatusOK, deliver())
	require.Equal(t, 1, calls)
}

func TestNewOptions(t *testing.T) {
	_, err := New(nil)
	require.Error(t, err)
	db := &sql.DB{}
	for _, bad := range []string{"", "Robert'); DROP TABLE x;--", "a b", "1abc", "UPPER"} {
		_, err := New(db, WithTable(bad))
		require.Error(t, err, bad)
	}
	d, err := New(db, WithTable("shop.paygate_events"))
	require.NoError(t, err)
	require.Contains(t, d.claimSQL, "INSERT INTO shop.paygate_events AS t")
	_, err = New(db, WithRetention(0))
	require.Error(t, err)
}
