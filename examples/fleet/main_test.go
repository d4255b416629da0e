package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/internal/testbound"
)

// The fleet at work, in scaled time: three replica processes on one
// PostgreSQL database against the sandbox; 300 orders, 30% of callbacks
// lost, 10% settled 3 s late with their callbacks lost too, every
// callback sent twice at once, 1% followed by a stale failed callback, 5%
// failed, 5% never paid; one replica SIGKILLed mid-run and restarted. The
// watch runs on a schedule of seconds and gives up at 12 s. Every paid
// order has exactly one ledger row, nothing else has one, every unpaid
// order is in the review table and no longer awaited, and the lookups of
// the whole fleet (counted at a proxy in front of the gateway) keep within
// the one budget. A soak (testbound.SoakVar).
func TestFleet(t *testing.T) {
	dsn := os.Getenv("PAYGATE_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("no PostgreSQL: set PAYGATE_TEST_POSTGRES_DSN (bash -c 'source .ci/postgres.sh && go test ./examples/fleet') to run three replicas on it")
	}
	testbound.Soak(t, "TestFleetHandler and TestFleetHandlerPgx (examples/guides)")
	dbURL, db := freshDatabase(t, dsn)
	bin := filepath.Join(t.TempDir(), "fleet")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	kind := func(ref string) int { var i int; _, _ = fmt.Sscanf(ref, "INV-%d", &i); return i % 100 }
	const late = 3 * time.Second
	sb := gatewaytest.NewServer(
		gatewaytest.WithRetryInterval(200*time.Millisecond), gatewaytest.WithMaxAttempts(5),
		gatewaytest.WithCallbackLoss(func(ref string) bool { return kind(ref) < 40 }),
		gatewaytest.WithLateSettlement(late, func(ref string) bool { k := kind(ref); return k >= 30 && k < 40 }),
		gatewaytest.WithDuplicateCallbacks(2, true),
		gatewaytest.WithStaleCallbacks(paygate.StatusFailed, func(ref string) bool { return kind(ref) == 40 }))
	t.Cleanup(sb.Close)

	lookups := &lookupCounter{target: sb.URL}
	gateway := httptest.NewServer(lookups)
	t.Cleanup(gateway.Close)
	lb := &balancer{}
	front := httptest.NewServer(lb)
	t.Cleanup(front.Close)

	const perSecond = 20
	env := append(os.Environ(), "DATABASE_URL="+dbURL,
		"PAYGATE_AGENCY="+sb.Agency, "PAYGATE_API_KEY="+sb.APIKey, "PAYGATE_AUTH_TOKEN="+sb.AuthToken,
		"PAYGATE_CHECKOUT_URL="+sb.URL, "PAYGATE_REPORTS_URL="+gateway.URL)
	args := []string{"-addr", "127.0.0.1:0", "-public", front.URL, "-schedule", "500ms,1s,2s",
		"-max-age", "12s", "-watch-lease", "2s", "-lookups", fmt.Sprint(perSecond)}
	replicas := make([]*replicaProc, 3)
	for i := range replicas {
		replicas[i] = startReplica(t, bin, env, args)
	}
	lb.set(replicas)

	const orders = 300
	kill := rand.IntN(orders)
	for i := range orders {
		ref := fmt.Sprint("INV-", i)
		require.NoError(t, lb.create(ref, 1000+int64(i)), ref)
		switch k := kind(ref); {
		case k < 90:
			require.NoError(t, sb.Pay(ref, paygate.StatusSuccess))
		case k < 95:
			require.NoError(t, sb.Pay(ref, paygate.StatusFailed))
		}
		if i == kill {
			replicas[2].kill()
			time.Sleep(300 * time.Millisecond)
			replicas[2] = startReplica(t, bin, env, args)
			lb.set(replicas)
		}
	}

	paid := 0
	for i := range orders {
		if kind(fmt.Sprint("INV-", i)) < 90 {
			paid++
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ledger, awaited int
		require.NoError(t, db.QueryRow(`SELECT (SELECT count(*) FROM shop_ledger), (SELECT count(*) FROM paygate_watch)`).Scan(&ledger, &awaited))
		if ledger >= paid && awaited == 0 {
			break
		}
		if time.Now().After(deadline) {
			var refs []string
			r, err := db.Query(`SELECT ref_no || ' next ' || next_check::text FROM paygate_watch`)
			require.NoError(t, err)
			for r.Next() {
				var ref string
				require.NoError(t, r.Scan(&ref))
				refs = append(refs, ref)
			}
			t.Fatalf("after 60 s: %d of %d paid orders in the ledger, %d still awaited: %v", ledger, paid, awaited, refs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second) // late duplicates and stale callbacks land

	rows := map[string]int{}
	r, err := db.Query(`SELECT ref_no, count(*) FROM shop_ledger GROUP BY ref_no`)
	require.NoError(t, err)
	for r.Next() {
		var ref string
		var n int
		require.NoError(t, r.Scan(&ref, &n))
		rows[ref] = n
	}
	require.NoError(t, r.Err())
	var review []string
	r, err = db.Query(`SELECT ref_no FROM shop_review ORDER BY ref_no`)
	require.NoError(t, err)
	for r.Next() {
		var ref string
		require.NoError(t, r.Scan(&ref))
		review = append(review, ref)
	}
	var wantReview []string
	for i := range orders {
		ref := fmt.Sprint("INV-", i)
		switch k := kind(ref); {
		case k < 90:
			require.Equal(t, 1, rows[ref], "%s paid: one ledger row", ref)
		default:
			require.Zero(t, rows[ref], "%s not paid: no ledger row", ref)
		}
		if kind(ref) >= 95 {
			wantReview = append(wantReview, ref)
		}
	}
	require.ElementsMatch(t, wantReview, review, "the unpaid orders, given up and sent to review")
	n, worst := lookups.within(perSecond, perSecond)
	require.Zero(t, worst, "the fleet's lookups exceeded the budget (%d/s, %d at once)", perSecond, perSecond)
	t.Logf("%d lookups for %d orders, at most %d in any second (budget %d/s); replica 2 killed after order %d",
		n, orders, lookups.peak(time.Second), perSecond, kill)
}

// freshDatabase creates a database of its own for the test, dropped
// afterwards, and returns its URL and a handle.
func freshDatabase(t *testing.T, dsn string) (string, *sql.DB) {
	t.Helper()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	name := fmt.Sprintf("fleet_%d", rand.Uint32())
	_, err = admin.Exec("CREATE DATABASE " + name)
	require.NoError(t, err)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.Path = "/" + name
	db, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	return u.String(), db
}

// replicaProc is one replica process.
type replicaProc struct {
	cmd  *exec.Cmd
	addr string
	dead atomic.Bool
}

func startReplica(t *testing.T, bin string, env, args []string) *replicaProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var logs syncBuffer
	cmd.Stderr = &logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica %s logged:\n%s", cmd.Args, logs.String())
		}
	})
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &replicaProc{cmd: cmd}
	t.Cleanup(p.kill)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the replica did not start")
	p.addr = "http://" + strings.TrimSpace(strings.TrimPrefix(line, "replica "))
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return p
}

// kill SIGKILLs the process: no shutdown, no deferred call.
func (p *replicaProc) kill() {
	if !p.dead.Swap(true) {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

// balancer spreads requests over the live replicas, as a load balancer
// would; a replica that refuses the connection is skipped.
type balancer struct {
	mu       sync.Mutex
	replicas []*replicaProc
	next     atomic.Int64
}

func (b *balancer) set(r []*replicaProc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.replicas = append([]*replicaProc(nil), r...)
}

func (b *balancer) pick() []*replicaProc {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := int(b.next.Add(1))
	out := make([]*replicaProc, len(b.replicas))
	for i := range b.replicas {
		out[i] = b.replicas[(n+i)%len(b.replicas)]
	}
	return out
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, p := range b.pick() {
		if p.dead.Load() {
			continue
		}
		target, _ := url.Parse(p.addr)
		failed := false
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.ErrorHandler = func(http.ResponseWriter, *http.Request, error) { failed = true }
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		if failed {
			continue
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	http.Error(w, "no replica", http.StatusBadGateway)
}

// create asks a live replica to create an order.
func (b *balancer) create(ref string, amount int64) error {
	var last error
	for _, p := range b.pick() {
		resp, err := http.PostForm(p.addr+"/orders", url.Values{"ref": {ref}, "amount": {fmt.Sprint(amount)}})
		if err != nil {
			last = err
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", resp.Status, body)
		}
		return nil
	}
	return last
}

// lookupCounter forwards to the gateway and notes when each order lookup
// came.
type lookupCounter struct {
	target string
	mu     sync.Mutex
	at     []time.Time
}

func (c *lookupCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/fpxrequest") {
		c.mu.Lock()
		c.at = append(c.at, time.Now())
		c.mu.Unlock()
	}
	target, _ := url.Parse(c.target)
	httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
}

// peak is the most lookups within any span of d.
func (c *lookupCounter) peak(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	most, j := 0, 0
	for i := range c.at {
		for j < len(c.at) && c.at[j].Sub(c.at[i]) < d {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// within returns the number of lookups and how far the busiest span
// exceeded burst + perSecond*span (0: never), allowing 100 ms for the
// replicas' clocks and the proxy's own timing.
func (c *lookupCounter) within(perSecond float64, burst int) (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	worst := 0
	for i := range c.at {
		for j := i; j < len(c.at); j++ {
			span := c.at[j].Sub(c.at[i]) + 100*time.Millisecond
			if over := (j - i + 1) - (burst + int(perSecond*span.Seconds())); over > worst {
				worst = over
			}
		}
	}
	return len(c.at), worst
}

// syncBuffer is a replica's log, written by its process's pipe.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
