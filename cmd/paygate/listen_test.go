package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// testShop is a merchant's real handler (paygate.CallbackHandler with its
// in-memory Deduper) behind a server that records every form it is sent
// and can answer 500 to the next few requests before the handler sees
// them.
type testShop struct {
	t   *testing.T
	srv *httptest.Server
	// failNext is how many requests to answer 500 before the handler.
	failNext atomic.Int32

	mu         sync.Mutex
	fulfilled  map[string]int // fulfilments by base refNo
	events     []string       // "refNo status" of every event the handler acted on
	signatures []string       // every signature received
	forms      []url.Values   // every form received
	// fulfil, when set, is told of each fulfilment.
	fulfil chan string
}

// newTestShop starts a shop whose handler trusts sb's key.
func newTestShop(t *testing.T, sb *gatewaytest.Server) *testShop {
	s := &testShop{t: t, fulfilled: map[string]int{}}
	h := &paygate.CallbackHandler{
		Keys: []paygate.Key{sb.Key()},
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			s.mu.Lock()
			s.fulfilled[cb.RefNo]++
			s.events = append(s.events, cb.RefNo+" "+string(cb.Status))
			ch := s.fulfil
			s.mu.Unlock()
			if ch != nil {
				ch <- cb.RefNo
			}
			return nil
		}),
		OnStatus: func(_ context.Context, cb *paygate.Callback) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.events = append(s.events, cb.RefNo+" "+string(cb.Status))
			return nil
		},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		s.mu.Lock()
		s.signatures = append(s.signatures, r.PostForm.Get("signature"))
		s.forms = append(s.forms, r.PostForm)
		s.mu.Unlock()
		if s.failNext.Add(-1) >= 0 {
			http.Error(w, "down for a moment", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	s.failNext.Store(0)
	t.Cleanup(s.srv.Close)
	return s
}

// counts returns the fulfilments by base refNo and the events, as now.
func (s *testShop) counts() (map[string]int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := make(map[string]int, len(s.fulfilled))
	for k, v := range s.fulfilled {
		f[k] = v
	}
	return f, append([]string(nil), s.events...)
}

// requireNoSecret checks that no credential of sb, nor any signature the
// shop received, is in the output.
func (s *testShop) requireNoSecret(sb *gatewaytest.Server, outputs ...string) {
	s.t.Helper()
	s.mu.Lock()
	secrets := append([]string{sb.APIKey, strings.ReplaceAll(sb.APIKey, "-", ""), sb.AuthToken}, s.signatures...)
	s.mu.Unlock()
	for _, out := range outputs {
		for _, secret := range secrets {
			if secret != "" {
				require.NotContains(s.t, out, secret)
			}
		}
	}
}

// sandboxOrder is an order a test makes and pays (status "" leaves it
// unpaid).
type sandboxOrder struct {
	ref, extra string
	status     paygate.Status
}

// listenSandbox starts a sandbox whose own callbacks go to a sink that
// keeps each signed one by order number, makes the orders, pays them, and
// waits until the sandbox's callbacks are done.
func listenSandbox(t *testing.T, orders []sandboxOrder, opts ...gatewaytest.Option) (*gatewaytest.Server, map[string]url.Values) {
	t.Helper()
	var mu sync.Mutex
	sent := map[string]url.Values{}
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("signature") != "" {
			mu.Lock()
			sent[r.PostForm.Get("orderNo")] = r.PostForm
			mu.Unlock()
		}
	}))
	t.Cleanup(sink.Close)
	sb := useSandbox(t, opts...)
	client, err := sb.Client()
	require.NoError(t, err)
	for _, o := range orders {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: o.ref, ExtraData: o.extra, Amount: 2590, Email: "a@example.com", ReturnURL: sink.URL})
		require.NoError(t, err)
		if o.status != "" {
			require.NoError(t, sb.Pay(o.ref, o.status))
		}
	}
	sb.Settle()
	return sb, sent
}

// lines are the lines of out that start with prefix.
func lines(out, prefix string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			got = append(got, l)
		}
	}
	return got
}

// listen -once with a state file, three times: every change is forwarded
// once (a paid order fulfilled exactly once, a declined and a pending one
// told once), an unpaid order is not forwarded until it is paid, a pending
// order's success is forwarded as the change it is, and no credential or
// signature is printed.
func TestListenForwardsEachChangeOnce(t *testing.T) {
	sb, _ := listenSandbox(t, []sandboxOrder{
		{ref: "PAID-1", extra: "cart", status: paygate.StatusSuccess},
		{ref: "FAIL-1", status: paygate.StatusFailed},
		{ref: "LATE-1", status: paygate.StatusPending},
		{ref: "OPEN-1"},
	})
	shop := newTestShop(t, sb)
	state := filepath.Join(t.TempDir(), "listen.json")
	args := []string{"listen", "-once", "-since", "today", "-state", state, "-forward-to", shop.srv.URL + "/paygate/callback"}
	orderNo := map[string]string{}
	for _, o := range sb.Orders() {
		orderNo[o.RefNo] = o.OrderNo
	}

	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, errOut)
	require.ElementsMatch(t, []string{
		"forwarded PAID-1~cart " + orderNo["PAID-1~cart"] + " success: 200 OK",
		"forwarded FAIL-1 " + orderNo["FAIL-1"] + " failed: 200 OK",
		"forwarded LATE-1 " + orderNo["LATE-1"] + " pending: 200 OK",
	}, lines(out, "forwarded"), out)
	require.NotContains(t, out, "OPEN-1", "an unpaid order is not called back")
	fulfilled, events := shop.counts()
	require.Equal(t, map[string]int{"PAID-1": 1}, fulfilled)
	require.ElementsMatch(t, []string{"PAID-1 success", "FAIL-1 failed", "LATE-1 pending"}, events)

	code, out, errOut = runCLI(t, "", args...)
	require.Equal(t, exitOK, code, errOut)
	require.Empty(t, out, "nothing changed: nothing forwarded")

	require.NoError(t, sb.Complete("LATE-1", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("OPEN-1", paygate.StatusSuccess))
	sb.Settle()
	code, out2, errOut2 := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, errOut2)
	require.ElementsMatch(t, []string{
		"forwarded LATE-1 " + orderNo["LATE-1"] + " success: 200 OK",
		"forwarded OPEN-1 " + orderNo["OPEN-1"] + " success: 200 OK",
	}, lines(out2, "forwarded"), out2)
	fulfilled, _ = shop.counts()
	require.Equal(t, map[string]int{"PAID-1": 1, "LATE-1": 1, "OPEN-1": 1}, fulfilled)
	shop.requireNoSecret(sb, out, errOut, out2, errOut2)
	st, err := os.ReadFile(state)
	require.NoError(t, err)
	shop.requireNoSecret(sb, string(st))
}

// The callback listen forwards for an order is the one the sandbox sent
// for it, field for field, but for what the report does not carry
// (addCharge; the fpx detail beyond fpx_debit_auth_code; fpxTxnTime, the
// record's time).
func TestListenForwardsTheGatewaysCallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []gatewaytest.Option
	}{
		{name: "sandbox rows"},
		{name: "FPX rows", opts: []gatewaytest.Option{gatewaytest.WithReportRows(gatewaytest.RowsFPX)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, sent := listenSandbox(t, []sandboxOrder{
				{ref: "PAID-1", extra: "cart", status: paygate.StatusSuccess},
				{ref: "FAIL-1", status: paygate.StatusFailed},
			}, tc.opts...)
			shop := newTestShop(t, sb)
			code, _, errOut := runCLI(t, "", "listen", "-once", "-since", "today", "-forward-to", shop.srv.URL)
			require.Equal(t, exitOK, code, errOut)
			shop.mu.Lock()
			forms := shop.forms
			shop.mu.Unlock()
			require.Len(t, forms, 2)
			for _, got := range forms {
				want := sent[got.Get("orderNo")]
				require.NotNil(t, want, got)
				for _, f := range []string{"status", "orderNo", "refNo", "extraData", "amount", "fpxTxnId", "agency"} {
					require.Equal(t, want.Get(f), got.Get(f), f)
				}
				require.Contains(t, want.Get("fpx"), strings.Trim(got.Get("fpx"), "{}"))
				require.NoError(t, paygate.VerifyCallback(got, sb.Key()))
			}
		})
	}
}

// A handler that fails (500, or no answer at all) does not lose the
// change: it is forwarded at the next poll, within one run (in memory)
// and across runs (-state), and fulfilled once.
func TestListenRetriesUntilTheHandlerTakesIt(t *testing.T) {
	t.Run("across runs, -state", func(t *testing.T) {
		sb, _ := listenSandbox(t, []sandboxOrder{{ref: "PAID-1", status: paygate.StatusSuccess}})
		shop := newTestShop(t, sb)
		shop.failNext.Store(1)
		args := []string{"listen", "-once", "-since", "today", "-state", filepath.Join(t.TempDir(), "s.json"), "-forward-to", shop.srv.URL}
		code, out, errOut := runCLI(t, "", args...)
		require.Equal(t, exitInvalid, code)
		require.Contains(t, out, "not forwarded PAID-1 ")
		require.Contains(t, out, ": 500 Internal Server Error (attempt 1; again at the next poll)")
		require.Contains(t, errOut, "1 changes not delivered (the next run with this -state forwards them): [PAID-1]")
		code, out, errOut = runCLI(t, "", args...)
		require.Equal(t, exitOK, code, errOut)
		require.Len(t, lines(out, "forwarded PAID-1 "), 1)
		fulfilled, _ := shop.counts()
		require.Equal(t, map[string]int{"PAID-1": 1}, fulfilled)
	})
	t.Run("handler down, then up", func(t *testing.T) {
		sb, _ := listenSandbox(t, []sandboxOrder{{ref: "PAID-1", status: paygate.StatusSuccess}})
		shop := newTestShop(t, sb)
		down := shop.srv.URL
		shop.srv.Close()
		args := []string{"listen", "-once", "-since", "today", "-state", filepath.Join(t.TempDir(), "s.json"), "-forward-to", down}
		code, out, _ := runCLI(t, "", args...)
		require.Equal(t, exitInvalid, code)
		require.Contains(t, out, "not forwarded PAID-1 ")
		up := newTestShop(t, sb)
		args[len(args)-1] = up.srv.URL
		code, out, errOut := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, errOut)
		require.Len(t, lines(out, "forwarded PAID-1 "), 1)
		fulfilled, _ := up.counts()
		require.Equal(t, map[string]int{"PAID-1": 1}, fulfilled)
	})
	t.Run("within one run, polling", func(t *testing.T) {
		sb, _ := listenSandbox(t, []sandboxOrder{{ref: "PAID-1", status: paygate.StatusSuccess}})
		shop := newTestShop(t, sb)
		shop.failNext.Store(2)
		shop.fulfil = make(chan string, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errOut syncBuffer
		done := make(chan int)
		go func() {
			done <- dispatch(env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errOut},
				[]string{"listen", "-since", "today", "-interval", "1ms", "-forward-to", shop.srv.URL})
		}()
		select {
		case ref := <-shop.fulfil:
			require.Equal(t, "PAID-1", ref)
		case <-time.After(time.Minute): // a guard against a hang, not a timing assertion
			t.Fatal("never fulfilled")
		}
		cancel()
		require.Equal(t, exitOK, <-done, errOut.String())
		require.Len(t, lines(out.String(), "not forwarded PAID-1 "), 2)
		require.Len(t, lines(out.String(), "forwarded PAID-1 "), 1)
		fulfilled, _ := shop.counts()
		require.Equal(t, map[string]int{"PAID-1": 1}, fulfilled)
		shop.requireNoSecret(sb, out.String(), errOut.String())
	})
}

// Without -since and without a state file, the first poll is a baseline:
// the orders already in the report are noted, not forwarded; the changes
// after it are.
func TestListenBaseline(t *testing.T) {
	sb, _ := listenSandbox(t, []sandboxOrder{{ref: "OLD-1", status: paygate.StatusSuccess}, {ref: "NEW-1"}})
	shop := newTestShop(t, sb)
	args := []string{"listen", "-once", "-state", filepath.Join(t.TempDir(), "s.json"), "-forward-to", shop.srv.URL}
	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "baseline: 1 orders already in the report, not forwarded (-since DAY forwards them)")
	require.NoError(t, sb.Pay("NEW-1", paygate.StatusSuccess))
	sb.Settle()
	code, out, errOut = runCLI(t, "", args...)
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, errOut, "baseline")
	require.Equal(t, []string{"forwarded NEW-1"}, func() []string {
		var got []string
		for _, l := range lines(out, "forwarded") {
			got = append(got, strings.Join(strings.Fields(l)[:2], " "))
		}
		return got
	}())
	fulfilled, _ := shop.counts()
	require.Equal(t, map[string]int{"NEW-1": 1}, fulfilled)
}

// A record the handler must not take on the gateway's word is held back,
// said once, and not forwarded: here another agency than the client's.
func TestListenHoldsBack(t *testing.T) {
	sb, _ := listenSandbox(t, []sandboxOrder{{ref: "PAID-1", status: paygate.StatusSuccess}})
	shop := newTestShop(t, sb)
	code, out, errOut := runCLI(t, "", "listen", "-once", "-since", "today", "-agency", "OTHER", "-forward-to", shop.srv.URL)
	require.Equal(t, exitOK, code, errOut)
	require.Len(t, lines(out, "held back PAID-1 "), 1, out)
	require.Contains(t, out, "another agency than PAYGATE_AGENCY's; not forwarded (paygate lookup PAID-1 shows the record)")
	fulfilled, events := shop.counts()
	require.Empty(t, fulfilled)
	require.Empty(t, events)
}

// listen never follows a redirect: the signed callback goes to
// -forward-to only, and a redirect is not a delivery.
func TestListenDoesNotFollowRedirects(t *testing.T) {
	listenSandbox(t, []sandboxOrder{{ref: "PAID-1", status: paygate.StatusSuccess}})
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer shop.Close()
	code, out, _ := runCLI(t, "", "listen", "-once", "-since", "today", "-forward-to", shop.URL)
	require.Equal(t, exitInvalid, code)
	require.Contains(t, out, "307 Temporary Redirect (a redirect: not followed) (attempt 1")
	require.Zero(t, elsewhere.Load())
}

// listen's command line: what is required, what is refused, and that
// each is a usage or configuration error (exit 2) before anything is
// sent.
func TestListenUsage(t *testing.T) {
	sb := useSandbox(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"listen"}, want: "-forward-to is required"},
		{args: []string{"listen", "-forward-to", "ftp://x"}, want: `-forward-to "ftp://x": want an absolute http(s) URL`},
		{args: []string{"listen", "-forward-to", "localhost:8080"}, want: "want an absolute http(s) URL"},
		{args: []string{"listen", "-forward-to", "http://127.0.0.1:1", "-since", "last week"}, want: `-since "last week"`},
		{args: []string{"listen", "-forward-to", "http://127.0.0.1:1", "-interval", "0s"}, want: "want more than zero"},
		{args: []string{"listen", "-forward-to", "http://127.0.0.1:1", "extra"}, want: `unexpected argument "extra"`},
		{args: []string{"listen", "-forward-to", "http://127.0.0.1:1", "-state", "/nonexistent-dir/s.json", "-once"}, want: "-state"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		require.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, tc.want, tc.args)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"forwarded":[{"refNo":"A","status":"paid"}]}`), 0o600))
	code, _, errOut := runCLI(t, "", "listen", "-once", "-state", bad, "-forward-to", "http://127.0.0.1:1")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "not a state file paygate listen wrote")
	t.Setenv("PAYGATE_API_KEY", "")
	code, _, errOut = runCLI(t, "", "listen", "-once", "-forward-to", "http://127.0.0.1:1")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "PAYGATE_API_KEY")
	t.Setenv("PAYGATE_API_KEY", sb.APIKey)
	t.Setenv("PAYGATE_AUTH_TOKEN", "not-the-token-0123456789")
	code, out, errOut := runCLI(t, "", "listen", "-once", "-since", "today", "-forward-to", "http://127.0.0.1:1")
	require.Equal(t, exitInvalid, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "the report failed, read again at the next poll")
	require.NotContains(t, errOut+out, "not-the-token-0123456789")
	require.NotContains(t, errOut+out, sb.APIKey)
}

// A forward target off this machine over plain http is warned of.
func TestForwardTarget(t *testing.T) {
	for _, tc := range []struct {
		in, warning string
		bad         bool
	}{
		{in: "http://localhost:8080/cb"},
		{in: "http://127.0.0.1:8080/cb"},
		{in: "http://[::1]:8080/cb"},
		{in: "https://shop.example/cb"},
		{in: "http://shop.example/cb", warning: "shop.example is not this machine"},
		{in: "ftp://shop.example/cb", bad: true},
		{in: "/cb", bad: true},
		{in: "http://%zz", bad: true},
	} {
		_, warning, err := forwardTarget("-to", tc.in)
		require.Equal(t, tc.bad, err != nil, tc.in)
		if tc.warning == "" {
			require.Empty(t, warning, tc.in)
		} else {
			require.Contains(t, warning, tc.warning, tc.in)
		}
	}
}

// The answer of a handler that echoes its request never shows the
// signature.
func TestForwardScrubsTheSignature(t *testing.T) {
	key, err := paygate.ParseKey(testKey)
	require.NoError(t, err)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		_, _ = w.Write(b.Bytes())
	}))
	defer echo.Close()
	form := url.Values{"status": {"success"}, "refNo": {"INV-1"}}
	signed, err := gatewaytest.SignCallback(key, form)
	require.NoError(t, err)
	ans, err := newForwarder(key, echo.URL, time.Minute).post(context.Background(), form)
	require.NoError(t, err)
	require.True(t, ans.ok())
	require.NotContains(t, ans.body, signed.Get("signature"))
	require.Contains(t, ans.body, "signature=[signature]")
}
