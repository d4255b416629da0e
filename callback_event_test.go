package paygate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A status after the refNo's fulfilment is stale: OnStatus gets it marked,
// the order is not regressed, a warning is logged; before the fulfilment
// it is not stale. Staleness is the refNo's: a late failed or pending
// under another orderNo than the one that paid (a retried payment's
// first, abandoned attempt) is as stale as one under the paying orderNo.
func TestCallbackStatusAfterSuccessIsStale(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	tests := []struct {
		name      string
		first     []Status // delivered before the one under test, under GW1
		status    Status
		orderNo   string // of the status under test; "" is GW1
		wantStale bool
		// wantFulfils is how many times Fulfil ran: a stale status leaves
		// the order fulfilled once.
		wantFulfils int
	}{
		{name: "failed after success", first: []Status{StatusSuccess}, status: StatusFailed, wantStale: true, wantFulfils: 1},
		{name: "pending after success", first: []Status{StatusSuccess}, status: StatusPending, wantStale: true, wantFulfils: 1},
		{name: "failed after success, another orderNo", first: []Status{StatusSuccess}, status: StatusFailed, orderNo: "GW0", wantStale: true, wantFulfils: 1},
		{name: "pending after success, another orderNo", first: []Status{StatusSuccess}, status: StatusPending, orderNo: "GW2", wantStale: true, wantFulfils: 1},
		{name: "pending before success", status: StatusPending},
		{name: "failed under another orderNo, never paid", first: []Status{StatusPending}, status: StatusFailed, orderNo: "GW0"},
		{name: "failed, never paid", first: []Status{StatusPending}, status: StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			var got []*Callback
			fulfils := 0
			// order is the shop's state of INV-S, as a merchant's hooks keep
			// it: a stale status leaves it as it is.
			order := "new"
			h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: FulfilFunc(func(context.Context, *Callback) error { fulfils++; order = "paid"; return nil }),
				OnStatus: func(_ context.Context, cb *Callback) error {
					got = append(got, cb)
					if !cb.Stale {
						order = string(cb.Status)
					}
					return nil
				}}
			for _, st := range tt.first {
				require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-S", "GW1", st, "00"))).Code)
			}
			got = nil
			orderNo := cmp.Or(tt.orderNo, "GW1")
			require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-S", orderNo, tt.status, "00"))).Code)
			require.Len(t, got, 1, "OnStatus gets the event once")
			require.Equal(t, orderNo, got[0].OrderNo)
			require.Equal(t, tt.wantStale, got[0].Stale)
			require.Equal(t, tt.wantStale, strings.Contains(logs.String(), "level=WARN msg=\"status after the refNo was fulfilled"), logs.String())
			require.Equal(t, tt.wantFulfils, fulfils, "the order stays fulfilled once")
			if tt.wantStale {
				require.Equal(t, "paid", order, "a stale status never regresses the paid order")
			} else {
				require.Equal(t, string(tt.status), order)
			}

			// A reconciliation reading the same record back reports it the
			// same way, without calling OnStatus again.
			p := PaymentRecord{RefNo: "INV-S", OrderNo: orderNo, Status: tt.status, Amount: 14990}
			e := h.reconcileRecord(context.Background(), &Client{}, &p, SourceLookup, "INV-S")
			require.Equal(t, statusOutcome[tt.status], e.Outcome, "%+v", e)
			require.Equal(t, tt.wantStale, e.Stale)
			require.Len(t, got, 1)
		})
	}
}

// A verified status outside the three is never silent: an error line with
// the value, never Fulfil; without OnStatus the gateway is answered 500 so
// that it keeps the event; with OnStatus the hook gets it once.
func TestCallbackUnknownStatusIsNeverSilent(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name string
		// onStatus, when set, installs OnStatus, counting its calls.
		onStatus     func(t *testing.T, calls *int) func(context.Context, *Callback) error
		want         int
		wantStatuses int
	}{
		{name: "without OnStatus: 500, the gateway keeps it", want: http.StatusInternalServerError},
		{name: "with OnStatus: once", want: http.StatusOK, wantStatuses: 1,
			onStatus: func(t *testing.T, calls *int) func(context.Context, *Callback) error {
				return func(_ context.Context, cb *Callback) error {
					require.Equal(t, Status("SUCCESS"), cb.Status)
					*calls++
					return nil
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			statuses := 0
			h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: FulfilFunc(func(context.Context, *Callback) error { t.Fatal("an unknown status was fulfilled"); return nil })}
			if tc.onStatus != nil {
				h.OnStatus = tc.onStatus(t, &statuses)
			}
			for range 2 {
				require.Equal(t, tc.want, serve(h, signedRequest(t, key, callbackFields("INV-U", "GW1", "SUCCESS", "00"))).Code)
			}
			require.Contains(t, logs.String(), `level=ERROR msg="verified callback with a status the protocol does not define`)
			require.Contains(t, logs.String(), "status=SUCCESS")
			require.Equal(t, tc.wantStatuses, statuses, "OnStatus once per event")
		})
	}
}

// slowStatusClaims is a MemoryDeduper whose claims of status events take
// 100 ms, as a slow database round trip would.
type slowStatusClaims struct{ MemoryDeduper }

func (d *slowStatusClaims) Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error) {
	if strings.HasPrefix(key, "status|") {
		time.Sleep(100 * time.Millisecond)
	}
	return d.MemoryDeduper.Claim(ctx, key, lease)
}

// A success cannot be fulfilled between a status's staleness check and its
// OnStatus: the refNo's fulfilment is held off while OnStatus runs (the
// success gets 503 and comes back), so OnStatus is never told "current"
// about an order already fulfilled.
func TestCallbackStatusRacingSuccessIsNeverCurrentAfterFulfil(t *testing.T) {
	bubble(t, callbackStatusRacingSuccessIsNeverCurrentAfterFulfil)
}

func callbackStatusRacingSuccessIsNeverCurrentAfterFulfil(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var mu sync.Mutex
	var order []string
	h := &CallbackHandler{Keys: []Key{key}, Deduper: &slowStatusClaims{}, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, "Fulfil")
			return nil
		}),
		OnStatus: func(_ context.Context, cb *Callback) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, fmt.Sprintf("OnStatus(stale=%t)", cb.Stale))
			return nil
		}}
	pending := make(chan int, 1)
	go func() {
		pending <- serve(h, signedRequest(t, key, callbackFields("INV-RACE", "GW1", StatusPending, "09"))).Code
	}()
	time.Sleep(20 * time.Millisecond) // the pending is past its staleness check, claiming its event
	deadline := time.Now().Add(5 * time.Second)
	for serve(h, signedRequest(t, key, callbackFields("INV-RACE", "GW1", StatusSuccess, "00"))).Code != http.StatusOK {
		require.True(t, time.Now().Before(deadline), "the success was never taken within 5 s")
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, http.StatusOK, <-pending)
	require.Equal(t, []string{"OnStatus(stale=false)", "Fulfil"}, order)
}

// The handler reads a callback's fpx only once it acts on the event, yet
// every hook sees it read: its code, and its problems when it does not
// parse; a verified duplicate is answered without it.
func TestCallbackHooksSeeTheFPXRead(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name string
		// before are the deliveries before the one the hook sees.
		before []url.Values
		last   url.Values
		// hook installs the hook under test, which reports what it saw.
		hook         func(h *CallbackHandler, saw func(*Callback))
		wantCode     FPXCode
		wantProblems []string // the fields named in Problems
	}{
		{name: "Fulfil", last: callbackFields("INV-H1", "GW1", StatusSuccess, "51"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.Fulfil = FulfilFunc(func(_ context.Context, cb *Callback) error { saw(cb); return nil })
			}, wantCode: "51"},
		{name: "Fulfil, fpx not JSON", last: func() url.Values {
			f := callbackFields("INV-H2", "GW1", StatusSuccess, "00")
			f.Set("fpx", "{oops")
			return f
		}(),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.Fulfil = FulfilFunc(func(_ context.Context, cb *Callback) error { saw(cb); return nil })
			}, wantProblems: []string{"fpx"}},
		{name: "OnStatus", last: callbackFields("INV-H3", "GW1", StatusPending, "09"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.OnStatus = func(_ context.Context, cb *Callback) error { saw(cb); return nil }
			}, wantCode: "09"},
		{name: "OnStatus, stale", before: []url.Values{callbackFields("INV-H4", "GW1", StatusSuccess, "00")},
			last: callbackFields("INV-H4", "GW1", StatusFailed, "51"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.OnStatus = func(_ context.Context, cb *Callback) error { saw(cb); return nil }
			}, wantCode: "51"},
		{name: "OnDoublePayment", before: []url.Values{callbackFields("INV-H5", "GW1", StatusSuccess, "00")},
			last: callbackFields("INV-H5", "GW2", StatusSuccess, "76"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.OnDoublePayment = func(_ context.Context, cb *Callback, _ string) error { saw(cb); return nil }
			}, wantCode: "76"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &CallbackHandler{Keys: []Key{key}, Logger: discardLogger(), Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
			var seen []*Callback
			tc.hook(h, func(cb *Callback) { seen = append(seen, cb) })
			for _, f := range tc.before {
				require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code)
			}
			seen = nil
			for range 2 { // the event, then its retry: a duplicate
				require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, tc.last)).Code)
			}
			require.Len(t, seen, 1, "the hook runs once")
			require.Equal(t, tc.wantCode, seen[0].FPX.DebitAuthCode)
			require.True(t, seen[0].FPX.Present)
			var fields []string
			for _, p := range seen[0].Problems {
				fields = append(fields, p.Field)
			}
			require.Equal(t, tc.wantProblems, fields)
		})
	}
}

// An inconsistent success is logged as it is fulfilled: once, not on each
// retry of it, and not for a second payment, which is not fulfilled.
func TestCallbackInconsistentSuccessLoggedWhenFulfilled(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var logs bytes.Buffer
	h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
	for _, f := range []url.Values{
		callbackFields("INV-I", "GW1", StatusSuccess, "51"),
		callbackFields("INV-I", "GW1", StatusSuccess, "51"), // a retry
		callbackFields("INV-I", "GW2", StatusSuccess, "51"), // a second payment
	} {
		require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "verified success is inconsistent; fulfilling"), logs.String())
	require.Contains(t, logs.String(), "fpx_debit_auth_code=51")
	require.Contains(t, logs.String(), "second payment for a fulfilled refNo")
}

// Whatever a verified callback's fpx holds (none, empty, not JSON, not an
// object, a code that is not text, duplicate members, escapes, invalid
// UTF-8, a byte order mark, trailing bytes, deep nesting), the hook sees
// the very Callback that ParseCallback makes of its form (as it did when
// the fpx was read before the claim), the answer is 200 and a retry is
// answered without running the hook again.
func TestCallbackHookSeesParseCallbackOfAnyFPX(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	deep := strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000)
	fpxValues := []struct {
		name string
		fpx  string // "-": no fpx field
	}{
		{name: "none", fpx: "-"},
		{name: "empty", fpx: ""},
		{name: "not JSON", fpx: "{oops"},
		{name: "array", fpx: `["fpx_debit_auth_code","00"]`},
		{name: "null", fpx: "null"},
		{name: "code a number", fpx: `{"fpx_debit_auth_code":51}`},
		{name: "code twice", fpx: `{"fpx_debit_auth_code":"51","fpx_debit_auth_code":"00"}`},
		{name: "code escaped", fpx: `{"fpx_debit_auth_code":"\u0030\u0030"}`},
		{name: "invalid UTF-8", fpx: "{\"fpx_debit_auth_code\":\"0\xff\"}"},
		{name: "BOM", fpx: "\ufeff{\"fpx_debit_auth_code\":\"00\"}"},
		{name: "trailing bytes", fpx: `{"fpx_debit_auth_code":"00"} x`},
		{name: "deep nesting", fpx: `{"fpx_debit_auth_code":"00","x":` + deep + `}`},
		{name: "huge number", fpx: `{"n":1` + strings.Repeat("0", 5000) + `e99999,"fpx_debit_auth_code":"00"}`},
		{name: "unterminated string", fpx: `{"fpx_debit_auth_code":"00`},
	}
	hooks := []struct {
		name   string
		before []url.Values // deliveries before the one the hook sees
		last   url.Values
		hook   func(h *CallbackHandler, saw func(*Callback))
	}{
		{name: "Fulfil", last: callbackFields("INV-F", "GW1", StatusSuccess, "00"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.Fulfil = FulfilFunc(func(_ context.Context, cb *Callback) error { saw(cb); return nil })
			}},
		{name: "OnStatus", last: callbackFields("INV-S", "GW1", StatusFailed, "51"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.OnStatus = func(_ context.Context, cb *Callback) error { saw(cb); return nil }
			}},
		{name: "OnDoublePayment", before: []url.Values{callbackFields("INV-D", "GW1", StatusSuccess, "00")},
			last: callbackFields("INV-D", "GW2", StatusSuccess, "00"),
			hook: func(h *CallbackHandler, saw func(*Callback)) {
				h.OnDoublePayment = func(_ context.Context, cb *Callback, _ string) error { saw(cb); return nil }
			}},
	}
	for _, hk := range hooks {
		for _, fv := range fpxValues {
			t.Run(hk.name+"/"+fv.name, func(t *testing.T) {
				h := &CallbackHandler{Keys: []Key{key}, Logger: discardLogger(), Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
				var seen []Callback
				hk.hook(h, func(cb *Callback) { seen = append(seen, *cb) })
				for _, f := range hk.before {
					require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code)
				}
				seen = nil
				last := url.Values{}
				for k, v := range hk.last {
					last[k] = v
				}
				last.Del("fpx")
				if fv.fpx != "-" {
					last.Set("fpx", fv.fpx)
				}
				for range 2 { // the event, then its retry
					w := serve(h, signedRequest(t, key, last))
					require.Equal(t, http.StatusOK, w.Code, w.Body.String())
				}
				require.Len(t, seen, 1, "the hook runs once")
				want, err := ParseCallback(seen[0].Form)
				require.NoError(t, err)
				got := seen[0]
				got.Verified, got.Stale = false, false
				require.Equal(t, *want, got)
			})
		}
	}
}

// On the in-memory deduper the claim lasts HookTimeout plus Lease; with
// either near the largest Duration (as "no limit"), the sum saturates
// instead of wrapping to a negative lease: a duplicate that comes while
// the hook runs gets 503, and Fulfil runs once. (Wrapped, the duplicate
// took the event over and Fulfil ran twice.)
func TestCallbackClaimLeaseSaturates(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name string
		edit func(h *CallbackHandler)
	}{
		{name: "HookTimeout max", edit: func(h *CallbackHandler) { h.HookTimeout = math.MaxInt64 }},
		{name: "Lease max", edit: func(h *CallbackHandler) { h.Lease = math.MaxInt64 }},
		{name: "both max", edit: func(h *CallbackHandler) { h.HookTimeout, h.Lease = math.MaxInt64, math.MaxInt64 }},
		{name: "both half", edit: func(h *CallbackHandler) { h.HookTimeout, h.Lease = math.MaxInt64/2+1, math.MaxInt64/2+1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int32
			running, release := make(chan struct{}), make(chan struct{})
			stop := sync.OnceFunc(func() { close(release) })
			t.Cleanup(stop) // a failing row leaves no hook blocked
			h := &CallbackHandler{Keys: []Key{key}, Logger: discardLogger(), Fulfil: FulfilFunc(func(context.Context, *Callback) error {
				if runs.Add(1) == 1 {
					close(running)
					<-release
				}
				return nil
			})}
			tc.edit(h)
			f := callbackFields("INV-SAT", "GW1", StatusSuccess, "00")
			first := make(chan int, 1)
			go func() { first <- serve(h, signedRequest(t, key, f)).Code }()
			<-running
			require.Equal(t, http.StatusServiceUnavailable, serve(h, signedRequest(t, key, f)).Code, "a duplicate while the hook runs")
			stop()
			require.Equal(t, http.StatusOK, <-first)
			require.EqualValues(t, 1, runs.Load())
			require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code, "a retry once done")
			require.EqualValues(t, 1, runs.Load())
		})
	}
}

// TestEventKeysNeverCollide: the Deduper keys of two different events
// differ even when a '|' or a backslash within a refNo or an orderNo moves
// where the parts seem to split; parts with neither give the keys stored
// before, unchanged.
func TestEventKeysNeverCollide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   []string
		sameAs string // the key of a, when it must stay as it was
	}{
		{name: "a | moves the split", a: []string{"A|B", "C"}, b: []string{"A", "B|C"}},
		{name: "an escaped | against a backslash", a: []string{`A\|B`}, b: []string{`A\`, "B"}},
		{name: "a trailing backslash", a: []string{`A\`, "B"}, b: []string{"A", `\B`}},
		{name: "an empty part", a: []string{"", "A|B"}, b: []string{"|A", "B"}},
		{name: "plain parts are as before", a: []string{"INV-1", "GW1", "pending"}, b: []string{"INV-1", "GW1", "failed"}, sameAs: "status|INV-1|GW1|pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := eventKey("status", tc.a...), eventKey("status", tc.b...)
			require.NotEqual(t, ka, kb)
			if tc.sameAs != "" {
				require.Equal(t, tc.sameAs, ka)
			}
		})
	}
}

// TestDoublePaymentsWithSplitLookingIDsBothReported: two second payments
// whose refNo and orderNo, joined with '|', read the same ("A|B" + "C" and
// "A" + "B|C") are each sent to OnDoublePayment: one key for both would
// have taken the second for a retry of the first and never reported it.
func TestDoublePaymentsWithSplitLookingIDsBothReported(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var mu sync.Mutex
	var doubles []string
	h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil }),
		OnDoublePayment: func(_ context.Context, cb *Callback, _ string) error {
			mu.Lock()
			defer mu.Unlock()
			doubles = append(doubles, cb.RefNo+" "+cb.OrderNo)
			return nil
		},
	}
	for _, f := range []url.Values{
		callbackFields("A|B", "P1", StatusSuccess, "00"), callbackFields("A", "P2", StatusSuccess, "00"),
		callbackFields("A|B", "C", StatusSuccess, "00"), callbackFields("A", "B|C", StatusSuccess, "00"),
	} {
		require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code)
	}
	require.ElementsMatch(t, []string{"A|B C", "A B|C"}, doubles)
}

// A failed hook's log line says what brings the event back: the gateway
// for a callback, the next reconciliation for a lookup or a report row
// (issue 31: "the gateway will retry" was logged for report rows too).
func TestCallbackHookFailureSaysWhoRetries(t *testing.T) {
	for _, tc := range []struct {
		source Source
		want   string
	}{
		{source: SourceCallback, want: "callback hook failed; the gateway will retry"},
		{source: SourceLookup, want: "callback hook failed; the next reconciliation will retry"},
		{source: SourceReport, want: "callback hook failed; the next reconciliation will retry"},
	} {
		t.Run(tc.source.String(), func(t *testing.T) {
			var logs bytes.Buffer
			h := &CallbackHandler{Keys: []Key{mustKey(t, testKeyUUID)}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: FulfilFunc(func(context.Context, *Callback) error { return errors.New("shop down") })}
			cb := &Callback{Status: StatusSuccess, RefNo: "INV-R", OrderNo: "GW1", Verified: true, Source: tc.source}
			v := h.newEvent(cb, origin{source: tc.source}).process(context.Background())
			require.Equal(t, http.StatusInternalServerError, v.code)
			require.Contains(t, logs.String(), tc.want)
			require.Equal(t, 1, strings.Count(logs.String(), "will retry"), logs.String())
		})
	}
}

// storeCtxDeduper records the context of every call of the store. It holds
// its MemoryDeduper by name, not embedded: it must not pass for a Deduper
// that never waits.
type storeCtxDeduper struct {
	mem      MemoryDeduper
	mu       sync.Mutex
	deadline []bool  // whether each call's context had a deadline
	errs     []error // each call's context's error when the call came
	ctxs     []context.Context
}

func (d *storeCtxDeduper) note(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := ctx.Deadline()
	d.deadline = append(d.deadline, ok)
	d.errs = append(d.errs, ctx.Err())
	d.ctxs = append(d.ctxs, ctx)
}

func (d *storeCtxDeduper) Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error) {
	d.note(ctx)
	return d.mem.Claim(ctx, key, lease)
}

func (d *storeCtxDeduper) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	d.note(ctx)
	return d.mem.Renew(ctx, key, token, lease)
}

func (d *storeCtxDeduper) Release(ctx context.Context, key, token string) error {
	d.note(ctx)
	return d.mem.Release(ctx, key, token)
}

func (d *storeCtxDeduper) Complete(ctx context.Context, key, token, outcome string) error {
	d.note(ctx)
	return d.mem.Complete(ctx, key, token, outcome)
}

// Every call of a Deduper that may wait (anything but MemoryDeduper) gets a
// time limit of its own, and none is cancelled with the request: a
// gateway that hangs up after Fulfil does not stop the completion from
// being recorded.
func TestStoreCallsHaveTheirOwnLimitAndOutliveTheRequest(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	d := &storeCtxDeduper{}
	ctx, hangUp := context.WithCancel(context.Background())
	h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error {
			hangUp() // the gateway hangs up while the order is fulfilled
			return nil
		})}
	r := signedRequest(t, key, callbackFields("INV-S", "GWS", StatusSuccess, "00")).WithContext(ctx)
	require.Equal(t, 200, serve(h, r).Code)
	d.mu.Lock()
	defer d.mu.Unlock()
	require.GreaterOrEqual(t, len(d.deadline), 2, "a claim and a completion")
	for i := range d.deadline {
		require.True(t, d.deadline[i], "call %d has a time limit", i)
		require.NoError(t, d.errs[i], "call %d is not cancelled with the request", i)
	}
}

// The hold on a refNo's fulfilment lasts as long as OnStatus runs, however
// many leases that is: it is renewed with the status event's own claim, so
// a success that comes while a long OnStatus runs is answered 503 every
// time, and fulfilled only after.
func TestCallbackStatusHoldOutlivesItsLease(t *testing.T) {
	bubble(t, callbackStatusHoldOutlivesItsLease)
}

func callbackStatusHoldOutlivesItsLease(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	const lease = 150 * time.Millisecond
	started, release := make(chan struct{}), make(chan struct{})
	var fulfilled atomic.Bool
	h := &CallbackHandler{Keys: []Key{key}, Lease: lease, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error {
			fulfilled.Store(true)
			return nil
		}),
		OnStatus: func(context.Context, *Callback) error {
			close(started)
			<-release // runs until the test has tried the success for several leases
			return nil
		}}
	pending := make(chan int, 1)
	go func() {
		pending <- serve(h, signedRequest(t, key, callbackFields("INV-HOLD", "GW1", StatusPending, "09"))).Code
	}()
	<-started
	tried := 0
	for start := time.Now(); time.Since(start) < 4*lease; time.Sleep(10 * time.Millisecond) {
		code := serve(h, signedRequest(t, key, callbackFields("INV-HOLD", "GW1", StatusSuccess, "00"))).Code
		if code == http.StatusOK {
			require.True(t, fulfilled.Load())
			require.Fail(t, "a success was fulfilled while OnStatus still ran", "after %d tries", tried)
		}
		tried++
	}
	close(release)
	require.Equal(t, http.StatusOK, <-pending)
	require.False(t, fulfilled.Load(), "nothing fulfilled while OnStatus ran")
	require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-HOLD", "GW1", StatusSuccess, "00"))).Code)
	require.True(t, fulfilled.Load(), "fulfilled once OnStatus returned")
}

// fakeTx is a TxFulfiller that answers as told, recording what it was
// handed.
type fakeTx struct {
	res      ClaimResult
	err      error
	panics   bool
	checkErr error // Check's answer
	got      []HookClaim
	// left and saw record the time left to the context's deadline and
	// the callback FulfilOnce was handed.
	left []time.Duration
	saw  []Callback
}

func (f *fakeTx) Fulfil(context.Context, *Callback) error {
	return errors.New("fakeTx: the lease path was taken")
}

func (f *fakeTx) Check(Deduper) error { return f.checkErr }

func (f *fakeTx) FulfilOnce(ctx context.Context, claim HookClaim, cb *Callback) (ClaimResult, error) {
	f.got = append(f.got, claim)
	if f.panics {
		panic("ledger service returned garbage")
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return ClaimResult{}, errors.New("no time limit on the transaction")
	}
	f.left, f.saw = append(f.left, time.Until(deadline)), append(f.saw, *cb)
	return f.res, f.err
}

// With a TxFulfiller the handler hands a paid order to it under its key,
// its orderNo and the handler's Deduper, and answers by what it says: 200
// fulfilled or already fulfilled, a second payment to OnDoublePayment, 503
// while another delivery holds it, 500 for an error or a panic; no Fulfil,
// or a TxFulfiller that records in another Deduper, answers 500 and names
// the fix, for a status event too.
func TestCallbackFulfilTx(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tt := range []struct {
		name     string
		tx       *fakeTx
		status   Status // StatusSuccess unless set
		wantCode int
		wantLog  string
		wantPaid []string // OnDoublePayment's paidOrderNo
	}{
		{name: "fulfilled now", tx: &fakeTx{res: ClaimResult{State: ClaimAcquired}}, wantCode: http.StatusOK},
		{name: "fulfilled before", tx: &fakeTx{res: ClaimResult{State: ClaimDone, Result: "GW1"}}, wantCode: http.StatusOK},
		{name: "paid twice", tx: &fakeTx{res: ClaimResult{State: ClaimDone, Result: "GW0"}}, wantCode: http.StatusOK, wantPaid: []string{"GW0"}, wantLog: "second payment"},
		{name: "in flight", tx: &fakeTx{res: ClaimResult{State: ClaimBusy}}, wantCode: http.StatusServiceUnavailable},
		{name: "failed", tx: &fakeTx{err: errors.New("ledger down")}, wantCode: http.StatusInternalServerError, wantLog: "ledger down"},
		{name: "panicked", tx: &fakeTx{panics: true}, wantCode: http.StatusInternalServerError, wantLog: "panicked"},
		{name: "another Deduper", tx: &fakeTx{checkErr: errors.New("recorded in table other")}, wantCode: http.StatusInternalServerError,
			wantLog: "records in another Deduper than CallbackHandler.Deduper (*paygate.MemoryDeduper): give both the same one"},
		{name: "another Deduper, a status", tx: &fakeTx{checkErr: errors.New("recorded in table other")}, status: StatusPending,
			wantCode: http.StatusInternalServerError, wantLog: "recorded in table other"},
		{name: "no hook", wantCode: http.StatusInternalServerError, wantLog: "CallbackHandler.Fulfil is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			var paid []string
			d := &MemoryDeduper{}
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				OnDoublePayment: func(_ context.Context, _ *Callback, p string) error { paid = append(paid, p); return nil }}
			if tt.tx != nil {
				h.Fulfil = tt.tx
			}
			status := cmp.Or(tt.status, StatusSuccess)
			require.Equal(t, tt.wantCode, serve(h, signedRequest(t, key, callbackFields("INV-T~2", "GW1", status, "00"))).Code, logs.String())
			require.Contains(t, logs.String(), tt.wantLog)
			require.Equal(t, tt.wantPaid, paid)
			if tt.tx != nil && tt.tx.checkErr == nil {
				require.Equal(t, []HookClaim{{Key: "fulfil|INV-T", Result: "GW1", Deduper: d}}, tt.tx.got)
			}
		})
	}
}

// A TxFulfiller's transaction is bounded by HookTimeout, not the lease,
// and it is handed the callback as Fulfil would be: its fpx detail read,
// so that an inconsistent success (a declined code) shows in
// cb.Consistent(), and the handler's warning is logged.
func TestCallbackTxFulfillerSeesTheHookContract(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var logs bytes.Buffer
	tx := &fakeTx{res: ClaimResult{State: ClaimAcquired}}
	h := &CallbackHandler{Keys: []Key{key}, Fulfil: tx, HookTimeout: 5 * time.Minute, Lease: 30 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, callbackFields("INV-99", "GW1", StatusSuccess, "99"))).Code)
	require.Len(t, tx.left, 1)
	require.Greater(t, tx.left[0], 4*time.Minute, "bounded by the lease, not HookTimeout")
	require.LessOrEqual(t, tx.left[0], 5*time.Minute)
	require.Equal(t, FPXCode("99"), tx.saw[0].FPX.DebitAuthCode, "the fpx field was not read")
	require.False(t, tx.saw[0].Consistent())
	require.Contains(t, logs.String(), "verified success is inconsistent")
}
