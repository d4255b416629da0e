package dedupetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// checks are the contract's checks, in the order they run.
var checks = []struct {
	name string
	fn   func(*testing.T, paygate.Deduper)
}{
	{name: "Lifecycle", fn: lifecycle},
	{name: "LapsedLease", fn: lapsedLease},
	{name: "RenewExtends", fn: renewExtends},
	{name: "ConcurrentClaims", fn: concurrentClaims},
	{name: "SlowHookRenewed", fn: slowHookRenewed},
	{name: "UnrenewedHookNeverOverlaps", fn: unrenewedHookNeverOverlaps},
	{name: "RetentionReported", fn: retentionReported},
}

// retentionReported: a Deduper says how long it keeps a completed key
// (paygate.RetentionReporter), so that a CallbackHandler can refuse a
// replay bound its retention cannot cover; the retention is at least
// paygate.DefaultRetention unless the Deduper was told otherwise.
func retentionReported(t *testing.T, d paygate.Deduper) {
	r, ok := d.(paygate.RetentionReporter)
	if !ok {
		t.Fatalf("%T does not implement paygate.RetentionReporter: a CallbackHandler cannot check its MaxTxnAge against it", d)
	}
	if kept := r.CompletedRetention(); kept <= 0 {
		t.Fatalf("CompletedRetention() = %v: a completed key is kept for no time", kept)
	}
}

// Run runs every check, each on a fresh Deduper from newDeduper, in real
// time: its leases lapse and renew on the wall clock.
func Run(t *testing.T, newDeduper func(t *testing.T) paygate.Deduper) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newDeduper(t)) })
	}
}

// RunInBubble runs every check as Run does, each inside a testing/synctest
// bubble, with newDeduper called in it: the leases lapse and renew on the
// bubble's fake clock, at once and exactly. It is for a Deduper that keeps
// time with the time package and waits on nothing outside the process
// (MemoryDeduper); one over a network keeps to Run.
func RunInBubble(t *testing.T, newDeduper func(t *testing.T) paygate.Deduper) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				synctest.Test(t, func(t *testing.T) { c.fn(t, newDeduper(t)) })
			}()
			select {
			case <-done:
			case <-time.After(bubbleBound): // a bound, not a measure
				t.Fatalf("the synctest bubble did not end within %v: a goroutine is stuck outside its clock (a mutex kept, or a wait outside the process)", bubbleBound)
			}
		})
	}
}

// bubbleBound is how long, in real time, a check may take in a bubble:
// its work takes milliseconds; a goroutine blocked on a mutex is not
// durably blocked, so a bubble whose other goroutines wait on its clock
// would stand still forever.
const bubbleBound = 10 * time.Second

// claim claims key and fails the test on an error or an unexpected state.
func claim(t *testing.T, d paygate.Deduper, key string, lease time.Duration, want paygate.ClaimState) paygate.ClaimResult {
	t.Helper()
	c, err := d.Claim(context.Background(), key, lease)
	if err != nil {
		t.Fatalf("Claim(%q): %v", key, err)
	}
	if c.State != want {
		t.Fatalf("Claim(%q) = %v, want %v", key, c.State, want)
	}
	if (c.State == paygate.ClaimAcquired) != (c.Token != "") {
		t.Fatalf("Claim(%q) = %v with token %q: a token comes with acquired claims only", key, c.State, c.Token)
	}
	return c
}

// lost fails the test unless err is ErrClaimLost.
func lost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, paygate.ErrClaimLost) {
		t.Fatalf("%s = %v, want ErrClaimLost", what, err)
	}
}

// ok fails the test on an error.
func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func lifecycle(t *testing.T, d paygate.Deduper) {
	ctx := context.Background()
	c := claim(t, d, "fulfil|A", time.Minute, paygate.ClaimAcquired)
	claim(t, d, "fulfil|A", time.Minute, paygate.ClaimBusy)
	lost(t, "Complete with another token", d.Complete(ctx, "fulfil|A", "other", "GW1"))
	lost(t, "Renew with another token", d.Renew(ctx, "fulfil|A", "other", time.Minute))
	lost(t, "Release with another token", d.Release(ctx, "fulfil|A", "other"))
	claim(t, d, "fulfil|A", time.Minute, paygate.ClaimBusy) // still held
	ok(t, "Release", d.Release(ctx, "fulfil|A", c.Token))
	lost(t, "Release twice", d.Release(ctx, "fulfil|A", c.Token))

	c = claim(t, d, "fulfil|A", time.Minute, paygate.ClaimAcquired)
	ok(t, "Renew", d.Renew(ctx, "fulfil|A", c.Token, time.Minute))
	ok(t, "Complete", d.Complete(ctx, "fulfil|A", c.Token, "GW1"))
	lost(t, "Complete twice", d.Complete(ctx, "fulfil|A", c.Token, "GW2"))
	lost(t, "Release after Complete", d.Release(ctx, "fulfil|A", c.Token))
	lost(t, "Renew after Complete", d.Renew(ctx, "fulfil|A", c.Token, time.Minute))
	if got := claim(t, d, "fulfil|A", time.Minute, paygate.ClaimDone); got.Result != "GW1" {
		t.Fatalf("a completed claim's result = %q, want GW1", got.Result)
	}
	claim(t, d, "fulfil|B", time.Minute, paygate.ClaimAcquired) // keys are independent
}

// A lapsed lease can be taken over, and the old token is then worthless.
func lapsedLease(t *testing.T, d paygate.Deduper) {
	ctx := context.Background()
	old := claim(t, d, "k", 50*time.Millisecond, paygate.ClaimAcquired)
	time.Sleep(150 * time.Millisecond)
	c := claim(t, d, "k", time.Minute, paygate.ClaimAcquired)
	if c.Token == old.Token {
		t.Fatal("a claim taken over reused the lapsed claim's token")
	}
	lost(t, "Renew with the lapsed token", d.Renew(ctx, "k", old.Token, time.Minute))
	lost(t, "Complete with the lapsed token", d.Complete(ctx, "k", old.Token, "x"))
	lost(t, "Release with the lapsed token", d.Release(ctx, "k", old.Token))
	ok(t, "Complete", d.Complete(ctx, "k", c.Token, "y"))
}

// Renew keeps a claim past its first lease.
func renewExtends(t *testing.T, d paygate.Deduper) {
	ctx := context.Background()
	// Wide margins (300 ms and more) so that a loaded machine cannot blur them.
	c := claim(t, d, "k", time.Second, paygate.ClaimAcquired)
	time.Sleep(600 * time.Millisecond)
	ok(t, "Renew", d.Renew(ctx, "k", c.Token, time.Second))
	time.Sleep(700 * time.Millisecond) // past the first lease, well within the renewed one
	claim(t, d, "k", time.Minute, paygate.ClaimBusy)
	ok(t, "Complete", d.Complete(ctx, "k", c.Token, ""))
	claim(t, d, "k", time.Minute, paygate.ClaimDone)
}

// Of many concurrent claims of one key, exactly one is acquired.
func concurrentClaims(t *testing.T, d paygate.Deduper) {
	const n = 50
	var wg sync.WaitGroup
	states := make([]paygate.ClaimState, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := d.Claim(context.Background(), "race", time.Minute)
			states[i], errs[i] = c.State, err
		}()
	}
	close(start)
	wg.Wait()
	acquired := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent Claim: %v", errs[i])
		}
		switch states[i] {
		case paygate.ClaimAcquired:
			acquired++
		case paygate.ClaimBusy:
		default:
			t.Fatalf("concurrent Claim = %v, want acquired or busy", states[i])
		}
	}
	if acquired != 1 {
		t.Fatalf("%d of %d concurrent claims acquired the key, want 1", acquired, n)
	}
}

// A CallbackHandler on the deduper, 20 orders, a 1 s lease and a Fulfil
// that takes 1.5 s, with duplicate deliveries every 100 ms while it runs:
// the renewed claim keeps every duplicate out, so each order is fulfilled
// once (without renewal the lease lapses mid-hook and a duplicate runs
// Fulfil again).
func slowHookRenewed(t *testing.T, d paygate.Deduper) {
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	fulfilled := map[string]int{}
	h := &paygate.CallbackHandler{
		Keys: []paygate.Key{key}, Deduper: d, Lease: time.Second, Logger: slog.New(slog.NewTextHandler(tlog{t}, nil)),
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			time.Sleep(1500 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			fulfilled[cb.RefNo]++
			return nil
		}),
	}
	const orders, deliveries = 20, 20
	var wg sync.WaitGroup
	for i := range orders {
		fields := url.Values{"status": {"success"}, "refNo": {fmt.Sprintf("SLOW-%d", i)}, "orderNo": {fmt.Sprintf("GW-%d", i)}}
		for j := range deliveries {
			r, err := gatewaytest.NewCallbackRequest(key, "/return", fields)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(j) * 100 * time.Millisecond)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK && w.Code != http.StatusServiceUnavailable {
					t.Errorf("delivery answered %d: %s", w.Code, w.Body)
				}
			}()
		}
	}
	wg.Wait()
	if len(fulfilled) != orders {
		t.Fatalf("%d of %d orders fulfilled", len(fulfilled), orders)
	}
	for ref, n := range fulfilled {
		if n != 1 {
			t.Errorf("%s fulfilled %d times, want once", ref, n)
		}
	}
}

// renewalLost is a Deduper whose renewals fail as if the store were out of
// reach of the replica holding the claim, while other deliveries still
// reach it.
type renewalLost struct{ paygate.Deduper }

func (renewalLost) Renew(context.Context, string, string, time.Duration) error {
	return errors.New("dedupetest: store out of reach")
}

// unrenewedHookNeverOverlaps: when a claim cannot be renewed, the hook's
// context is cancelled a safety margin before the lease could lapse, so a
// hook that stops on cancellation has ended before the next delivery can
// claim the event. 20 orders, a 1 s lease; each first hook runs until
// cancelled and stops at once, a second delivery tries every 2 ms until it
// gets the claim. The lease's 250 ms margin is wide enough that a loaded
// machine's scheduling delay is not taken for an overlap (a 300 ms lease's
// 75 ms margin was: 19 of 20 orders by 0.1-0.45 ms at load 15).
func unrenewedHookNeverOverlaps(t *testing.T, d paygate.Deduper) {
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	if err != nil {
		t.Fatal(err)
	}
	const orders = 20
	r := newMarginRace(t, d, key, orders, time.Second)
	var wg sync.WaitGroup
	for i := range orders {
		fields := url.Values{"status": {"success"}, "refNo": {fmt.Sprintf("MARGIN-%d", i)}, "orderNo": {fmt.Sprintf("GW-%d", i)}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.order(fields)
		}()
	}
	wg.Wait()
	r.check(orders)
}

// marginRace is unrenewedHookNeverOverlaps' pair of handlers on one
// deduper, the first unable to renew, and when their hooks ran.
type marginRace struct {
	t             *testing.T
	key           paygate.Key
	lease         time.Duration
	first, second *paygate.CallbackHandler
	running       map[string]chan struct{} // closed when each first hook starts

	mu      sync.Mutex
	ended   map[string]time.Time // when each first hook returned
	started map[string]time.Time // when each second hook began
}

func newMarginRace(t *testing.T, d paygate.Deduper, key paygate.Key, orders int, lease time.Duration) *marginRace {
	r := &marginRace{t: t, key: key, lease: lease, running: map[string]chan struct{}{},
		ended: map[string]time.Time{}, started: map[string]time.Time{}}
	for i := range orders {
		r.running[fmt.Sprintf("MARGIN-%d", i)] = make(chan struct{})
	}
	r.first = &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: renewalLost{d}, Lease: lease,
		Logger: slog.New(slog.DiscardHandler), Fulfil: paygate.FulfilFunc(r.firstHook)}
	r.second = &paygate.CallbackHandler{Keys: []paygate.Key{key}, Deduper: d, Lease: lease,
		Logger: slog.New(slog.DiscardHandler), Fulfil: paygate.FulfilFunc(r.secondHook)}
	return r
}

// firstHook runs until cancelled, and stops at once.
func (r *marginRace) firstHook(ctx context.Context, cb *paygate.Callback) error {
	close(r.running[cb.RefNo])
	<-ctx.Done()
	r.mu.Lock()
	r.ended[cb.RefNo] = time.Now()
	r.mu.Unlock()
	return context.Cause(ctx)
}

// secondHook notes when it began.
func (r *marginRace) secondHook(_ context.Context, cb *paygate.Callback) error {
	r.mu.Lock()
	r.started[cb.RefNo] = time.Now()
	r.mu.Unlock()
	return nil
}

// deliver sends the callback of fields to h and returns the status.
func (r *marginRace) deliver(h http.Handler, fields url.Values) int {
	req, err := gatewaytest.NewCallbackRequest(r.key, "/return", fields)
	if err != nil {
		r.t.Error(err)
		return 0
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code
}

// order delivers one order to the first handler and, once its hook runs,
// to the second every 2 ms until it gets the claim.
func (r *marginRace) order(fields url.Values) {
	ref := fields.Get("refNo")
	got := make(chan int, 1)
	go func() { got <- r.deliver(r.first, fields) }()
	select { // the first delivery holds the claim
	case <-r.running[ref]:
	case <-time.After(5 * time.Second):
		r.t.Errorf("%s: the first delivery's hook did not start within 5 s", ref)
		return
	}
	deadline := time.Now().Add(10 * r.lease)
	for r.deliver(r.second, fields) != http.StatusOK {
		if time.Now().After(deadline) {
			r.t.Errorf("%s: the second delivery never got the claim within %v", ref, 10*r.lease)
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if code := <-got; code != http.StatusInternalServerError {
		r.t.Errorf("%s: the cancelled first hook answered %d, want 500", ref, code)
	}
}

// check fails the test unless every order was taken over by the second
// handler, each after its first hook ended.
func (r *marginRace) check(orders int) {
	overlaps := 0
	for ref, start := range r.started {
		if end, ok := r.ended[ref]; !ok || start.Before(end) {
			overlaps++
			r.t.Errorf("%s: the next claimant started %v before the unrenewed hook ended", ref, end.Sub(start))
		}
	}
	if len(r.started) != orders || overlaps != 0 {
		r.t.Fatalf("%d of %d orders taken over, %d overlaps; want %d and 0", len(r.started), orders, overlaps, orders)
	}
}

// tlog writes log lines to the test's log.
type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}
