package outbox

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/internal/pgtest"
	"github.com/paygate-go/paygate/internal/testbound"
	"github.com/paygate-go/paygate/zakat"
)

// soakRelayEnv carries a relay process's configuration (JSON) from the
// soak to its child.
const soakRelayEnv = "PAYGATE_OUTBOX_SOAK_RELAY"

// soakConfig is what a relay process needs.
type soakConfig struct {
	DSN, Table, URL, Password string
}

// The soak's shape.
const (
	soakRelays       = 3
	soakKillsByPhase = 26 // two phases (409, 422): 52 kills in all
	soakTxsByPhase   = 1500
	soakRefuseEvery  = 50 // one transaction in 50 breaks the server-side rule,
	soakRefuseAt     = 7  // the 8th of each 50
)

// Three relay processes, each SIGKILLed at random instants (52 kills in
// all), relay what the bank enqueues while the sandbox drops answers after
// storing, answers repeats with 409 (first phase) or 422 (second),
// refuses one transaction in 50 for a rule only it knows, and the bank's
// PostgreSQL restarts once (-m immediate). Then: every transaction the
// service accepts is stored exactly once with the content enqueued and
// done; every refused one is dead with the service's reason; nothing else
// is dead; nothing is left queued. The refusals point at the
// transaction (B2's JSON pointers); one that points at none is split by
// the sender, TestRelayIsolatesTheRefused. A refusal that names nothing,
// of a transaction whose earlier attempt was lost, stays unconfirmed
// (docs/assumptions.md A-webhook-refusals), so it would be dead only at
// the maximum age. A soak (testbound.SoakVar).
func TestRelaySoak(t *testing.T) {
	testbound.Soak(t, "TestRelayKilledMidSend, TestRelayRecordsOutcomes, TestRelayResendAfterLostAnswer")
	pg := pgtest.Start(t)
	db := openDB(t, pgtest.DSN(pg.Addr))
	restarted := false
	for phase, dups := range []gatewaytest.DuplicateAnswer{gatewaytest.DuplicateConflict, gatewaytest.DuplicateUnprocessable} {
		refused := map[string]bool{} // read only once the sandbox runs
		for i := soakRefuseAt; i < soakTxsByPhase; i += soakRefuseEvery {
			refused[validTx(fmt.Sprintf("P%d", phase), i).OrderNo] = true
		}
		srv := sandbox(t, gatewaytest.WithWebhookRefusal(gatewaytest.WebhookRefusal{
			Refuse: func(tx zakat.Transaction) bool { return refused[tx.OrderNo] },
		}),
			gatewaytest.WithWebhookFaults(gatewaytest.WebhookFaults{Latency: 25 * time.Millisecond, DropAfterStore: 0.15, DropBeforeStore: 0.05, Error500: 0.05}),
			gatewaytest.WithWebhookDuplicates(dups))
		sender, err := paygate.NewWebhookSender(srv.WebhookURL(), srv.WebhookPassword) // the document's codes: BANK passes here
		require.NoError(t, err)
		table := testTable(t, db)
		o, err := New(db, sender, WithTable(table))
		require.NoError(t, err)
		require.NoError(t, o.Migrate(context.Background()))

		fleet := startRelays(t, soakConfig{DSN: pgtest.DSN(pg.Addr), Table: table, URL: srv.WebhookURL(), Password: srv.WebhookPassword})
		var want []zakat.Transaction
		done := make(chan struct{})
		go func() { // the bank: batches of 1 to 40 in its own transactions, retried through the restart
			defer close(done)
			for start := 0; start < soakTxsByPhase; {
				n := min(1+rand.IntN(40), soakTxsByPhase-start)
				batch := make([]zakat.Transaction, n)
				for i := range batch {
					batch[i] = validTx(fmt.Sprintf("P%d", phase), start+i)
				}
				if err := enqueueCommitted(db, o, batch); err != nil {
					time.Sleep(50 * time.Millisecond) // the restart: the same content again is one transaction
					continue
				}
				want = append(want, batch...)
				start += n
				time.Sleep(time.Duration(rand.IntN(160)) * time.Millisecond) // spread over the kills
			}
		}()
		for k := range soakKillsByPhase {
			time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
			fleet.killOne(t)
			if phase == 0 && k == soakKillsByPhase/2 {
				pg.RestartImmediate(t)
				restarted = true
			}
		}
		<-done
		waitDrained(t, o, 90*time.Second, fleet)
		fleet.stop()
		checkSoak(t, o, srv, want, refused)
	}
	require.True(t, restarted)
}

// enqueueCommitted enqueues batch in a transaction of its own.
func enqueueCommitted(db *sql.DB, o *Outbox, batch []zakat.Transaction) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := o.Enqueue(ctx, tx, batch...); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// waitDrained waits until nothing is queued.
func waitDrained(t *testing.T, o *Outbox, limit time.Duration, f *relayFleet) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s, err := o.Stats(context.Background())
		if err == nil && s.Depth == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still queued after %v: %+v, %v; relays' stderr:\n%s", limit, s, err, f.stderr.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSoak checks the end state: the accepted stored once each, with
// their content, and done; the refused dead with the service's reason;
// nothing else.
func checkSoak(t *testing.T, o *Outbox, srv *gatewaytest.Server, want []zakat.Transaction, refusedNos map[string]bool) {
	t.Helper()
	stored := storedNos(srv)
	st := states(t, o)
	dead, err := o.Dead(context.Background(), 0)
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, d := range dead {
		reasons[d.OrderNo] = d.Reason
	}
	refused := 0
	for _, tx := range want {
		if refusedNos[tx.OrderNo] {
			refused++
			require.Equal(t, stateDead, st[tx.OrderNo], tx.OrderNo)
			require.Contains(t, reasons[tx.OrderNo], "refused", tx.OrderNo)
			require.NotContains(t, stored, tx.OrderNo)
			continue
		}
		require.Equal(t, stateDone, st[tx.OrderNo], "%s: %s", tx.OrderNo, reasons[tx.OrderNo])
		got, ok := stored[tx.OrderNo]
		require.True(t, ok, "%s lost", tx.OrderNo)
		require.True(t, got.Time.Equal(tx.Time))
		got.Time = tx.Time
		require.Equal(t, tx, got)
	}
	require.Len(t, st, len(want), "one row per transaction")
	require.Len(t, stored, len(want)-refused, "nothing stored but what was enqueued")
	require.Len(t, dead, refused, "nothing else dead")
	t.Logf("%d transactions, %d refused; the sandbox received %d in %d requests", len(want), refused, srv.WebhookReceived(), srv.WebhookRequests())
}

// TestRelayProcess is a relay process of TestRelaySoak: it runs the relay
// until it is killed.
func TestRelayProcess(t *testing.T) {
	raw := os.Getenv(soakRelayEnv)
	if raw == "" {
		t.Skip("a relay process of TestRelaySoak: runs only as its child")
	}
	var cfg soakConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	db, err := sql.Open("pgx", cfg.DSN)
	require.NoError(t, err)
	sender, err := paygate.NewWebhookSender(cfg.URL, cfg.Password, paygate.WithBatchSize(10),
		paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}))
	require.NoError(t, err)
	o, err := New(db, sender, WithTable(cfg.Table), WithBatchSize(30), WithLease(time.Second),
		WithBackoff(20*time.Millisecond, 200*time.Millisecond), WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	fmt.Println("relay running")
	_ = o.Run(context.Background())
}

// relayFleet is the soak's relay processes.
type relayFleet struct {
	cfg    soakConfig
	mu     sync.Mutex
	procs  [soakRelays]*exec.Cmd
	stderr *tailBuffer
}

// startRelays starts the relay processes, stopped when the test ends.
func startRelays(t *testing.T, cfg soakConfig) *relayFleet {
	f := &relayFleet{cfg: cfg, stderr: &tailBuffer{max: 64 << 10}}
	for i := range f.procs {
		f.procs[i] = f.spawn(t)
	}
	t.Cleanup(f.stop)
	return f
}

// spawn starts one relay process; it dies with the test.
func (f *relayFleet) spawn(t *testing.T) *exec.Cmd {
	raw, err := json.Marshal(f.cfg)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRelayProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), soakRelayEnv+"="+string(raw))
	cmd.Stderr = f.stderr
	cmd.Stdout = f.stderr
	cmd.SysProcAttr = dieWithTest()
	require.NoError(t, cmd.Start())
	return cmd
}

// killOne SIGKILLs a random relay and starts another in its place.
func (f *relayFleet) killOne(t *testing.T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := rand.IntN(len(f.procs))
	require.NoError(t, f.procs[i].Process.Kill()) // SIGKILL
	_ = f.procs[i].Wait()
	f.procs[i] = f.spawn(t)
}

// stop kills every relay (idempotent).
func (f *relayFleet) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.procs {
		if p != nil {
			_ = p.Process.Kill()
			_ = p.Wait()
			f.procs[i] = nil
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) tail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
