package pgstore

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
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

// crashReplicaEnv carries a crashConfig to a replica process: the test
// binary re-executed to run TestCrashReplicaProcess.
const crashReplicaEnv = "PAYGATE_SQLDEDUP_CRASH_REPLICA"

// crashConfig is what a replica process needs to serve.
type crashConfig struct {
	DSN, Table, Ledger, Statuses string
	Lease                        time.Duration
}

// Bounds of the crash test.
const (
	crashOrders   = 200
	crashReplicas = 3
	crashKills    = 50
	crashLease    = 5 * time.Second  // the lease path's (status hooks): longer than crashRecover, so that a lease waited out shows
	crashDeadline = 90 * time.Second // every delivery gets its 200 by then
	// crashRecover bounds, for a plain success (the transactional path),
	// the wait from the last failed connection to any of its deliveries
	// (a replica killed or not yet restarted) to each of their 200s.
	crashRecover = 2 * time.Second
)

// crashOrder is what order n of the crash test is: its callbacks and its
// hook's fault, by n%10.
type crashOrder struct {
	statuses []string // the callbacks the gateway sends, each 3 times at once
	paid     bool
}

// crashOrders by n%10: failed or pending only (never fulfilled), pending
// then success, and success with the hook faults of crashFault.
var crashOrderKinds = map[int]crashOrder{
	0: {statuses: []string{"failed"}},
	5: {statuses: []string{"pending"}},
	7: {statuses: []string{"pending", "success"}, paid: true},
}

// crashOrderKind is order n's kind; by default a plain success.
func crashOrderKind(n int) crashOrder {
	if k, ok := crashOrderKinds[n%10]; ok {
		return k
	}
	return crashOrder{statuses: []string{"success"}, paid: true}
}

// Bounds of the crash test's hooks, by n%10 of their order.
const (
	crashPanic   = 1 // Fulfil panics after its INSERT, one call in two
	crashOutlive = 0 // OnStatus's renewals are lost; one call in two outlives its lease, ignoring its context
	crashSlow    = 3 // Fulfil runs 500 ms, duplicates meanwhile get 503
)

// Exactly once across crashes, on PostgreSQL with FulfilTx and FulfilPgx (and HookTx for
// OnStatus): three replica processes serve CallbackHandler over real HTTP
// on loopback, sharing one dedupe table; the merchant's ledger has no
// unique constraint. 200 orders' callbacks (success, failed, pending,
// pending then success) are each delivered 3 times at once and retried, as
// the gateway does, until each delivery gets 200. Meanwhile replica
// processes are SIGKILLed at random instants, 50 times, and restarted;
// each fulfilment runs on FulfilTx or FulfilPgx, at random, and panics
// after its INSERT or runs slowly, and OnStatus loses its
// renewals and outlives its lease so that another replica takes the claim
// over. Then every paid order has exactly one ledger row, every other order
// none, every status event exactly one status row, and every delivery of a
// plain success got its 200 within crashRecover of the last failed
// connection to any of its deliveries: no lease (5 s here) is waited out on
// the transactional path. A soak (testbound.SoakVar).
func TestCrashFulfilTxAcrossProcesses(t *testing.T) {
	testbound.Soak(t, "the FulfilTx, FulfilPgx and HookTx tests (a rollback, a takeover, a panic after the INSERT) and TestCrashedReplicaLeaseExpires")
	if os.Getenv(dsnVar) == "" && os.Getenv("CI") != "true" {
		t.Skipf("%s is not set: skipping the crash test; run it with %s=postgres://user@host/db?sslmode=disable go test -run TestCrashFulfilTxAcrossProcesses ./pgstore (bash .ci/run starts a server and sets it)", dsnVar, dsnVar)
	}
	dsn := testDSN(t)
	db := openDB(t, dsn)
	d, _ := testDeduperOn(t, db)
	suffix := rand.Uint32()
	cfg := crashConfig{DSN: dsn, Table: d.table, Lease: crashLease,
		Ledger: fmt.Sprintf("crash_ledger_%d", suffix), Statuses: fmt.Sprintf("crash_statuses_%d", suffix)}
	for _, ddl := range []string{
		`CREATE TABLE ` + cfg.Ledger + ` (ref_no text, order_no text)`,
		`CREATE TABLE ` + cfg.Statuses + ` (ref_no text, order_no text, status text, stale boolean)`,
	} {
		_, err := db.Exec(ddl)
		require.NoError(t, err)
	}
	t.Cleanup(func() { _, _ = db.Exec(`DROP TABLE ` + cfg.Ledger + `, ` + cfg.Statuses) })
	fleet := startFleet(t, db, cfg)

	key := crashKey(t)
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(crashDeadline)
	var wg sync.WaitGroup
	var gaveUp, refused sync.Map
	// lastFailed is, by refNo and status, the last instant a delivery of the
	// event found no replica (killed, or not yet restarted); answered, the
	// instants its deliveries got 200.
	var mu sync.Mutex
	lastFailed, answered := map[string]time.Time{}, map[string][]time.Time{}
	deliverOrder := func(n int) {
		ref, orderNo := fmt.Sprintf("C-%d", n), fmt.Sprintf("GW-%d", n)
		for _, status := range crashOrderKind(n).statuses {
			signed, err := gatewaytest.SignCallback(key, url.Values{"status": {status}, "refNo": {ref + "~cart"}, "orderNo": {orderNo},
				"amount": {"10.00"}, "fpx": {`{"fpx_debit_auth_code":"00"}`}})
			require.NoError(t, err)
			body := signed.Encode()
			for copyNo := range crashReplicas {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for attempt := 0; ; attempt++ {
						if time.Now().After(deadline) {
							gaveUp.Store(ref+" "+status, attempt)
							return
						}
						target := fleet.addr((copyNo + attempt) % crashReplicas)
						resp, err := client.Post("http://"+target+"/return", "application/x-www-form-urlencoded", strings.NewReader(body))
						if err != nil {
							mu.Lock()
							lastFailed[ref+" "+status] = time.Now()
							mu.Unlock()
						} else {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode == http.StatusOK {
								mu.Lock()
								answered[ref+" "+status] = append(answered[ref+" "+status], time.Now())
								mu.Unlock()
								return
							}
							if resp.StatusCode/100 == 4 { // final: no retry fulfils a refused callback
								refused.Store(ref+" "+status, resp.StatusCode)
								return
							}
						}
						time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond) // the gateway's ~30 s, shortened
					}
				}()
			}
		}
	}

	// Orders go out between the kills, so that every kill lands in traffic.
	launched := 0
	for kill := range crashKills {
		for ; launched < (kill+1)*crashOrders/crashKills; launched++ {
			deliverOrder(launched)
		}
		time.Sleep(time.Duration(200+rand.IntN(300)) * time.Millisecond)
		fleet.killOne(t)
	}
	wg.Wait()
	require.Equal(t, crashKills, int(fleet.kills.Load()))
	gaveUp.Range(func(k, v any) bool {
		t.Errorf("delivery of %v got no 200 in %v (%v attempts)", k, crashDeadline, v)
		return true
	})
	refused.Range(func(k, v any) bool {
		t.Errorf("delivery of %v refused with HTTP %v: a signed callback is never refused", k, v)
		return true
	})

	ledger := crashCounts(t, db, `SELECT ref_no, count(*) FROM `+cfg.Ledger+` GROUP BY ref_no`)
	statuses := crashCounts(t, db, `SELECT ref_no || ' ' || status, count(*) FROM `+cfg.Statuses+` GROUP BY 1`)
	for n := range crashOrders {
		ref, kind := fmt.Sprintf("C-%d", n), crashOrderKind(n)
		want := 0
		if kind.paid {
			want = 1
		}
		require.Equal(t, want, ledger[ref], "ledger rows of %s (paid: %v)", ref, kind.paid)
		for _, status := range kind.statuses {
			if status != "success" {
				require.Equal(t, 1, statuses[ref+" "+status], "status rows of %s %s", ref, status)
			}
		}
	}
	var recovered time.Duration // the longest wait seen, for the log
	for n := range crashOrders {
		ev := fmt.Sprintf("C-%d success", n)
		if kind := crashOrderKind(n); len(kind.statuses) != 1 || !kind.paid || lastFailed[ev].IsZero() {
			continue // a status's lease may hold it; or no kill touched it
		}
		for _, at := range answered[ev] {
			wait := at.Sub(lastFailed[ev])
			recovered = max(recovered, wait)
			require.LessOrEqual(t, wait, crashRecover, "%s answered 200 %v after its last failed connection", ev, wait)
		}
	}
	t.Logf("a plain success's deliveries got 200 at most %v after its last failed connection (bound %v)", recovered, crashRecover)
	calls, fenced := crashSequence(t, db, cfg.Ledger+"_calls"), crashSequence(t, db, cfg.Ledger+"_fenced")
	t.Logf("%d orders, %d replica processes SIGKILLed and restarted; %d hook calls, %d rolled back or killed, %d of them fenced off by a takeover",
		crashOrders, fleet.kills.Load(), calls, calls-len(ledger)-len(statuses), fenced)
	require.Positive(t, fenced, "no hook outlived its lease into a takeover: the fencing was not exercised")
	if t.Failed() {
		t.Logf("replica stderr (last %d bytes):\n%s", len(fleet.stderr.tail()), fleet.stderr.tail())
	}
}

// crashCounts reads a (text, count) query into a map.
func crashCounts(t *testing.T, db *sql.DB, query string) map[string]int {
	t.Helper()
	rows, err := db.Query(query)
	require.NoError(t, err)
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		require.NoError(t, rows.Scan(&k, &n))
		counts[k] = n
	}
	require.NoError(t, rows.Err())
	return counts
}

// crashSequence is how often the replicas advanced a sequence (sequences
// are not transactional: a rolled-back call counts).
func crashSequence(t *testing.T, db *sql.DB, seq string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM `+seq).Scan(&n))
	return n
}

// crashKey is the gateway's key in the crash test.
func crashKey(t testing.TB) paygate.Key {
	t.Helper()
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	return key
}

// fleet is the crash test's replica processes.
type fleet struct {
	cfg      crashConfig
	mu       sync.Mutex
	replicas [crashReplicas]*replicaProcess // nil while restarting
	addrs    [crashReplicas]string
	kills    atomic.Int32
	stderr   *tailBuffer
	restarts sync.WaitGroup
}

// replicaProcess is one running replica.
type replicaProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startFleet starts the replicas; they are killed when the test ends.
func startFleet(t *testing.T, db *sql.DB, cfg crashConfig) *fleet {
	t.Helper()
	f := &fleet{cfg: cfg, stderr: &tailBuffer{max: 64 << 10}}
	_, err := db.Exec(`CREATE SEQUENCE ` + cfg.Ledger + `_calls; CREATE SEQUENCE ` + cfg.Ledger + `_fenced`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec(`DROP SEQUENCE ` + cfg.Ledger + `_calls, ` + cfg.Ledger + `_fenced`) })
	for i := range crashReplicas {
		p, addr, err := f.spawn()
		require.NoError(t, err)
		f.replicas[i], f.addrs[i] = p, addr
	}
	t.Cleanup(func() {
		f.restarts.Wait()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.replicas {
			if p != nil {
				p.stdin.Close() // a replica exits when its stdin closes
				_ = p.cmd.Wait()
			}
		}
	})
	return f
}

// spawn starts a replica process and waits for the address it serves on.
func (f *fleet) spawn() (*replicaProcess, string, error) {
	cfg, err := json.Marshal(f.cfg)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashReplicaProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashReplicaEnv+"="+string(cfg))
	cmd.Stderr = f.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		if addr, ok := strings.CutPrefix(strings.TrimSpace(s), "replica serving on "); ok {
			return &replicaProcess{cmd: cmd, stdin: stdin}, addr, nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("replica process did not start: %q", s)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", errors.New("replica process did not say its address in 30 s")
	}
}

// addr is where replica i serves (its last address while it restarts).
func (f *fleet) addr(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[i]
}

// killOne SIGKILLs a running replica other than the first, chosen at
// random, and restarts it in the background. The first is never killed,
// so that a status hook that outlives its 5 s lease on it lives to meet
// the takeover's fencing; the others live about a second each.
func (f *fleet) killOne(t *testing.T) {
	for waited := 0; ; waited++ {
		require.Less(t, waited, 3000, "no replica came back up in 30 s")
		f.mu.Lock()
		var up []int
		for i, p := range f.replicas[1:] { // replica 0 lives: its hooks that outlive their lease meet the fencing
			if p != nil {
				up = append(up, i+1)
			}
		}
		if len(up) == 0 {
			f.mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			continue
		}
		i := up[rand.IntN(len(up))]
		p := f.replicas[i]
		f.replicas[i] = nil
		f.mu.Unlock()
		require.NoError(t, p.cmd.Process.Kill()) // SIGKILL: no deferred call, no rollback sent
		_ = p.cmd.Wait()
		f.kills.Add(1)
		f.restarts.Add(1)
		go func() {
			defer f.restarts.Done()
			np, addr, err := f.spawn()
			if err != nil {
				t.Errorf("restarting replica %d: %v", i, err)
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.replicas[i], f.addrs[i] = np, addr
		}()
		return
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	if len(b.b) > b.max {
		b.b = append([]byte(nil), b.b[len(b.b)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) tail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}

// A replica process of TestCrashFulfilTxAcrossProcesses: it serves
// CallbackHandler with FulfilTx on loopback until its stdin closes.
func TestCrashReplicaProcess(t *testing.T) {
	raw := os.Getenv(crashReplicaEnv)
	if raw == "" {
		t.Skip("a replica process of TestCrashFulfilTxAcrossProcesses: runs only as its child")
	}
	var cfg crashConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	db, err := sql.Open("pgx", cfg.DSN)
	require.NoError(t, err)
	db.SetMaxOpenConns(12)
	db.SetMaxIdleConns(12)
	d, err := New(db, WithTable(cfg.Table))
	require.NoError(t, err)
	nth := func(cb *paygate.Callback) int {
		var n int
		_, _ = fmt.Sscanf(cb.RefNo, "C-%d", &n)
		return n % 10
	}
	// fulfil is fn on either path: FulfilTx's and FulfilPgx's, taken at
	// random by each delivery (eitherPath), on one table.
	fulfil := func(ctx context.Context, tx pathTx, cb *paygate.Callback) error {
		if err := tx.exec(ctx, `SELECT nextval('`+cfg.Ledger+`_calls')`); err != nil {
			return err
		}
		if err := tx.exec(ctx, `INSERT INTO `+cfg.Ledger+` (ref_no, order_no) VALUES ($1, $2)`, cb.RefNo, cb.OrderNo); err != nil {
			return err
		}
		switch nth(cb) {
		case crashPanic:
			if rand.IntN(2) == 0 {
				panic("stock service returned garbage")
			}
		case crashSlow:
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(500 * time.Millisecond):
			}
		default:
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // a kill can land inside the transaction
		}
		return nil
	}
	status := func(ctx context.Context, tx *sql.Tx, cb *paygate.Callback) error {
		if _, err := tx.ExecContext(ctx, `SELECT nextval('`+cfg.Ledger+`_calls')`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO `+cfg.Statuses+` (ref_no, order_no, status, stale) VALUES ($1, $2, $3, $4)`,
			cb.RefNo, cb.OrderNo, string(cb.Status), cb.Stale)
		if nth(cb) == crashOutlive && rand.IntN(2) == 0 {
			time.Sleep(cfg.Lease * 3 / 2) // its renewals are lost: another replica takes over meanwhile
		}
		return err
	}
	// fenced counts the hooks whose claim was taken over before they
	// committed: the transactions the token fenced off.
	fenced := func(hook func(context.Context, *paygate.Callback) error) func(context.Context, *paygate.Callback) error {
		return func(ctx context.Context, cb *paygate.Callback) error {
			err := hook(ctx, cb)
			if errors.Is(err, paygate.ErrClaimLost) {
				_, _ = db.Exec(`SELECT nextval('` + cfg.Ledger + `_fenced')`)
			}
			return err
		}
	}
	h := &paygate.CallbackHandler{Keys: []paygate.Key{crashKey(t)}, Deduper: lostRenewals{d}, Lease: cfg.Lease, HookTimeout: 10 * cfg.Lease,
		Fulfil: eitherPath{wireSQL(d, fulfil), wirePgx(d, fulfil)}, OnStatus: fenced(d.HookTx(status)), Logger: slog.New(slog.DiscardHandler)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = http.Serve(ln, h) }()
	fmt.Printf("replica serving on %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// eitherPath runs each fulfilment on one of two paths, at random.
type eitherPath [2]paygate.TxFulfiller

// Fulfil implements paygate.Fulfiller.
func (e eitherPath) Fulfil(ctx context.Context, cb *paygate.Callback) error {
	return e[rand.IntN(2)].Fulfil(ctx, cb)
}

// Check implements paygate.TxFulfiller.
func (e eitherPath) Check(d paygate.Deduper) error {
	return errors.Join(e[0].Check(d), e[1].Check(d))
}

// FulfilOnce implements paygate.TxFulfiller.
func (e eitherPath) FulfilOnce(ctx context.Context, claim paygate.HookClaim, cb *paygate.Callback) (paygate.ClaimResult, error) {
	return e[rand.IntN(2)].FulfilOnce(ctx, claim, cb)
}

// lostRenewals loses the renewals of crashOutlive orders' status events
// (and of the fulfilment key each holds beside it):
// they seem to succeed and reach nobody, so the claim lapses while the hook
// runs with its context alive.
type lostRenewals struct{ *Deduper }

// Renew drops the renewal of a crashOutlive order's fulfilment.
func (l lostRenewals) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	var n int
	_, refNo, _ := strings.Cut(key, "|") // the status's key, and the fulfilment key held beside it
	if _, err := fmt.Sscanf(refNo, "C-%d", &n); err == nil && n%10 == crashOutlive {
		return nil
	}
	return l.Deduper.Renew(ctx, key, token, lease)
}
