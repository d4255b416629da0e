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
		{[]string{"lookup", "INV-1~cart 7"}, "refno=INV-1~cart+7"},
		{[]string{"lookup", "-by", "refno", "INV-1"}, "refno=INV-1"},
		{[]string{"lookup", "-by", "seller", "S-1"}, "fpx_seller_order_no=S-1"},
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
		{[]string{"report"}, "paygate report: -from is required: first day, YYYY-MM-DD\n"},
		{[]string{"report", "-from", "2026-11-01"}, "paygate report: -to is required: last day, YYYY-MM-DD\n"},
		{[]string{"report", "-from", "2026-11-01", "-to", "2026-11-02", "extra"}, `paygate report: unexpected argument "extra"`},
		{[]string{"lookup"}, "paygate lookup: want one REFERENCE, got 0 arguments\n"},
		{[]string{"sign"}, "paygate sign: give exactly one of -url and -form\n"},
		{[]string{"verify"}, "paygate verify: want one BODY (or - for standard input), got 0 arguments\n"},
		{[]string{"callback", "send", "-refno", "X"}, "paygate callback send: -url is required: the merchant's returnUrl (loopback only)\n"},
		{[]string{"callback", "send", "-url", "http://127.0.0.1:1/r"}, "paygate callback send: -refno is required: refNo\n"},
		{[]string{"reconcile"}, "paygate reconcile: want at least one REFNO"},
		{[]string{"webhook", "validate"}, "paygate webhook validate: want at least one FILE"},
		{[]string{"webhook", "send"}, "paygate webhook send: want one FILE"},
		{[]string{"ping", "extra"}, `paygate ping: unexpected argument "extra"`},
		{[]string{"version", "extra"}, `paygate version: unexpected argument "extra"`},
		{[]string{"sandbox", "order", "create", "-refno", "R"}, "paygate sandbox order create: -amount is required"},
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
		{"create", []string{"create", "-refno", "R-1", "-amount", "10.50", "-return-url", merchant.URL}, "", exitOK, "created R-1 (10.50); checkout page: " + sb.URL + "/checkout/", ""},
		{"create another", []string{"create", "-refno", "R-2", "-amount", "1", "-return-url", merchant.URL}, "", exitOK, "created R-2 (1.00)", ""},
		{"create without return URL", []string{"create", "-refno", "R-3", "-amount", "1"}, "", exitUsage, "", "paygate sandbox order create: -return-url is required"},
		{"settle", []string{"settle", "-refno", "R-1"}, "", exitOK, "R-1 10.50: success (orderNo ", ""},
		{"settle again", []string{"settle", "-refno", "R-1", "-status", "failed"}, "", exitInvalid, "", "HTTP 409: gatewaytest: order"},
		{"pending", []string{"settle", "-refno", "R-2", "-status", "pending"}, "", exitOK, "R-2 1.00: pending", ""},
		{"settle the pending", []string{"settle", "-refno", "R-2", "-status", "failed"}, "", exitOK, "R-2 1.00: failed", ""},
		{"unknown order", []string{"settle", "-refno", "NOPE"}, "", exitInvalid, "", "HTTP 404"},
		{"bad status", []string{"settle", "-refno", "R-1", "-status", "paid"}, "", exitUsage, "", `-status "paid"`},
		{"wrong token", []string{"settle", "-refno", "R-1"}, "sandbox.wrong", exitInvalid, "", "HTTP 401"},
		{"not the sandbox", []string{"settle", "-refno", "R-1", "-checkout-url", "https://pay.example"}, "", exitUsage, "", "for the sandbox only"},
		{"settle without refno", []string{"settle"}, "", exitUsage, "", "-refno is required"},
		{"unknown subcommand", []string{"cancel"}, "", exitUsage, "", `unknown subcommand "cancel"`},
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
