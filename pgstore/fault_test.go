package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// hookFault is what a Fulfil does on its first call for an order.
type hookFault int

const (
	faultNone     hookFault = iota
	faultPanic              // panics before doing anything
	faultHang               // runs past the lease (within HookTimeout), ignoring its context: renewals hold the claim
	faultDeadline           // does its work just as its context expires
	faultError              // fails
	faultCount
)

// Three replicas over real HTTP, each with its own pool, share one table.
// A gateway delivers every order's success callback three times at once to
// random replicas and retries each delivery until it gets a 2xx. Hooks
// panic, hang past the lease, return at their deadline or fail on their
// first call; every other call honours its context (no effect once it is
// cancelled). Every order is fulfilled, none twice.
//
// The one exception is the limit the lease path documents (CallbackHandler,
// docs/callbacks.md "The lease path"): a claim is kept only while the
// process runs and its store answers well within the lease's safety margin
// (Lease/4). A test machine with a load average of 15 on 2 cores stalls the
// process and PostgreSQL for seconds, and then a hook that ignores its
// context, as faultHang's does, or one whose claim or completion was
// answered past the margin, can overlap a takeover. So every claim,
// renewal, completion and release is traced, and a probe records how long
// the process could not run: an order fulfilled twice fails the test unless
// its trace shows the takeover came only after a call that kept the claim
// was answered past the margin, and that call was sent no later than the
// keeper's schedule plus the process's stall at the time. Such an order
// is outside the promise, so the test asserts only what the lease path
// promises: it logs the order and its evidence, and never skips. A claim
// taken over while kept in time, a key claimed again after its
// completion, or a renewal late while the process ran fail it, loaded or
// not; on an unloaded machine no order runs twice.
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
		ignoresCtx := false
		if first {
			switch hookFault(n % int(faultCount)) {
			case faultPanic:
				panic("stock service returned garbage")
			case faultHang:
				time.Sleep(lease * 3 / 2) // past the lease, within HookTimeout, ignoring ctx: renewed
				ignoresCtx = true
			case faultDeadline:
				<-ctx.Done()
				ignoresCtx = true // its effect lands as its context ends
			case faultError:
				return fmt.Errorf("warehouse down")
			}
		}
		if err := ctx.Err(); err != nil && !ignoresCtx {
			return err // a hook that honours its context has no effect once it is cancelled
		}
		mu.Lock()
		defer mu.Unlock()
		fulfilled[cb.RefNo]++
		return nil
	}
	trace := &leaseLog{calls: map[string][]leaseCall{}}
	probe := startStallProbe()
	var replicas []string
	for range 3 {
		db := openDB(t, dsn) // its own pool, as another process would have
		warm(t, db, 20)
		d, err := New(db, WithTable(table.table))
		require.NoError(t, err)
		h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: traced{d, trace}, Lease: lease, HookTimeout: 2 * lease,
			Fulfil: paygate.FulfilFunc(fulfil), Logger: slog.New(slog.DiscardHandler)}
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
		signed, err := gatewaytest.SignCallback(key, fields)
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
	probe.end()
	for a := range answers {
		require.Equal(t, "ok", a)
	}
	require.Len(t, fulfilled, orders, "every order fulfilled")
	var starved []string
	for ref, n := range fulfilled {
		if n == 1 {
			continue
		}
		why, err := trace.starvation("fulfil|"+ref, lease, probe)
		require.NoError(t, err, "%s fulfilled %d times", ref, n)
		starved = append(starved, fmt.Sprintf("%s (fulfilled %d times): %s", ref, n, why))
	}
	if len(starved) > 0 {
		slices.Sort(starved)
		t.Logf("outside the lease path's promise: the machine could not keep a %v lease for these orders (CallbackHandler, docs/callbacks.md \"The lease path\"), each run twice only after a call that kept its claim was answered past the margin:\n%s",
			lease, strings.Join(starved, "\n"))
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

// leaseLog records, per key, what the replicas did with its claims:
// each claim acquired, each renewal, completion and release, with when it
// was sent and answered.
type leaseLog struct {
	mu    sync.Mutex
	calls map[string][]leaseCall
}

// leaseCall is one call of a replica's Deduper.
type leaseCall struct {
	op             string // claim (acquired only), renew, complete or release
	token          string
	sent, answered time.Time
	err            error
}

// traced is one replica's Deduper, recording into a leaseLog.
type traced struct {
	paygate.Deduper
	log *leaseLog
}

func (d traced) record(key string, c leaseCall) {
	c.answered = time.Now()
	d.log.mu.Lock()
	defer d.log.mu.Unlock()
	d.log.calls[key] = append(d.log.calls[key], c)
}

// Claim records an acquired claim.
func (d traced) Claim(ctx context.Context, key string, lease time.Duration) (paygate.ClaimResult, error) {
	sent := time.Now()
	c, err := d.Deduper.Claim(ctx, key, lease)
	if err == nil && c.State == paygate.ClaimAcquired {
		d.record(key, leaseCall{op: "claim", token: c.Token, sent: sent})
	}
	return c, err
}

// Renew records a renewal, whatever its answer.
func (d traced) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	sent := time.Now()
	err := d.Deduper.Renew(ctx, key, token, lease)
	d.record(key, leaseCall{op: "renew", token: token, sent: sent, err: err})
	return err
}

// Complete records a completion, whatever its answer.
func (d traced) Complete(ctx context.Context, key, token, result string) error {
	sent := time.Now()
	err := d.Deduper.Complete(ctx, key, token, result)
	d.record(key, leaseCall{op: "complete", token: token, sent: sent, err: err})
	return err
}

// Release records a release, whatever its answer.
func (d traced) Release(ctx context.Context, key, token string) error {
	sent := time.Now()
	err := d.Deduper.Release(ctx, key, token)
	d.record(key, leaseCall{op: "release", token: token, sent: sent, err: err})
	return err
}

// keeperSlack is how much later than due a call may be sent beyond the
// longest stall the probe saw over the same time: a quarter of the lease,
// the margin itself. The probe, one goroutine, does not see all of the
// waits of the keeper's (a run queue of a hundred HTTP goroutines under
// load delayed a renewal 200 ms beyond the probe's longest gap in these
// runs), and a keeper late by less than the margin still keeps the claim;
// one that stops renewing is late by a renewal period or more.
func keeperSlack(lease time.Duration) time.Duration { return lease / 4 }

// starvation explains how an event's hook came to run twice: a claim of
// key was taken over by another while its holder still worked, because a
// call that kept it (the claim itself, a renewal or the completion) was
// answered past the lease's safety margin, for a stall of the process or
// a slow store. It returns an error, with the key's trace, when nothing
// explains it: a key claimed again after its completion or without any
// takeover, a claim taken over while its calls kept it within the margin
// (a takeover not fenced), or a renewal sent late, or never, while the
// process was running (the keeper's fault).
func (l *leaseLog) starvation(key string, lease time.Duration, p *stallProbe) (string, error) {
	l.mu.Lock()
	calls := slices.Clone(l.calls[key])
	l.mu.Unlock()
	slices.SortFunc(calls, func(a, b leaseCall) int { return a.sent.Compare(b.sent) })
	var whys []string
	for i, c := range calls {
		if c.op != "claim" {
			continue
		}
		next := slices.IndexFunc(calls[i+1:], func(n leaseCall) bool { return n.op == "claim" })
		if next < 0 {
			break
		}
		took := calls[i+1+next]
		ended := slices.IndexFunc(calls, func(e leaseCall) bool {
			return e.token == c.token && (e.op == "complete" || e.op == "release") && e.err == nil && e.answered.Before(took.answered)
		})
		switch {
		case ended >= 0 && calls[ended].op == "complete":
			return "", fmt.Errorf("%s claimed again after its completion: %s", key, describe(calls, calls[0]))
		case ended >= 0:
			continue // released after a failed hook: the next claim is no takeover
		}
		why, err := kept(calls, c, took, lease, p)
		if err != nil {
			return "", fmt.Errorf("%s: %w: %s", key, err, describe(calls, calls[0]))
		}
		whys = append(whys, why)
	}
	if len(whys) == 0 {
		return "", fmt.Errorf("%s ran twice, but no claim of it was taken over: %s", key, describe(calls, calls[0]))
	}
	return strings.Join(whys, "; ") + ": " + describe(calls, calls[0]), nil
}

// kept finds the first call of claim c (its own answer, a renewal, the
// completion) not answered within lease-margin of the last one that was,
// before took, another's claim, was answered, and judges it (lateBy). It
// is an error when every call of c was answered in time and took still
// came within the lease.
func kept(calls []leaseCall, c, took leaseCall, lease time.Duration, p *stallProbe) (string, error) {
	margin := lease / 4
	last := leaseCall{sent: c.sent, answered: c.sent}
	for _, k := range calls {
		if k.token != c.token || !k.sent.Before(took.answered) {
			continue
		}
		if k.err == nil && k.answered.Sub(last.sent) <= lease-margin {
			last = k
			continue
		}
		return lateBy(last, k, lease, p)
	}
	if took.answered.Sub(last.sent) < lease {
		return "", fmt.Errorf("taken over %v after its last %s was sent, within its lease of %v", took.answered.Sub(last.sent), last.op, lease)
	}
	return lateBy(last, leaseCall{op: "takeover (no renewal before it)", sent: took.answered, answered: took.answered}, lease, p)
}

// lateBy judges next, the first call of a claim after last not answered
// within the margin: starvation when it was sent late by no more than the
// probe's longest stall between last's answer and next's sending (plus
// keeperSlack), or on time and answered late by the store.
func lateBy(last, next leaseCall, lease time.Duration, p *stallProbe) (string, error) {
	every := lease / 3
	late := next.sent.Sub(last.answered) - every
	stall := p.worst(last.answered, next.sent)
	if late > stall+keeperSlack(lease) {
		return "", fmt.Errorf("the %s after the last call answered in time came %v later than one renewal period (%v), while the process stalled %v at most: the keeper was late, not the machine",
			next.op, late.Round(time.Millisecond), every, stall.Round(time.Millisecond))
	}
	if next.op == "claim" {
		return fmt.Sprintf("the claim was answered %v after it was sent", next.answered.Sub(next.sent).Round(time.Millisecond)), nil
	}
	return fmt.Sprintf("a %s sent %v after the last call answered in time (process stalled up to %v) was answered %v after sending",
		next.op, next.sent.Sub(last.answered).Round(time.Millisecond), stall.Round(time.Millisecond), next.answered.Sub(next.sent).Round(time.Millisecond)), nil
}

// describe is the trace of a key, as offsets from the first call's
// sending, with tokens numbered in order of appearance.
func describe(calls []leaseCall, first leaseCall) string {
	var b strings.Builder
	tokens := map[string]int{}
	for _, c := range calls {
		if _, ok := tokens[c.token]; !ok {
			tokens[c.token] = len(tokens) + 1
		}
		fmt.Fprintf(&b, "[#%d %s sent %v answered %v", tokens[c.token], c.op, c.sent.Sub(first.sent).Round(time.Millisecond), c.answered.Sub(first.sent).Round(time.Millisecond))
		if c.err != nil {
			fmt.Fprintf(&b, ": %v", c.err)
		}
		b.WriteString("] ")
	}
	return strings.TrimSpace(b.String())
}

// stallProbe ticks every few milliseconds and records when, so that a
// stall of the whole process (CPU starvation, a GC pause, a long run
// queue) shows as a gap between two ticks.
type stallProbe struct {
	mu    sync.Mutex
	ticks []time.Time
	stop  chan struct{}
	done  chan struct{}
}

func startStallProbe() *stallProbe {
	p := &stallProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			p.mu.Lock()
			p.ticks = append(p.ticks, time.Now())
			p.mu.Unlock()
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// end stops the probe.
func (p *stallProbe) end() {
	close(p.stop)
	<-p.done
}

// worst is the longest gap between two ticks that overlaps [from, to].
func (p *stallProbe) worst(from, to time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var w time.Duration
	for i := 1; i < len(p.ticks); i++ {
		if p.ticks[i].After(from) && p.ticks[i-1].Before(to) {
			w = max(w, p.ticks[i].Sub(p.ticks[i-1]))
		}
	}
	return w
}
