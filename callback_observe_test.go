package paygate

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/observe"
	"github.com/stretchr/testify/require"
)

// Each callback is told as it fared: how it was verified, what the Deduper
// answered to its claim, how its hook ended, its outcome and the answer.
func TestCallbackHandlerObserver(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	other := mustKey(t, "00000000-0000-0000-0000-000000000001")
	success := callbackFields("INV-1~cart 7", "GW1", StatusSuccess, "00")
	pending := callbackFields("INV-2", "GW2", StatusPending, "09")
	tampered := url.Values{}
	for k, v := range signedRequestForm(t, key, success) {
		tampered[k] = v
	}
	tampered.Set("amount", "1.00")
	tests := []struct {
		name    string
		h       func(h *CallbackHandler)
		req     func() *http.Request
		fail    int32 // Fulfil fails this many times
		repeat  bool  // the same request twice: the second is told
		want    observe.CallbackEnd
		fulfils bool // FulfilLatency set
	}{
		{name: "a success, new", req: func() *http.Request { return signedRequest(t, key, success) },
			want:    observe.CallbackEnd{Verification: observe.VerifyOK, Claim: observe.ClaimNew, Hook: observe.HookOK, Outcome: "fulfilled", Status: 200},
			fulfils: true},
		{name: "a success, again", repeat: true, req: func() *http.Request { return signedRequest(t, key, success) },
			want: observe.CallbackEnd{Verification: observe.VerifyOK, Claim: observe.ClaimDuplicate, Outcome: "already_fulfilled", Status: 200}},
		{name: "a pending status without OnStatus", h: func(h *CallbackHandler) { h.OnStatus = nil },
			req:  func() *http.Request { return signedRequest(t, key, pending) },
			want: observe.CallbackEnd{Verification: observe.VerifyOK, Outcome: "pending", Status: 200}},
		{name: "a failing Fulfil", fail: 1, req: func() *http.Request { return signedRequest(t, key, success) },
			want:    observe.CallbackEnd{Verification: observe.VerifyOK, Claim: observe.ClaimNew, Hook: observe.HookFailed, Outcome: "error", Status: 500},
			fulfils: true},
		{name: "a signature of another key", req: func() *http.Request { return signedRequest(t, other, success) },
			want: observe.CallbackEnd{Verification: observe.VerifyMismatch, Status: 403}},
		{name: "a field changed after signing", req: func() *http.Request {
			return rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", tampered.Encode())
		}, want: observe.CallbackEnd{Verification: observe.VerifyMismatch, Status: 403}},
		{name: "a repeated field", req: func() *http.Request {
			return rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", tampered.Encode()+"&amount=2.00")
		}, want: observe.CallbackEnd{Verification: observe.VerifyMalformed, Status: 403}},
		{name: "the browser return", req: func() *http.Request {
			return rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", success.Encode())
		}, want: observe.CallbackEnd{Verification: observe.VerifyUnsigned}},
		{name: "the browser return without OnReturn", h: func(h *CallbackHandler) { h.OnReturn = nil }, req: func() *http.Request {
			return rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", success.Encode())
		}, want: observe.CallbackEnd{Verification: observe.VerifyUnsigned, Status: 403}},
		{name: "a GET", req: func() *http.Request { return rawRequest(t, http.MethodGet, "", "") },
			want: observe.CallbackEnd{Verification: observe.VerifyMethod, Status: 405}},
		{name: "JSON", req: func() *http.Request { return rawRequest(t, http.MethodPost, "application/json", "{}") },
			want: observe.CallbackEnd{Verification: observe.VerifyMalformed, Status: 415}},
		{name: "a body over the limit", h: func(h *CallbackHandler) { h.BodyLimit = 10 }, req: func() *http.Request {
			return rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", strings.Repeat("a=b&", 10))
		}, want: observe.CallbackEnd{Verification: observe.VerifyTooLarge, Status: 413}},
		{name: "no key", h: func(h *CallbackHandler) { h.Keys = nil }, req: func() *http.Request { return signedRequest(t, key, success) },
			want: observe.CallbackEnd{Verification: observe.VerifyNoKey, Status: 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &eventLog{}
			rec := &recorder{delay: time.Millisecond} // Fulfil lasts at least that
			rec.fail.Store(tt.fail)
			h := rec.handler(key)
			h.Observer = log
			if tt.h != nil {
				tt.h(h)
			}
			if tt.repeat {
				serve(h, tt.req())
				log.events = nil
			}
			serve(h, tt.req())
			events := log.all()
			require.Len(t, events, 2)
			require.Equal(t, observe.Callback{Source: observe.SourceCallback}, events[0])
			end := events[1].(observe.CallbackEnd)
			require.Equal(t, tt.fulfils, end.FulfilLatency >= time.Millisecond, "FulfilLatency %v", end.FulfilLatency)
			end.FulfilLatency = 0
			require.Equal(t, tt.want, end)
		})
	}
}

// signedRequestForm is the form of a callback signed with key.
func signedRequestForm(t *testing.T, key Key, f url.Values) url.Values {
	t.Helper()
	r := signedRequest(t, key, f)
	require.NoError(t, r.ParseForm())
	return r.PostForm
}

// A reconciliation is told with the Client's Observer when the handler has
// none: its start, each entry's outcome and its end.
func TestReconcileObserver(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	log := &eventLog{}
	c, err := NewClient(WithReportsURL(srv.URL), WithAuthToken("t0ken"), WithObserver(log), WithRetry(RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	h := &CallbackHandler{Keys: []Key{mustKey(t, testKeyUUID)}, ReconcileInterval: -1}
	rec, err := h.Reconcile(context.Background(), c, []string{"INV-1"})
	require.NoError(t, err)
	require.Equal(t, OutcomeError, rec.Entries[0].Outcome)
	require.Equal(t, []any{
		observe.Reconcile{Source: observe.SourceLookup},
		observe.Call{Method: "GET", Route: "/api/report/v1/fpxrequest"},
		observe.CallEnd{Attempts: 1, Status: 502, Class: observe.ClassAnswer},
		observe.ReconcileEntry{Outcome: "error"},
		observe.ReconcileEnd{Entries: 1},
	}, log.all())
}

// A reconciliation run within an observed callback's hook tells its
// records apart: each has its own start and end, none is noted in the
// callback's.
func TestReconcileWithinAHookObserver(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":"OK","fpxrequest":{"seller_order_no":"INV-9","order_no":"GW9","amount":"149.90","status":"success","fpx_debit_auth_code":"00"}}`))
	}))
	defer srv.Close()
	c, err := NewClient(WithReportsURL(srv.URL), WithAuthToken("t0ken"), WithRetry(RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	key := mustKey(t, testKeyUUID)
	log := &eventLog{}
	h := &CallbackHandler{Keys: []Key{key}, Observer: log, ReconcileInterval: -1}
	var inner *Reconciliation
	h.Fulfil = FulfilFunc(func(ctx context.Context, cb *Callback) error {
		if cb.Source == SourceCallback {
			inner, err = h.Reconcile(ctx, c, []string{"INV-9"})
		}
		return err
	})
	serve(h, signedRequest(t, key, callbackFields("INV-1~cart 7", "GW1", StatusSuccess, "00")))
	require.NotNil(t, inner)
	require.Equal(t, OutcomeFulfilled, inner.Entries[0].Outcome, "%v", inner.Entries[0].Err)
	var ends []observe.CallbackEnd
	for _, e := range log.all() {
		if end, ok := e.(observe.CallbackEnd); ok {
			end.FulfilLatency = 0
			ends = append(ends, end)
		}
	}
	require.Equal(t, []observe.CallbackEnd{
		{Verification: observe.VerifyOK, Claim: observe.ClaimNew, Hook: observe.HookOK, Outcome: "fulfilled"},
		{Verification: observe.VerifyOK, Claim: observe.ClaimNew, Hook: observe.HookOK, Outcome: "fulfilled", Status: 200},
	}, ends)
}

// A success fulfilled without a fpxTxnTime the replay bound reads is said
// once, at warning, with the field's value, and told to the Observer; its
// duplicates and a success the bound reads are not.
func TestCallbackHandlerUnboundedSuccess(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tt := range []struct {
		name      string
		txnTime   []string // nil: the field left out
		maxTxnAge time.Duration
		want      bool
		wantValue string
	}{
		{name: "no fpxTxnTime", want: true, wantValue: `fpxTxnTime="\"\""`},
		{name: "an unread fpxTxnTime", txnTime: []string{"yesterday at noon"}, want: true, wantValue: `yesterday at noon`},
		{name: "a fpxTxnTime the bound reads", txnTime: []string{time.Now().In(MalaysiaTime()).Format(time.DateTime)}},
		{name: "no bound", maxTxnAge: -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			log := &eventLog{}
			rec := &recorder{}
			h := rec.handler(key)
			h.Observer, h.MaxTxnAge, h.Logger = log, tt.maxTxnAge, slog.New(slog.NewTextHandler(&logs, nil))
			f := callbackFields("INV-UB", "GW1", StatusSuccess, "00")
			f.Del("fpxTxnTime")
			if tt.txnTime != nil {
				f["fpxTxnTime"] = tt.txnTime
			}
			for range 2 { // the second is a duplicate
				require.Equal(t, http.StatusOK, serve(h, signedRequest(t, key, f)).Code)
			}
			var told []bool
			for _, e := range log.all() {
				if end, ok := e.(observe.CallbackEnd); ok {
					told = append(told, end.Unbounded)
				}
			}
			require.Equal(t, []bool{tt.want, false}, told)
			const line = `level=WARN msg="success fulfilled without a fpxTxnTime the replay bound reads`
			require.Equal(t, map[bool]int{true: 1, false: 0}[tt.want], strings.Count(logs.String(), line), "once, at warning:\n%s", logs.String())
			require.Contains(t, logs.String(), tt.wantValue)
			require.Len(t, rec.fulfils, 1)
		})
	}
}
