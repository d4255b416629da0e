package paygate

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A verified success is fulfilled whatever the fields the protocol does not
// define look like; what is odd is on the Callback and in a warning.
func TestCallbackHandlerFulfilsOddSuccess(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	tests := []struct {
		name  string
		edit  func(f url.Values)
		code  FPXCode
		fault string // in the warning
	}{
		{name: "code 51", edit: func(f url.Values) { f.Set("fpx", `{"fpx_debit_auth_code":"51"}`) }, code: "51", fault: "fpx_debit_auth_code=51"},
		{name: "empty code", edit: func(f url.Values) { f.Set("fpx", `{"fpx_debit_auth_code":""}`) }, fault: "inconsistent"},
		{name: "null code", edit: func(f url.Values) { f.Set("fpx", `{"fpx_debit_auth_code":null}`) }, fault: "inconsistent"},
		{name: "duplicate code", edit: func(f url.Values) { f.Set("fpx", `{"fpx_debit_auth_code":"00","fpx_debit_auth_code":"00"}`) }, fault: "more than once"},
		{name: "fpx null", edit: func(f url.Values) { f.Set("fpx", `null`) }, fault: "not a JSON object"},
		{name: "fpx array", edit: func(f url.Values) { f.Set("fpx", `[]`) }, fault: "not a JSON object"},
		{name: "fpx not JSON", edit: func(f url.Values) { f.Set("fpx", `{oops`) }, fault: "not valid JSON"},
		{name: "amount 10.000", edit: func(f url.Values) { f.Set("amount", "10.000") }, code: "00", fault: "amount"},
		{name: "amount 1,000.00", edit: func(f url.Values) { f.Set("amount", "1,000.00") }, code: "00", fault: "amount"},
		{name: "addCharge odd", edit: func(f url.Values) { f.Set("addCharge", "RM0") }, code: "00", fault: "addCharge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			var got *Callback
			h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error { got = cb; return nil })}
			f := callbackFields("INV-ODD", "GW1", StatusSuccess, "00")
			tt.edit(f)
			w := serve(h, signedRequest(t, key, f))
			require.Equal(t, 200, w.Code, w.Body.String())
			require.NotNil(t, got, "a verified success is fulfilled")
			require.False(t, got.Consistent())
			require.Equal(t, tt.code, got.FPX.DebitAuthCode)
			require.Equal(t, f.Get("fpx"), got.FPX.Raw, "the raw value is kept")
			require.Contains(t, logs.String(), "level=WARN")
			require.Contains(t, logs.String(), tt.fault)
			require.Equal(t, 200, serve(h, signedRequest(t, key, f)).Code, "a retry is a duplicate")
		})
	}
}

// A joined refNo ("INV-1~cart 7") and a split one ("INV-1" plus extraData)
// are one order: fulfilled once, with the base reference.
func TestCallbackHandlerJoinedAndSplitRefNo(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rec := &recorder{}
	h := rec.handler(key)
	var extras []string
	fulfil := h.Fulfil
	h.Fulfil = FulfilFunc(func(ctx context.Context, cb *Callback) error {
		extras = append(extras, cb.ExtraData)
		return fulfil.Fulfil(ctx, cb)
	})
	joined := callbackFields("INV-J~cart 7", "GWJ", StatusSuccess, "00")
	joined.Del("extraData")
	split := callbackFields("INV-J", "GWJ", StatusSuccess, "00")
	split.Set("extraData", "cart 7")
	require.Equal(t, 200, serve(h, signedRequest(t, key, joined)).Code)
	require.Equal(t, 200, serve(h, signedRequest(t, key, split)).Code)
	require.Equal(t, []string{"INV-J"}, rec.fulfils)
	require.Equal(t, []string{"cart 7"}, extras)
	require.Empty(t, rec.statuses, "the second form is a plain duplicate, not a double payment")
}

// A middleware that parsed the form first (consuming the body) does not
// turn a genuine callback into a 403.
func TestCallbackHandlerFormParsedByMiddleware(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rec := &recorder{}
	h := rec.handler(key)
	parseFirst := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		h.ServeHTTP(w, r)
	})
	w := serve(parseFirst, signedRequest(t, key, callbackFields("INV-M", "GWM", StatusSuccess, "00")))
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, []string{"INV-M"}, rec.fulfils)

	// The browser's unsigned return parsed by middleware is still display only.
	r, err := newReturnRequest("/r", callbackFields("INV-M2", "GWM2", StatusSuccess, "00"))
	require.NoError(t, err)
	require.Equal(t, 200, serve(parseFirst, r).Code)
	require.Equal(t, 1, rec.returns)
	require.Len(t, rec.fulfils, 1)
}

// A nil Logger logs through slog.Default(); an empty form (a middleware read
// the body) is called out.
func TestCallbackHandlerDefaultLogger(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	key := mustKey(t, testKeyUUID)
	h := &CallbackHandler{Keys: []Key{key}, Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
	ate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = r.Body.Read(make([]byte, 1<<16)) // a middleware that eats the body
		h.ServeHTTP(w, r)
	})
	require.Equal(t, 403, serve(ate, signedRequest(t, key, callbackFields("INV-L", "GWL", StatusSuccess, "00"))).Code)
	require.Contains(t, logs.String(), "empty form")
	require.Contains(t, logs.String(), "callback refused")

	logs.Reset()
	h.Logger = slog.New(slog.DiscardHandler)
	require.Equal(t, 403, serve(h, rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", "status=success&refNo=A&signature=0000000000000000")).Code)
	require.Empty(t, logs.String(), "a discarding Logger silences it")
}

// A second success for a fulfilled refNo under another orderNo is reported
// once per orderNo and never fulfilled.
func TestCallbackHandlerDoublePayment(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rec := &recorder{}
	h := rec.handler(key)
	var logs bytes.Buffer
	h.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	var doubles []string
	h.OnDoublePayment = func(_ context.Context, cb *Callback, paid string) error {
		doubles = append(doubles, cb.OrderNo+" after "+paid)
		if len(doubles) == 1 {
			return errors.New("refund queue down") // retried
		}
		return nil
	}
	deliver := func(orderNo string) int {
		return serve(h, signedRequest(t, key, callbackFields("INV-D", orderNo, StatusSuccess, "00"))).Code
	}
	require.Equal(t, 200, deliver("GW1"))
	require.Equal(t, 200, deliver("GW1"), "a retry of the first payment")
	require.Equal(t, 500, deliver("GW2"), "the hook failed: the gateway retries")
	require.Equal(t, 200, deliver("GW2"))
	require.Equal(t, 200, deliver("GW2"), "reported once")
	require.Equal(t, 200, deliver("GW3"))
	require.Equal(t, 200, deliver("GW1"))
	require.Equal(t, []string{"INV-D"}, rec.fulfils)
	require.Equal(t, []string{"GW2 after GW1", "GW2 after GW1", "GW3 after GW1"}, doubles)
	require.Contains(t, logs.String(), "second payment for a fulfilled refNo")

	// Without the hook: a warning, once, and no fulfilment.
	h.OnDoublePayment = nil
	logs.Reset()
	require.Equal(t, 200, deliver("GW4"))
	require.Equal(t, 200, deliver("GW4"))
	require.Equal(t, 1, strings.Count(logs.String(), "second payment for a fulfilled refNo"))
	require.Len(t, rec.fulfils, 1)
}

// losingDeduper is a MemoryDeduper whose Renew says the claim is lost, and
// whose calls fail on a done context, as a networked store's do.
type losingDeduper struct {
	MemoryDeduper
	renewErr error
}

func (d *losingDeduper) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	if d.renewErr != nil {
		return d.renewErr
	}
	return d.MemoryDeduper.Renew(ctx, key, token, lease)
}

func (d *losingDeduper) Complete(ctx context.Context, key, token, result string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.MemoryDeduper.Complete(ctx, key, token, result)
}

func (d *losingDeduper) Release(ctx context.Context, key, token string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.MemoryDeduper.Release(ctx, key, token)
}

// When renewal fails the hook's context is cancelled with the cause: lost at
// once, a transient error by the lease guard, a safety margin before the
// lease could lapse.
func TestCallbackHandlerRenewalFailureCancelsHook(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tt := range []struct {
		name  string
		err   error
		cause string
		after time.Duration // earliest cancellation: the first renewal, or the lease's end
	}{
		{name: "claim lost", err: ErrClaimLost, cause: "claim lost while the hook ran", after: 40 * time.Millisecond}, // the first renewal, due 50 ms after the claim (a little before the hook starts)
		{name: "store down", err: errors.New("connection refused"), cause: "not renewed before its lease's safety margin", after: 100 * time.Millisecond},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			d := &losingDeduper{renewErr: tt.err}
			var cause error
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Lease: 150 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
				Fulfil: FulfilFunc(func(ctx context.Context, _ *Callback) error {
					start := time.Now()
					select {
					case <-ctx.Done():
						cause = context.Cause(ctx)
						require.GreaterOrEqual(t, time.Since(start), tt.after)
						return ctx.Err()
					case <-time.After(2 * time.Second): // a bound: the cancellation is due within the lease
						return errors.New("the hook's context was not cancelled within 2 s of a failing renewal")
					}
				})}
			require.Equal(t, 500, serve(h, signedRequest(t, key, callbackFields("INV-R", "GWR", StatusSuccess, "00"))).Code)
			require.ErrorContains(t, cause, tt.cause)
			require.ErrorIs(t, cause, tt.err)
		}))
	}
}

// slowClaimDeduper answers every claim after delay.
type slowClaimDeduper struct {
	MemoryDeduper
	delay time.Duration
}

func (d *slowClaimDeduper) Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error) {
	time.Sleep(d.delay)
	return d.MemoryDeduper.Claim(ctx, key, lease)
}

// A claim answered past its lease's safety margin (a starved store) may
// already have lapsed and been taken over: its hook starts with its context
// cancelled, so that a hook that checks it before its effect never
// overlaps the next claimant. (It used to start uncancelled, until the
// first renewal, a third of the lease later.)
func TestCallbackHandlerLateClaimStartsHookCancelled(t *testing.T) {
	bubble(t, callbackHandlerLateClaimStartsHookCancelled)
}

func callbackHandlerLateClaimStartsHookCancelled(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	cause := errors.New("the hook did not run")
	h := &CallbackHandler{Keys: []Key{key}, Deduper: &slowClaimDeduper{delay: 80 * time.Millisecond}, Lease: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(ctx context.Context, _ *Callback) error {
			cause = context.Cause(ctx)
			return ctx.Err()
		})}
	require.Equal(t, 500, serve(h, signedRequest(t, key, callbackFields("INV-L", "GWL", StatusSuccess, "00"))).Code)
	require.ErrorIs(t, cause, errLeaseMargin, "a claim answered 80 ms into a 100 ms lease is past its 25 ms margin")
}

// The hook's time limit is HookTimeout, not the lease.
func TestCallbackHandlerHookTimeout(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var limit time.Duration
	h := &CallbackHandler{Keys: []Key{key}, Lease: time.Hour, HookTimeout: 3 * time.Second,
		Fulfil: FulfilFunc(func(ctx context.Context, _ *Callback) error {
			dl, _ := ctx.Deadline()
			limit = time.Until(dl)
			return nil
		})}
	require.Equal(t, 200, serve(h, signedRequest(t, key, callbackFields("INV-T", "GWT", StatusSuccess, "00"))).Code)
	require.InDelta(t, 3*time.Second, limit, float64(time.Second))
}

// A hook that returns just as its context expires is recorded as done, on a
// context of the handler's own: a retry is a duplicate, not a second
// fulfilment.
func TestCallbackHandlerCompletesOnFreshContext(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	d := &losingDeduper{}
	calls := 0
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, HookTimeout: 50 * time.Millisecond,
		Fulfil: FulfilFunc(func(ctx context.Context, _ *Callback) error {
			calls++
			<-ctx.Done() // the side effect lands at the deadline
			return nil
		})}
	f := callbackFields("INV-F", "GWF", StatusSuccess, "00")
	require.Equal(t, 200, serve(h, signedRequest(t, key, f)).Code)
	require.Equal(t, 200, serve(h, signedRequest(t, key, f)).Code)
	require.Equal(t, 1, calls)
}

// A body trickling in a byte a second is cut off after ReadTimeout.
func TestCallbackHandlerSlowBody(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	// A body read whatever its Content-Type (A-callback-content-type) is
	// held to the read deadline all the same.
	for _, header := range []string{"Content-Type: application/x-www-form-urlencoded\r\n", "Content-Type: text/plain\r\n", ""} {
		t.Run(cmp.Or(header, "no Content-Type"), func(t *testing.T) {
			t.Parallel()
			h := &CallbackHandler{Keys: []Key{key}, ReadTimeout: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
				Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			t.Cleanup(func() { conn.Close() })
			_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\n%sContent-Length: 100\r\n\r\n", header)
			require.NoError(t, err)
			answered := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(conn).ReadString('\n')
				answered <- line
			}()
			// Trickle for at most 10 s; the handler must give up long before.
			tick := time.NewTicker(time.Second / 10)
			defer tick.Stop()
			for i := 0; i < 100; i++ {
				select {
				case line := <-answered:
					require.True(t, line == "" || strings.HasPrefix(line, "HTTP/1.1 400"), "answer %q", line)
					return
				case <-tick.C:
					_, _ = conn.Write([]byte("a"))
				}
			}
			t.Fatal("the handler was still reading a trickling body after 10 s")
		})
	}
}

// Concurrent duplicates of one order under a hook that panics once, across
// two handlers sharing a MemoryDeduper: fulfilled once.
func TestCallbackHandlerPanicThenDuplicates(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	d := &MemoryDeduper{}
	var mu sync.Mutex
	calls, fulfils := 0, 0
	newHandler := func() *CallbackHandler {
		return &CallbackHandler{Keys: []Key{key}, Deduper: d, Logger: slog.New(slog.DiscardHandler),
			Fulfil: FulfilFunc(func(context.Context, *Callback) error {
				mu.Lock()
				defer mu.Unlock()
				if calls++; calls == 1 {
					panic("first attempt")
				}
				fulfils++
				return nil
			})}
	}
	hs := []*CallbackHandler{newHandler(), newHandler()}
	f := callbackFields("INV-PD", "GWPD", StatusSuccess, "00")
	for i := 0; ; i++ {
		var wg sync.WaitGroup
		codes := make([]int, 10)
		for j := range codes {
			wg.Add(1)
			go func() { defer wg.Done(); codes[j] = serve(hs[j%2], signedRequest(t, key, f)).Code }()
		}
		wg.Wait()
		if strings.Count(fmt.Sprint(codes), "200") == len(codes) {
			break
		}
		require.Less(t, i, 20, "never settled: %v", codes)
	}
	require.Equal(t, 1, fulfils)
}

// On a *MemoryDeduper the hook's claim is taken for HookTimeout plus Lease
// and not renewed: a duplicate past the lease, within the hook's time
// limit, is still kept out (503); one past the time limit and a lease
// takes the event over, as after a lapse on any Deduper.
func TestCallbackHandlerMemoryClaimOutlastsTheHook(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	h := &CallbackHandler{Keys: []Key{key}, Deduper: &MemoryDeduper{Now: clock}, Lease: time.Minute, HookTimeout: 10 * time.Minute,
		Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error {
			if calls.Add(1) == 1 {
				close(entered)
				select { // a bound: the test releases the first hook
				case <-release:
				case <-time.After(10 * time.Second):
					return errors.New("the first hook was never released")
				}
			}
			return nil
		})}
	f := callbackFields("INV-M", "GWM", StatusSuccess, "00")
	first := make(chan int, 1)
	go func() { first <- serve(h, signedRequest(t, key, f)).Code }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first hook did not start within 10 s")
	}
	advance(5 * time.Minute) // past the lease, within the time limit
	require.Equal(t, http.StatusServiceUnavailable, serve(h, signedRequest(t, key, f)).Code, "the claim outlasts Lease")
	advance(7 * time.Minute) // past HookTimeout plus Lease
	require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code, "the lapsed claim is taken over")
	close(release)
	require.Equal(t, http.StatusInternalServerError, <-first, "the first delivery lost its claim")
	require.EqualValues(t, 2, calls.Load())
}
