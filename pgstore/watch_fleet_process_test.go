package pgstore

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/internal/testbound"
	"github.com/paygate-go/paygate/watch"
)

// watchReplicaEnv carries a watch replica process's configuration.
const watchReplicaEnv = "PAYGATE_WATCH_REPLICA"

// watchReplicaConfig is what a replica process of TestWatchFleetProcesses
// runs on.
type watchReplicaConfig struct {
	DSN, Dedupe, Watch, Ledger string
	Gateway                    string // the lookups' proxy to the sandbox
	Agency, APIKey, AuthToken  string
	Replica                    int
	Budget                     watch.Budget
	Schedule                   time.Duration
}

// The fleet of issue 43 as processes: three replicas (handler with
// FulfilTx, and watch on the Deduper's WatchStore as its Settler), 30 %
// of callbacks lost, 30 % of lookups answered 503, two replicas SIGKILLed
// while a lookup of theirs is in flight, and restarted. Every paid order
// is fulfilled once and nothing failed is; the requests at the gateway,
// retries counted, stay within the budget in every span; an order whose
// callback was delivered before its first lookup was due is never looked
// up; each order a killed replica was looking up is looked up again within
// 60 s. A soak (testbound.SoakVar).
func TestWatchFleetProcesses(t *testing.T) {
	testbound.Soak(t, "TestWatchHoldIsRenewedWhileTheLookupRuns")
	ctx := context.Background()
	db := openDB(t, testDSN(t))
	d, _ := testDeduperOn(t, db)
	ws := fmt.Sprintf("paygate_watch_fleet_%d", rand.Uint32())
	store, err := d.WatchStore(ws)
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx))
	t.Cleanup(func() { dropWatchTables(db, ws) })
	ledger := ws + "_ledger"
	_, err = db.Exec(`CREATE TABLE ` + ledger + ` (ref text NOT NULL)`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec(`DROP TABLE IF EXISTS ` + ledger) })

	const orders, schedule = 150, 3 * time.Second
	budget := watch.Budget{PerSecond: 4, Burst: 4}
	lost := func(ref string) bool { var i int; _, _ = fmt.Sscanf(ref, "W-%d", &i); return i%10 < 3 }
	sb := gatewaytest.NewServer(gatewaytest.WithCallbackLoss(lost), gatewaytest.WithRetryInterval(500*time.Millisecond),
		gatewaytest.WithMaxAttempts(40), gatewaytest.WithLookupFailures(func(string) bool { return rand.IntN(10) < 3 }))
	t.Cleanup(sb.Close)

	// The gateway as the replicas reach it for lookups: 300 ms slower than
	// the sandbox, and watched: when each request came, from which replica,
	// for which order, and which are in flight.
	gw := &gatewayProxy{inFlight: map[int]map[string]bool{}}
	target, err := url.Parse(sb.URL)
	require.NoError(t, err)
	gw.proxy = httputil.NewSingleHostReverseProxy(target)
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)

	f := &processFleet{t: t, cfg: watchReplicaConfig{DSN: testDSN(t), Dedupe: d.table, Watch: ws, Ledger: ledger, Gateway: gwSrv.URL,
		Agency: sb.Agency, APIKey: sb.APIKey, AuthToken: sb.AuthToken, Budget: budget, Schedule: schedule}}
	for i := range 3 {
		f.start(i)
	}
	t.Cleanup(f.stopAll)
	lb := httptest.NewServer(f)
	t.Cleanup(lb.Close)

	client, err := sb.Client()
	require.NoError(t, err)
	w := &watch.Watch{Handler: &paygate.CallbackHandler{}, Client: client, Store: store, Schedule: []time.Duration{schedule}}
	created := map[string]time.Time{}
	killed := map[string]time.Time{} // orders a killed replica was looking up, when it was killed
	for i := range orders {
		ref := fmt.Sprint("W-", i)
		created[ref] = time.Now()
		_, err := w.CreateOrder(ctx, paygate.Order{RefNo: ref, Amount: 1000, Email: "a@example.com", ReturnURL: lb.URL})
		require.NoError(t, err)
		status := paygate.StatusSuccess
		if i%10 == 9 {
			status = paygate.StatusFailed
		}
		require.NoError(t, sb.Pay(ref, status))
		if i == 50 || i == 100 {
			for ref, at := range f.killWhileLookingUp(gw, 1+i/100) {
				killed[ref] = at
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Eventually(t, func() bool { left, err := store.List(ctx, 1); return err == nil && len(left) == 0 }, 150*time.Second, 200*time.Millisecond,
		"every order settled and left the watch")

	fulfilled := map[string]int{}
	rows, err := db.Query(`SELECT ref FROM ` + ledger)
	require.NoError(t, err)
	for rows.Next() {
		var ref string
		require.NoError(t, rows.Scan(&ref))
		fulfilled[ref]++
	}
	require.NoError(t, rows.Err())
	for i := range orders {
		ref, want := fmt.Sprint("W-", i), 1
		if i%10 == 9 {
			want = 0
		}
		require.Equal(t, want, fulfilled[ref], ref)
	}

	gw.mu.Lock()
	requests := gw.requests
	gw.mu.Unlock()
	for i := range requests {
		for j := i; j < len(requests); j++ {
			span := requests[j].at.Sub(requests[i].at).Seconds() + 0.1 // the spend comes a moment before the request
			require.LessOrEqual(t, float64(j-i+1), float64(budget.Burst)+budget.PerSecond*span, "requests %d to %d at the gateway", i, j)
		}
	}
	lookedUp := map[string][]time.Time{}
	for _, r := range requests {
		lookedUp[r.ref] = append(lookedUp[r.ref], r.at)
	}
	early := 0
	for _, dl := range sb.Callbacks() {
		for _, a := range dl.Attempts {
			if a.StatusCode == http.StatusOK && a.At.Before(created[dl.RefNo].Add(schedule)) {
				early++
				require.Empty(t, lookedUp[dl.RefNo], "%s: its callback came before its first lookup was due", dl.RefNo)
				break
			}
		}
	}
	require.Positive(t, early)
	require.NotEmpty(t, killed, "a replica was killed while looking an order up")
	for ref, at := range killed {
		again := false
		for _, l := range lookedUp[ref] {
			again = again || l.After(at) && l.Before(at.Add(60*time.Second))
		}
		require.True(t, again, "%s, held by a replica killed at %v, looked up again within 60 s", ref, at)
	}
	t.Logf("%d orders, %d requests at the gateway (retries included) over %v; %d callbacks delivered before the first lookup, none looked up; orders of killed replicas: %v",
		orders, len(requests), requests[len(requests)-1].at.Sub(requests[0].at).Round(time.Second), early, killed)
}

// gatewayProxy is the gateway the replicas look orders up at: the
// sandbox, 300 ms later, with a record of each request.
type gatewayProxy struct {
	proxy    *httputil.ReverseProxy
	mu       sync.Mutex
	requests []gatewayRequest
	inFlight map[int]map[string]bool // replica: orders it is looking up
}

type gatewayRequest struct {
	at      time.Time
	ref     string
	replica int
}

func (g *gatewayProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("fpx_seller_order_no") + r.URL.Query().Get("refno")
	var replica int
	_, _ = fmt.Sscan(r.Header.Get("X-Replica"), &replica)
	g.mu.Lock()
	g.requests = append(g.requests, gatewayRequest{at: time.Now(), ref: ref, replica: replica})
	if g.inFlight[replica] == nil {
		g.inFlight[replica] = map[string]bool{}
	}
	g.inFlight[replica][ref] = true
	g.mu.Unlock()
	defer func() { g.mu.Lock(); delete(g.inFlight[replica], ref); g.mu.Unlock() }()
	select {
	case <-r.Context().Done():
		return
	case <-time.After(300 * time.Millisecond):
	}
	g.proxy.ServeHTTP(w, r)
}

// processFleet runs the replica processes and spreads callbacks over the
// live ones, as a load balancer would.
type processFleet struct {
	t    *testing.T
	cfg  watchReplicaConfig
	mu   sync.Mutex
	cmds [3]*exec.Cmd
	ins  [3]io.Closer
	urls [3]*url.URL
	next int
}

func (f *processFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	var target *url.URL
	for range 3 {
		f.next = (f.next + 1) % 3
		if f.urls[f.next] != nil {
			target = f.urls[f.next]
			break
		}
	}
	f.mu.Unlock()
	if target == nil {
		http.Error(w, "no replica", http.StatusBadGateway)
		return
	}
	httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
}

// start starts replica i and waits for its address.
func (f *processFleet) start(i int) {
	t := f.t
	cfg := f.cfg
	cfg.Replica = i
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchFleetReplicaProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), watchReplicaEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "replica serving on ")
	require.True(t, ok, "replica %d: %q", i, line)
	u, err := url.Parse("http://" + addr)
	require.NoError(t, err)
	f.mu.Lock()
	f.cmds[i], f.ins[i], f.urls[i] = cmd, stdin, u
	f.mu.Unlock()
}

// killWhileLookingUp SIGKILLs replica i once it has a lookup in flight,
// restarts it, and returns the orders it was looking up.
func (f *processFleet) killWhileLookingUp(gw *gatewayProxy, i int) map[string]time.Time {
	held := map[string]time.Time{}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && len(held) == 0; time.Sleep(5 * time.Millisecond) {
		gw.mu.Lock()
		if len(gw.inFlight[i]) > 0 {
			f.mu.Lock()
			require.NoError(f.t, f.cmds[i].Process.Kill()) // SIGKILL: its hold stays until it lapses
			f.urls[i] = nil
			f.mu.Unlock()
			for ref := range gw.inFlight[i] {
				held[ref] = time.Now()
			}
		}
		gw.mu.Unlock()
	}
	f.mu.Lock()
	cmd := f.cmds[i]
	f.mu.Unlock()
	if len(held) > 0 {
		_ = cmd.Wait()
		f.start(i)
	}
	return held
}

func (f *processFleet) stopAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, cmd := range f.cmds {
		if cmd != nil {
			f.ins[i].Close() // a replica exits when its stdin closes
			_ = cmd.Wait()
		}
	}
}

// replicaTransport marks each request with its replica.
type replicaTransport struct{ replica int }

func (r replicaTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Replica", fmt.Sprint(r.replica))
	return http.DefaultTransport.RoundTrip(req)
}

// A replica process of TestWatchFleetProcesses: a CallbackHandler with
// FulfilTx and a watch as its Settler, on loopback, until stdin closes.
func TestWatchFleetReplicaProcess(t *testing.T) {
	raw := os.Getenv(watchReplicaEnv)
	if raw == "" {
		t.Skip("a replica process of TestWatchFleetProcesses: runs only as its child")
	}
	var cfg watchReplicaConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	db, err := sql.Open("pgx", cfg.DSN)
	require.NoError(t, err)
	d, err := New(db, WithTable(cfg.Dedupe))
	require.NoError(t, err)
	store, err := d.WatchStore(cfg.Watch)
	require.NoError(t, err)
	key, err := paygate.ParseKey(cfg.APIKey)
	require.NoError(t, err)
	client, err := paygate.NewClient(paygate.WithAgency(cfg.Agency), paygate.WithKey(key), paygate.WithAuthToken(cfg.AuthToken),
		paygate.WithCheckoutURL(cfg.Gateway), paygate.WithReportsURL(cfg.Gateway),
		paygate.WithHTTPClient(&http.Client{Transport: replicaTransport{cfg.Replica}}),
		paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 4, BaseDelay: 50 * time.Millisecond, MaxDelay: 200 * time.Millisecond}))
	require.NoError(t, err)
	quiet := slog.New(slog.DiscardHandler)
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Logger: quiet, ReconcileInterval: -1,
		Fulfil: d.FulfilTx(func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO `+cfg.Ledger+` (ref) VALUES ($1)`, cb.RefNo)
			return err
		})}
	w := &watch.Watch{Handler: h, Client: client, Store: store, Budget: cfg.Budget, Schedule: []time.Duration{cfg.Schedule},
		Poll: 100 * time.Millisecond, Logger: quiet}
	h.Settler = w
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = w.Run(ctx) }()
	fmt.Printf("replica serving on %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	_ = srv.Close()
}
