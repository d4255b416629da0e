package sqldedup

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// hookFault is what a Fulfil does on its first call for an order.
type hookFault int

const (
	faultNone     hookFault = iota
	faultPanic              // panics before doing anything
	faultHang               // runs past the lease (within HookTimeout): renewals hold the claim
	faultDeadline           // does its work just as its context expires
	faultError              // fails
	faultCount
)

// Three replicas over real HTTP, each with its own pool, share one table.
// A gateway delivers every order's success callback three times at once to
// random replicas and retries each delivery until it gets a 2xx. Hooks
// panic, hang past the lease, return at their deadline or fail on their
// first call. Every order is fulfilled, none twice.
func TestFaultsAcrossReplicas(t *testing.T) {
	dsn := testDSN(t)
	orders := 60
	if testing.Short() {
		orders = 20
	}
	// A lease long enough that a loaded CI machine does not miss its
	// renewals (every 500 ms, a 375 ms safety margin).
	const lease = 1500 * time.Millisecond
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	table, _ := testDeduper(t)

	var mu sync.Mutex
	fulfilled := map[string]int{}
	calls := map[string]int{}
	fulfil := func(ctx context.Context, cb *paygate.Callback) error {
		mu.Lock()
		calls[cb.RefNo]++
		first := calls[cb.RefNo] == 1
		mu.Unlock()
		var n int
		_, _ = fmt.Sscanf(cb.RefNo, "F-%d", &n)
		if first {
			switch hookFault(n % int(faultCount)) {
			case faultPanic:
				panic("stock service returned garbage")
			case faultHang:
				time.Sleep(lease * 3 / 2) // past the lease, within HookTimeout: renewed
			case faultDeadline:
				<-ctx.Done()
			case faultError:
				return fmt.Errorf("warehouse down")
			}
		}
		mu.Lock()
		defer mu.Unlock()
		fulfilled[cb.RefNo]++
		return nil
	}
	var replicas []string
	for range 3 {
		db := openDB(t, dsn) // its own pool, as another process would have
		warm(t, db, 20)
		d, err := New(db, WithTable(table.table))
		require.NoError(t, err)
		h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Lease: lease, HookTimeout: 2 * lease,
			Fulfil: fulfil, Logger: slog.New(slog.DiscardHandler)}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		replicas = append(replicas, srv.URL)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	// A hard bound: the faults cost a few seconds (3 s under -race); a
	// delivery still refused after this is a broken rule, not slowness.
	const bound = 15 * time.Second
	deadline := time.Now().Add(bound)
	var wg sync.WaitGroup
	answers := make(chan string, orders*3)
	for i := range orders {
		fields := url.Values{"status": {"success"}, "refNo": {fmt.Sprintf("F-%d~cart", i)}, "orderNo": {fmt.Sprintf("GW-%d", i)},
			"amount": {"10.00"}, "fpx": {`{"fpx_debit_auth_code":"00"}`}}
		signed, err := paygate.SignCallback(key, fields)
		require.NoError(t, err)
		body := signed.Encode()
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for attempt := 0; time.Now().Before(deadline); attempt++ {
					resp, err := client.Post(replicas[rand.IntN(len(replicas))], "application/x-www-form-urlencoded", strings.NewReader(body))
					if err == nil {
						resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							answers <- "ok"
							return
						}
						if resp.StatusCode/100 == 4 {
							// Final: no retry turns a refusal into a
							// fulfilment, so the test fails now, not at
							// the deadline.
							answers <- fmt.Sprintf("refused with HTTP %d (a signed success must be taken): %s", resp.StatusCode, fields.Get("refNo"))
							return
						}
					}
					time.Sleep(100 * time.Millisecond) // the gateway's ~30 s, shortened
				}
				answers <- fmt.Sprintf("gave up after %v: %s was never answered 200 (every event is fulfilled once its hook succeeds)", bound, fields.Get("refNo"))
			}()
		}
	}
	wg.Wait()
	close(answers)
	for a := range answers {
		require.Equal(t, "ok", a)
	}
	require.Len(t, fulfilled, orders, "every order fulfilled")
	for ref, n := range fulfilled {
		require.Equal(t, 1, n, "%s fulfilled %d times", ref, n)
	}
}

// warm opens n connections of db at once, as a running service's pool has
// them, so that the test measures the deduper, not PostgreSQL forking
// backends for cold pools.
func warm(t testing.TB, db *sql.DB, n int) {
	t.Helper()
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.Conn(context.Background())
		require.NoError(t, err)
		require.NoError(t, c.PingContext(context.Background()))
		conns[i] = c
	}
	for _, c := range conns {
		c.Close()
	}
}
