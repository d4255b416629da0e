package paygate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/testbound"
)

// newCallbackRequest is gatewaytest.NewCallbackRequest, which this
// package's tests cannot import: the direct callback, fields signed with
// key, POSTed form-encoded to target.
func newCallbackRequest(key Key, target string, fields url.Values) (*http.Request, error) {
	signed, err := signCallback(key, fields)
	if err != nil {
		return nil, err
	}
	return newReturnRequest(target, signed)
}

// newReturnRequest is gatewaytest.NewReturnRequest: a form POST of fields
// to target as they are (the browser's return, when unsigned).
func newReturnRequest(target string, fields url.Values) (*http.Request, error) {
	r, err := http.NewRequest(http.MethodPost, target, strings.NewReader(fields.Encode()))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r, nil
}

// callbackFields is a direct callback of docs/protocol.md A2 for refNo with status.
func callbackFields(refNo, orderNo string, status Status, code string) url.Values {
	f := url.Values{
		"status": {string(status)}, "orderNo": {orderNo}, "refNo": {refNo}, "amount": {"149.90"},
		"addCharge": {"0.00"}, "fpxTxnId": {"2611221030150987"}, "fpxTxnTime": {time.Now().In(MalaysiaTime()).Format(time.DateTime)},
		"agency": {"AGENCY01"}, "extraData": {"cart 7"},
	}
	if code != "-" {
		f.Set("fpx", `{"fpx_debit_auth_code":"`+code+`","fpx_buyer_name":"SITI"}`)
	}
	return f
}

// recorder counts hook calls.
type recorder struct {
	mu       sync.Mutex
	fulfils  []string // refNo of each successful Fulfil
	statuses []string // refNo|status of each successful OnStatus
	returns  int
	rejects  []error
	fail     atomic.Int32 // Fulfil fails this many more times
	delay    time.Duration
}

func (rec *recorder) handler(key Key) *CallbackHandler {
	return &CallbackHandler{
		Keys:   []Key{key},
		Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(ctx context.Context, cb *Callback) error {
			if !cb.Verified || cb.Status != StatusSuccess {
				panic("Fulfil called with an unverified or non-success callback")
			}
			time.Sleep(rec.delay)
			if rec.fail.Add(-1) >= 0 {
				return errors.New("warehouse down")
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.fulfils = append(rec.fulfils, cb.RefNo)
			return nil
		}),
		OnStatus: func(ctx context.Context, cb *Callback) error {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.statuses = append(rec.statuses, cb.RefNo+"|"+string(cb.Status))
			return nil
		},
		OnReturn: func(w http.ResponseWriter, r *http.Request, cb *Callback) {
			rec.mu.Lock()
			rec.returns++
			rec.mu.Unlock()
			fmt.Fprintf(w, "thank you; your order %s is being confirmed", cb.RefNo)
		},
		OnReject: func(r *http.Request, err error) {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.rejects = append(rec.rejects, err)
		},
	}
}

// serve runs one request through h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func signedRequest(t testing.TB, key Key, f url.Values) *http.Request {
	t.Helper()
	r, err := newCallbackRequest(key, "/paygate/return", f)
	require.NoError(t, err)
	return r
}

func rawRequest(t testing.TB, method, contentType, body string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, "/paygate/return", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestCallbackHandlerResponses(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	other := mustKey(t, "00000000-0000-0000-0000-000000000001")
	success := callbackFields("INV-1~cart 7", "GW1", StatusSuccess, "00")
	signed, err := signCallback(key, success)
	require.NoError(t, err)
	tampered := url.Values{}
	for k, v := range signed {
		tampered[k] = v
	}
	tampered.Set("amount", "1.00")
	badAmount, _ := signCallback(key, func() url.Values {
		f := callbackFields("INV-9", "GW9", StatusSuccess, "00")
		f.Set("amount", "lots")
		return f
	}())
	form := "application/x-www-form-urlencoded"

	tests := []struct {
		name     string
		req      func() *http.Request
		edit     func(h *CallbackHandler)
		code     int
		fulfils  int
		statuses int
		returns  int
		rejects  int
		bodyHas  string
		// check, when set, asserts more of the answer.
		check func(t *testing.T, w *httptest.ResponseRecorder)
	}{
		{name: "verified success fulfils", req: func() *http.Request { return signedRequest(t, key, success) }, code: 200, fulfils: 1},
		{name: "second key (rotation)", req: func() *http.Request { return signedRequest(t, key, success) }, edit: func(h *CallbackHandler) { h.Keys = []Key{other, key} }, code: 200, fulfils: 1},
		{name: "verified pending", req: func() *http.Request {
			return signedRequest(t, key, callbackFields("INV-2", "GW2", StatusPending, "09"))
		}, code: 200, statuses: 1},
		{name: "verified failed", req: func() *http.Request { return signedRequest(t, key, callbackFields("INV-3", "GW3", StatusFailed, "51")) }, code: 200, statuses: 1},
		{name: "verified unknown status", req: func() *http.Request { return signedRequest(t, key, callbackFields("INV-4", "GW4", "refunded", "00")) }, code: 200, statuses: 1},
		{name: "success without fpx (card)", req: func() *http.Request { return signedRequest(t, key, callbackFields("INV-5", "GW5", StatusSuccess, "-")) }, code: 200, fulfils: 1},
		{name: "success with a non-00 FPX code is fulfilled", req: func() *http.Request {
			return signedRequest(t, key, callbackFields("INV-6", "GW6", StatusSuccess, "51"))
		}, code: 200, fulfils: 1},
		{name: "success with an empty FPX code is fulfilled", req: func() *http.Request {
			return signedRequest(t, key, callbackFields("INV-6b", "GW6", StatusSuccess, ""))
		}, code: 200, fulfils: 1},
		{name: "pending without OnStatus: 200", req: func() *http.Request {
			return signedRequest(t, key, callbackFields("INV-7", "GW7", StatusPending, "09"))
		}, edit: func(h *CallbackHandler) { h.OnStatus = nil }, code: 200},
		{name: "unsigned success: browser page, never fulfils", req: func() *http.Request { r, _ := newReturnRequest("/r", success); return r }, code: 200, returns: 1, bodyHas: "being confirmed"},
		{name: "unsigned without OnReturn: 403", req: func() *http.Request { r, _ := newReturnRequest("/r", success); return r }, edit: func(h *CallbackHandler) { h.OnReturn = nil }, code: 403, rejects: 1},
		{name: "wrong key: 403", req: func() *http.Request { return signedRequest(t, other, success) }, code: 403, rejects: 1},
		{name: "signed over a different amount: 403", req: func() *http.Request { r, _ := newReturnRequest("/r", tampered); return r }, code: 403, rejects: 1},
		{name: "GET: 405", req: func() *http.Request { return rawRequest(t, http.MethodGet, "", "") }, code: 405,
			check: func(t *testing.T, w *httptest.ResponseRecorder) { require.Equal(t, "POST", w.Header().Get("Allow")) }},
		{name: "JSON body: 415", req: func() *http.Request {
			return rawRequest(t, http.MethodPost, "application/json", `{"status":"success"}`)
		}, code: 415, rejects: 1},
		{name: "no content type, verified: fulfilled", req: func() *http.Request { return rawRequest(t, http.MethodPost, "", signed.Encode()) }, code: 200, fulfils: 1},
		{name: "charset parameter accepted", req: func() *http.Request {
			return rawRequest(t, http.MethodPost, form+"; charset=UTF-8", signed.Encode())
		}, code: 200, fulfils: 1},
		{name: "too big: 413", req: func() *http.Request {
			return rawRequest(t, http.MethodPost, form, signed.Encode()+"&pad="+strings.Repeat("x", 70<<10))
		}, code: 413, rejects: 1},
		{name: "smaller limit: 413", req: func() *http.Request { return signedRequest(t, key, success) }, edit: func(h *CallbackHandler) { h.BodyLimit = 100 }, code: 413, rejects: 1},
		{name: "unsigned without refNo: 400, no browser page", req: func() *http.Request { return rawRequest(t, http.MethodPost, form, "status=success") }, code: 400, rejects: 1},
		{name: "unparsable: 400", req: func() *http.Request { return rawRequest(t, http.MethodPost, form, "status=%zz&signature=00") }, code: 400, rejects: 1},
		{name: "semicolon separator: 400", req: func() *http.Request { return rawRequest(t, http.MethodPost, form, signed.Encode()+";x=1") }, code: 400, rejects: 1},
		{name: "bad escape in a name: 400", req: func() *http.Request { return rawRequest(t, http.MethodPost, form, signed.Encode()+"&%4=1") }, code: 400, rejects: 1},
		{name: "verified with a malformed amount is fulfilled", req: func() *http.Request { r, _ := newReturnRequest("/r", badAmount); return r }, code: 200, fulfils: 1},
		{name: "verified without refNo: 400, the gateway retries", req: func() *http.Request {
			f := callbackFields("INV-10", "GW10", StatusSuccess, "00")
			f.Del("refNo")
			return signedRequest(t, key, f)
		}, code: 400, rejects: 1},
		{name: "no Fulfil: 500 so the gateway retries", req: func() *http.Request { return signedRequest(t, key, success) }, edit: func(h *CallbackHandler) { h.Fulfil = nil }, code: 500},
		{name: "no keys: 500", req: func() *http.Request { return signedRequest(t, key, success) }, edit: func(h *CallbackHandler) { h.Keys = nil }, code: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			h := rec.handler(key)
			if tt.edit != nil {
				tt.edit(h)
			}
			w := serve(h, tt.req())
			require.Equal(t, tt.code, w.Code, w.Body.String())
			require.Len(t, rec.fulfils, tt.fulfils)
			require.Len(t, rec.statuses, tt.statuses)
			require.Equal(t, tt.returns, rec.returns)
			require.Len(t, rec.rejects, tt.rejects)
			require.Contains(t, w.Body.String(), tt.bodyHas)
			if tt.check != nil {
				tt.check(t, w)
			}
		})
	}
}

// 200 concurrent identical success deliveries: Fulfil runs exactly once, every
// answer is 200 or 503.
func TestCallbackHandlerConcurrentDuplicates(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rec := &recorder{delay: 20 * time.Millisecond}
	h := rec.handler(key)
	f := callbackFields("INV-42", "GW42", StatusSuccess, "00")
	var wg sync.WaitGroup
	codes := make([]int, 200)
	start := make(chan struct{})
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := signedRequest(t, key, f)
			<-start
			codes[i] = serve(h, r).Code
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, []string{"INV-42"}, rec.fulfils)
	counts := map[int]int{}
	for _, c := range codes {
		counts[c]++
	}
	require.Subset(t, []int{200, 503}, keysOf(counts), "answers %v", counts)
	require.Positive(t, counts[200])
	// Retries after the dust settles are plain duplicates.
	require.Equal(t, 200, serve(h, signedRequest(t, key, f)).Code)
	require.Len(t, rec.fulfils, 1)
}

func keysOf(m map[int]int) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// Fulfil failing twice then succeeding: 500, 500, 200, one fulfilment.
func TestCallbackHandlerRetriesAfterFailure(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rec := &recorder{}
	rec.fail.Store(2)
	var logs bytes.Buffer
	h := rec.handler(key)
	h.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	f := callbackFields("INV-7", "GW7", StatusSuccess, "00")
	var codes []int
	for range 4 {
		codes = append(codes, serve(h, signedRequest(t, key, f)).Code)
	}
	require.Equal(t, []int{500, 500, 200, 200}, codes)
	require.Equal(t, []string{"INV-7"}, rec.fulfils)
	require.Contains(t, logs.String(), "warehouse down")
	require.NotContains(t, logs.String(), "signature=", "no body in logs")
}

// A panicking Fulfil is a failure (500) and the claim is released.
func TestCallbackHandlerHookPanics(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	calls := 0
	h := &CallbackHandler{Keys: []Key{key}, Fulfil: FulfilFunc(func(context.Context, *Callback) error {
		calls++
		if calls == 1 {
			panic("boom")
		}
		return nil
	})}
	f := callbackFields("INV-P", "GWP", StatusSuccess, "00")
	require.Equal(t, 500, serve(h, signedRequest(t, key, f)).Code)
	require.Equal(t, 200, serve(h, signedRequest(t, key, f)).Code)
	require.Equal(t, 2, calls)
}

// pending then success: OnStatus once, Fulfil once; a late pending after the
// success fulfils nothing more; retries of each are duplicates.
func TestCallbackHandlerStatusSequence(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	rec := &recorder{}
	h := rec.handler(key)
	for _, s := range []struct {
		status Status
		code   string
	}{{status: StatusPending, code: "09"}, {status: StatusPending, code: "09"}, {status: StatusSuccess, code: "00"}, {status: StatusSuccess, code: "00"}, {status: StatusPending, code: "99"}} {
		require.Equal(t, 200, serve(h, signedRequest(t, key, callbackFields("INV-8", "GW8", s.status, s.code))).Code)
	}
	require.Equal(t, []string{"INV-8"}, rec.fulfils)
	require.Equal(t, []string{"INV-8|pending"}, rec.statuses)

	// A different gateway order for the same refNo (a second attempt) does
	// not fulfil twice either.
	require.Equal(t, 200, serve(h, signedRequest(t, key, callbackFields("INV-8", "GW8-retry", StatusSuccess, "00"))).Code)
	require.Len(t, rec.fulfils, 1)
}

// A replica that crashed mid-fulfilment holds a claim until its lease ends;
// then a retry gets through.
func TestCallbackHandlerExpiredLease(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	dd := &MemoryDeduper{Now: clock}
	rec := &recorder{}
	h := rec.handler(key)
	h.Deduper, h.Lease = dd, time.Minute

	c, err := dd.Claim(context.Background(), "fulfil|INV-9", time.Minute) // the replica that crashed
	require.NoError(t, err)
	require.Equal(t, ClaimAcquired, c.State)
	f := callbackFields("INV-9", "GW9", StatusSuccess, "00")
	w := serve(h, signedRequest(t, key, f))
	require.Equal(t, 503, w.Code)
	require.Equal(t, "30", w.Header().Get("Retry-After"))
	require.Empty(t, rec.fulfils)

	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	require.Equal(t, 200, serve(h, signedRequest(t, key, f)).Code)
	require.Equal(t, []string{"INV-9"}, rec.fulfils)
}

// The handler's keys never print.
func TestCallbackHandlerNeverPrintsKeys(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	h := (&recorder{}).handler(key)
	for _, f := range []string{"%v", "%+v", "%#v"} {
		out := fmt.Sprintf(f, h)
		require.NotContains(t, out, "3f2504e0")
		require.NotContains(t, out, "[63 37 4 224")
	}
}

// FuzzCallbackHandler: for any body, the handler never panics and never
// calls Fulfil without a valid signature.
func FuzzCallbackHandler(f *testing.F) {
	key := mustKey(f, testKeyUUID)
	signed, _ := signCallback(key, callbackFields("INV-1", "GW1", StatusSuccess, "00"))
	f.Add(signed.Encode())
	f.Add(callbackFields("INV-1", "GW1", StatusSuccess, "00").Encode())
	f.Add("signature=0000000000000000&status=success&refNo=x")
	f.Add("%zz")
	f.Fuzz(func(t *testing.T, body string) {
		h := &CallbackHandler{
			Keys: []Key{key},
			Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error {
				if err := VerifyCallback(cb.Form, key); err != nil {
					t.Fatalf("Fulfil without a valid signature: %v", err)
				}
				if cb.Status != StatusSuccess {
					t.Fatalf("Fulfil for status %q", cb.Status)
				}
				return nil
			}),
			OnReturn: func(w http.ResponseWriter, _ *http.Request, _ *Callback) {},
		}
		w := serve(h, rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", body))
		require.Contains(t, []int{200, 400, 403, 413, 500, 503}, w.Code)
	})
}

// BenchmarkCallbackHandler times a verified duplicate (the common case: the
// gateway's retries) with a realistic 450-byte fpx against a bare handler
// that only parses the form and answers 200, interleaved in batches, and
// reports the ratio ("x/bare").
func BenchmarkCallbackHandler(b *testing.B) {
	key := mustKey(b, testKeyUUID)
	body := benchCallback(b, key).Encode()
	h := &CallbackHandler{Keys: []Key{key}, Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.WriteHeader(200)
	})
	serveBody := func(h http.Handler) func() {
		r := httptest.NewRequest(http.MethodPost, "/r", nil)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := &discardWriter{h: http.Header{}}
		return func() {
			// As a server's request: the body and its Content-Length.
			r.Body, r.ContentLength, r.PostForm, r.Form = io.NopCloser(strings.NewReader(body)), int64(len(body)), nil, nil
			w.code = 0
			h.ServeHTTP(w, r)
			if w.code != 200 {
				b.Fatal(w.code)
			}
		}
	}
	serveBody(h)() // the first delivery fulfils; the rest are duplicates
	b.Run("duplicate", func(b *testing.B) {
		b.ReportAllocs()
		run := serveBody(h)
		for i := 0; i < b.N; i++ {
			run()
		}
	})
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		run := serveBody(bare)
		for i := 0; i < b.N; i++ {
			run()
		}
	})
	b.Run("ratio", func(b *testing.B) {
		testbound.BenchRatios(b, 200, serveBody(h), testbound.RatioBaseline{Name: "bare", Fn: serveBody(bare)})
	})
	// A new event each time: the same signed body, but a Deduper that sees
	// every claim's key as new, so each delivery claims, runs Fulfil and
	// completes (MemoryDeduper's own cost included; completed keys are kept a
	// millisecond, so that the store stays small however long the run; the
	// replay bound is off, which a retention that short would break).
	fresh := &CallbackHandler{Keys: []Key{key}, Deduper: &freshKeys{MemoryDeduper: MemoryDeduper{Retention: time.Millisecond}}, MaxTxnAge: -1,
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { return nil })}
	b.Run("new-event", func(b *testing.B) {
		b.ReportAllocs()
		run := serveBody(fresh)
		for i := 0; i < b.N; i++ {
			run()
		}
	})
	b.Run("new-event-ratio", func(b *testing.B) {
		testbound.BenchRatios(b, 200, serveBody(fresh), testbound.RatioBaseline{Name: "bare", Fn: serveBody(bare)})
	})
}

// freshKeys is a MemoryDeduper on which every claim is of a key never seen:
// the handler's new-event path, in a benchmark.
type freshKeys struct {
	MemoryDeduper
	n int
}

func (d *freshKeys) key(key string) string { return key + "#" + strconv.Itoa(d.n) }

func (d *freshKeys) Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error) {
	d.n++
	return d.MemoryDeduper.Claim(ctx, d.key(key), lease)
}

func (d *freshKeys) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	return d.MemoryDeduper.Renew(ctx, d.key(key), token, lease)
}

func (d *freshKeys) Complete(ctx context.Context, key, token, result string) error {
	return d.MemoryDeduper.Complete(ctx, d.key(key), token, result)
}

func (d *freshKeys) Release(ctx context.Context, key, token string) error {
	return d.MemoryDeduper.Release(ctx, d.key(key), token)
}

// discardWriter is a ResponseWriter that keeps only the status code, so that
// the benchmarks time the handlers, not a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	return len(p), nil
}
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

// Every line of the callback path says where the event came from: the
// request's method and path (never its body), or a reconciliation's source.
func TestCallbackHandlerLogsSayWhere(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name   string
		origin func(t *testing.T) origin
		want   string
	}{
		{name: "callback", origin: func(t *testing.T) origin { return origin{r: signedRequest(t, key, url.Values{"a": {"b"}})} },
			want: "msg=x method=POST path=/paygate/return refNo=INV-1\n"},
		{name: "lookup", origin: func(*testing.T) origin { return origin{source: SourceLookup} }, want: "msg=x source=lookup refNo=INV-1\n"},
		{name: "report", origin: func(*testing.T) origin { return origin{source: SourceReport} }, want: "msg=x source=report refNo=INV-1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := &CallbackHandler{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
						return slog.Attr{}
					}
					return a
				},
			}))}
			// The origin's attributes come first, whatever the line's own.
			h.logAt(context.Background(), tc.origin(t), slog.LevelWarn, "x", "refNo", "INV-1")
			require.Equal(t, tc.want, logs.String())
		})
	}
	// Through ServeHTTP: a failing hook's line names the request.
	var logs bytes.Buffer
	h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { return errors.New("warehouse down") })}
	require.Equal(t, 500, serve(h, signedRequest(t, key, callbackFields("INV-L", "GWL", StatusSuccess, "00"))).Code)
	require.Contains(t, logs.String(), `method=POST path=/paygate/return refNo=INV-L`)
	require.NotContains(t, logs.String(), "signature=")
}

// A storm of every kind of event for the same refNos at once, each
// delivery retried while it is answered 503 as the gateway would: a
// success and its duplicates, a second payment under another orderNo,
// pending and failed. Whichever success is claimed first is fulfilled,
// once per refNo; the other orderNo goes to OnDoublePayment, once; each
// status reaches OnStatus once; Fulfil never sees anything but a verified
// success; every delivery ends in 200.
func TestCallbackHandlerMixedStorm(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var mu sync.Mutex
	fulfilled := map[string][]string{} // refNo: orderNos fulfilled
	doubles := map[string][]string{}   // refNo: orderNos sent to OnDoublePayment
	statuses := map[string]int{}       // refNo|orderNo|status: OnStatus calls
	h := &CallbackHandler{Keys: []Key{key}, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error {
			if !cb.Verified || cb.Status != StatusSuccess {
				return fmt.Errorf("Fulfil got %v verified=%v", cb.Status, cb.Verified)
			}
			mu.Lock()
			defer mu.Unlock()
			fulfilled[cb.RefNo] = append(fulfilled[cb.RefNo], cb.OrderNo)
			return nil
		}),
		OnDoublePayment: func(_ context.Context, cb *Callback, paid string) error {
			mu.Lock()
			defer mu.Unlock()
			doubles[cb.RefNo] = append(doubles[cb.RefNo], cb.OrderNo+"/"+paid)
			return nil
		},
		OnStatus: func(_ context.Context, cb *Callback) error {
			mu.Lock()
			defer mu.Unlock()
			statuses[cb.RefNo+"|"+cb.OrderNo+"|"+string(cb.Status)]++
			return nil
		},
	}
	const refNos, copies = 12, 3
	var deliveries []url.Values
	for i := range refNos {
		ref := fmt.Sprint("INV-S", i)
		for range copies {
			deliveries = append(deliveries,
				callbackFields(ref, "GW1", StatusSuccess, "00"),
				callbackFields(ref, "GW2", StatusSuccess, "00"),
				callbackFields(ref, "GW3", StatusPending, "09"),
				callbackFields(ref, "GW4", StatusFailed, "51"))
		}
	}
	codes := make([]int, len(deliveries))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, f := range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 2000 { // the gateway's retries, bounded
				if codes[i] = serve(h, signedRequest(t, key, f)).Code; codes[i] != http.StatusServiceUnavailable {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, c := range codes {
		require.Equal(t, http.StatusOK, c, "delivery %d (%v) within 2,000 tries", i, deliveries[i])
	}
	for i := range refNos {
		ref := fmt.Sprint("INV-S", i)
		require.Len(t, fulfilled[ref], 1, "%s fulfilled once", ref)
		paid := fulfilled[ref][0]
		other := map[string]string{"GW1": "GW2", "GW2": "GW1"}[paid]
		require.Equal(t, []string{other + "/" + paid}, doubles[ref], "%s: the other success is a second payment, once", ref)
		require.Equal(t, 1, statuses[ref+"|GW3|pending"], ref)
		require.Equal(t, 1, statuses[ref+"|GW4|failed"], ref)
	}
	require.Len(t, statuses, 2*refNos)
}

// The read deadline ReadTimeout sets on the connection is cleared once the
// body is read, so that it cannot cancel the request's context while the
// handler still runs. net/http clears it too once a body hits its end, but
// not for an empty body (its read for the next request is under way before
// the handler runs): there a deadline left set would cancel the request
// under a slow OnReject. OnReject waits up to eight ReadTimeouts for a
// cancellation that must not come (a real connection: no synctest; in
// parallel with the others, as it only waits).
func TestCallbackReadDeadlineClearedOnceRead(t *testing.T) {
	t.Parallel()
	key := mustKey(t, testKeyUUID)
	const readTimeout = 100 * time.Millisecond
	var cancelled atomic.Bool
	h := &CallbackHandler{Keys: []Key{key}, ReadTimeout: readTimeout, Logger: slog.New(slog.DiscardHandler),
		OnReturn: func(http.ResponseWriter, *http.Request, *Callback) {},
		OnReject: func(r *http.Request, _ error) {
			select {
			case <-r.Context().Done():
				cancelled.Store(true)
			case <-time.After(8 * readTimeout): // a bound, not a measure
			}
		}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Post(srv.URL+"/paygate/return", "application/x-www-form-urlencoded", http.NoBody)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.False(t, cancelled.Load(), "the request's context was cancelled under OnReject: the read deadline stayed")
}

// unsaidRetention is a Deduper that does not say how long it keeps a
// completed key.
type unsaidRetention struct{ d *MemoryDeduper }

func (u unsaidRetention) Claim(ctx context.Context, key string, lease time.Duration) (ClaimResult, error) {
	return u.d.Claim(ctx, key, lease)
}
func (u unsaidRetention) Renew(ctx context.Context, key, token string, lease time.Duration) error {
	return u.d.Renew(ctx, key, token, lease)
}
func (u unsaidRetention) Complete(ctx context.Context, key, token, result string) error {
	return u.d.Complete(ctx, key, token, result)
}
func (u unsaidRetention) Release(ctx context.Context, key, token string) error {
	return u.d.Release(ctx, key, token)
}

// A Deduper that forgets a completed event before the replay bound stops
// honouring its callback (MaxTxnAge plus a day) is refused at the first
// event, naming both settings, for every verified event; one that does
// not say its retention is served with a warning, once.
func TestCallbackHandlerRetentionAgainstTheReplayBound(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	day := 24 * time.Hour
	for _, tt := range []struct {
		name      string
		deduper   Deduper
		maxTxnAge time.Duration
		wantCode  int
		wantLog   string
	}{
		{name: "default retention, default bound", deduper: &MemoryDeduper{}, wantCode: http.StatusOK},
		{name: "7 days against the 30-day bound", deduper: &MemoryDeduper{Retention: 7 * day}, wantCode: http.StatusInternalServerError,
			wantLog: "keeps completed events for 168h0m0s, less than CallbackHandler.MaxTxnAge (720h0m0s) plus a day"},
		{name: "the bound itself, no day for the clock", deduper: &MemoryDeduper{Retention: 30 * day}, wantCode: http.StatusInternalServerError,
			wantLog: "raise the Deduper's retention (MemoryDeduper.Retention, pgstore.WithRetention) or lower CallbackHandler.MaxTxnAge"},
		{name: "the bound and a day", deduper: &MemoryDeduper{Retention: 31 * day}, wantCode: http.StatusOK},
		{name: "a 500-day bound against the default retention", deduper: &MemoryDeduper{}, maxTxnAge: 500 * day, wantCode: http.StatusInternalServerError,
			wantLog: "less than CallbackHandler.MaxTxnAge (12000h0m0s)"},
		{name: "no bound: the record alone", deduper: &MemoryDeduper{Retention: 2 * time.Second}, maxTxnAge: -1, wantCode: http.StatusOK},
		{name: "retention unsaid: warned", deduper: unsaidRetention{&MemoryDeduper{}}, wantCode: http.StatusOK,
			wantLog: "does not say how long it keeps completed events"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			var fulfils int
			h := &CallbackHandler{Keys: []Key{key}, Deduper: tt.deduper, MaxTxnAge: tt.maxTxnAge, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Fulfil: FulfilFunc(func(context.Context, *Callback) error { fulfils++; return nil })}
			for _, f := range []url.Values{callbackFields("INV-RT", "GW1", StatusPending, "09"), callbackFields("INV-RT", "GW1", StatusSuccess, "00")} {
				require.Equal(t, tt.wantCode, serve(h, signedRequest(t, key, f)).Code, logs.String())
			}
			require.Contains(t, logs.String(), tt.wantLog)
			if tt.wantLog != "" {
				require.Equal(t, 1, strings.Count(logs.String(), tt.wantLog), "said once, at the first event")
			}
			if tt.wantCode != http.StatusOK {
				require.Zero(t, fulfils)
			}
		})
	}
}
