package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// sandbox -h shows the address the sandbox really listens on by default.
func TestSandboxHelpShowsItsAddress(t *testing.T) {
	code, _, errOut := runCLI(t, "", "sandbox", "-h")
	require.Equal(t, exitOK, code)
	require.Contains(t, errOut, "usage: paygate sandbox [-addr 127.0.0.1:0]")
	require.Contains(t, errOut, `(default "127.0.0.1:0")`)
	require.NotContains(t, errOut, "8085]", "the usage line names the default, not an example")
}

// lookup looks up by refNo unless -by seller says otherwise, as the
// top-level help says; both name the default the same way.
func TestLookupByRefNoByDefault(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"OK","fpxrequest":{"fpx_seller_order_no":"S-1","status":"success"}}`))
	}))
	defer srv.Close()
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_CHECKOUT_URL", "")
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	for _, tc := range []struct {
		args  []string
		query string
	}{
		{args: []string{"lookup", "INV-1~cart 7"}, query: "refno=INV-1~cart+7"},
		{args: []string{"lookup", "-by", "refno", "INV-1"}, query: "refno=INV-1"},
		{args: []string{"lookup", "-by", "seller", "S-1"}, query: "fpx_seller_order_no=S-1"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, `"status": "success"`)
		mu.Lock()
		require.Equal(t, tc.query, queries[len(queries)-1], "%v", tc.args)
		mu.Unlock()
	}
	_, _, help := runCLI(t, "", "-h")
	require.Contains(t, help, "lookup     one order by the refNo it was created with")
	_, _, help = runCLI(t, "", "lookup", "-h")
	require.Contains(t, help, `(default "refno")`)
}

// A missing required flag or argument is named on its own line before the
// usage, not left to the usage alone.
func TestMissingRequiredNamed(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"report"}, want: "paygate report: -from is required: first day, YYYY-MM-DD\n"},
		{args: []string{"report", "-from", "2026-11-01"}, want: "paygate report: -to is required: last day, YYYY-MM-DD\n"},
		{args: []string{"report", "-from", "2026-11-01", "-to", "2026-11-02", "extra"}, want: `paygate report: unexpected argument "extra"`},
		{args: []string{"lookup"}, want: "paygate lookup: want one REFERENCE, got 0 arguments\n"},
		{args: []string{"sign"}, want: "paygate sign: give exactly one of -url and -form\n"},
		{args: []string{"verify"}, want: "paygate verify: want one BODY (or - for standard input), got 0 arguments\n"},
		{args: []string{"callback", "send", "-refno", "X"}, want: "paygate callback send: -url is required: the merchant's returnUrl (loopback only)\n"},
		{args: []string{"callback", "send", "-url", "http://127.0.0.1:1/r"}, want: "paygate callback send: -refno is required: refNo\n"},
		{args: []string{"reconcile"}, want: "paygate reconcile: want at least one REFNO"},
		{args: []string{"webhook", "validate"}, want: "paygate webhook validate: want at least one FILE"},
		{args: []string{"webhook", "send"}, want: "paygate webhook send: want one FILE"},
		{args: []string{"ping", "extra"}, want: `paygate ping: unexpected argument "extra"`},
		{args: []string{"version", "extra"}, want: `paygate version: unexpected argument "extra"`},
		{args: []string{"sandbox", "order", "create", "-refno", "R"}, want: "paygate sandbox order create: -amount is required"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errOut, strings.Split(tc.want, "\n")[0]), "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, "usage: paygate", "%v: the usage follows", tc.args)
	}
}

// sandbox order create and settle make and decide an order on a running
// sandbox from the command line; the callback reaches the merchant; the
// admin route is called on loopback only, with the sandbox's AuthToken.
func TestSandboxOrder(t *testing.T) {
	sb := useSandbox(t)
	var mu sync.Mutex
	var callbacks []string
	merchant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		callbacks = append(callbacks, r.PostForm.Get("refNo")+" "+r.PostForm.Get("status"))
		mu.Unlock()
	}))
	defer merchant.Close()
	for _, tc := range []struct {
		name  string
		args  []string
		token string // "": the sandbox's
		code  int
		out   string
		err   string
	}{
		{name: "create", args: []string{"create", "-refno", "R-1", "-amount", "10.50", "-return-url", merchant.URL}, token: "", code: exitOK, out: "created R-1 (10.50); checkout page: " + sb.URL + "/checkout/", err: ""},
		{name: "create another", args: []string{"create", "-refno", "R-2", "-amount", "1", "-return-url", merchant.URL}, token: "", code: exitOK, out: "created R-2 (1.00)", err: ""},
		{name: "create without return URL", args: []string{"create", "-refno", "R-3", "-amount", "1"}, token: "", code: exitUsage, out: "", err: "paygate sandbox order create: -return-url is required"},
		{name: "settle", args: []string{"settle", "-refno", "R-1"}, token: "", code: exitOK, out: "R-1 10.50: success (orderNo ", err: ""},
		{name: "settle again", args: []string{"settle", "-refno", "R-1", "-status", "failed"}, token: "", code: exitInvalid, out: "", err: "HTTP 409: gatewaytest: order"},
		{name: "pending", args: []string{"settle", "-refno", "R-2", "-status", "pending"}, token: "", code: exitOK, out: "R-2 1.00: pending", err: ""},
		{name: "settle the pending", args: []string{"settle", "-refno", "R-2", "-status", "failed"}, token: "", code: exitOK, out: "R-2 1.00: failed", err: ""},
		{name: "unknown order", args: []string{"settle", "-refno", "NOPE"}, token: "", code: exitInvalid, out: "", err: "HTTP 404"},
		{name: "bad status", args: []string{"settle", "-refno", "R-1", "-status", "paid"}, token: "", code: exitUsage, out: "", err: `-status "paid"`},
		{name: "wrong token", args: []string{"settle", "-refno", "R-1"}, token: "sandbox.wrong", code: exitInvalid, out: "", err: "HTTP 401"},
		{name: "not the sandbox", args: []string{"settle", "-refno", "R-1", "-checkout-url", "https://pay.example"}, token: "", code: exitUsage, out: "", err: "for the sandbox only"},
		{name: "settle without refno", args: []string{"settle"}, token: "", code: exitUsage, out: "", err: "-refno is required"},
		{name: "unknown subcommand", args: []string{"cancel"}, token: "", code: exitUsage, out: "", err: `unknown subcommand "cancel"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.token != "" {
				t.Setenv("PAYGATE_AUTH_TOKEN", tc.token)
			}
			code, out, errOut := runCLI(t, "", append([]string{"sandbox", "order"}, tc.args...)...)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errOut)
			require.True(t, strings.HasPrefix(out, tc.out), "stdout: %s", out)
			require.Contains(t, errOut, tc.err)
		})
	}
	sb.Settle()
	mu.Lock()
	require.ElementsMatch(t, []string{"R-1 success", "R-2 pending", "R-2 failed"}, callbacks)
	mu.Unlock()
	code, _, errOut := runCLI(t, "", "sandbox", "order", "-h")
	require.Equal(t, exitOK, code)
	require.Contains(t, errOut, "usage: paygate sandbox order create")
	require.Contains(t, errOut, "usage: paygate sandbox order settle")
}
