package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

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
		{name: "create with extra data", args: []string{"create", "-refno", "R-4", "-extra", "cart 9's", "-amount", "1", "-return-url", merchant.URL}, token: "", code: exitOK, out: "created R-4~cart 9's (1.00)", err: ""},
		{name: "settle it by its base reference", args: []string{"settle", "-refno", "R-4"}, token: "", code: exitOK, out: "R-4~cart 9's 1.00: success", err: ""},
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
	require.ElementsMatch(t, []string{"R-1 success", "R-2 pending", "R-2 failed", "R-4 success"}, callbacks)
	mu.Unlock()
	code, _, errOut := runCLI(t, "", "sandbox", "order", "-h")
	require.Equal(t, exitOK, code)
	require.Contains(t, errOut, "usage: paygate sandbox order create")
	require.Contains(t, errOut, "usage: paygate sandbox order settle")
}

// The sandbox order commands name the URL's setting once: their messages
// named it with its flag, and cliText, which adds the flag to the
// variable's name, doubled it ("PAYGATE_CHECKOUT_URL (or -checkout-url)
// (or -checkout-url)").
func TestSandboxOrderURLErrorsNameTheSettingOnce(t *testing.T) {
	for _, tc := range []struct {
		name, url, want string
	}{
		{name: "unset", url: "", want: "is not set"},
		{name: "not loopback", url: "https://pay.example", want: "for the sandbox only"},
		{name: "not http", url: "file:///etc/passwd", want: "for the sandbox only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(paygate.EnvCheckoutURL, tc.url)
			for _, args := range [][]string{
				{"sandbox", "order", "create", "-refno", "R-1", "-amount", "1.00", "-return-url", "http://127.0.0.1:9/r"},
				{"sandbox", "order", "settle", "-refno", "R-1", "-status", "success"},
			} {
				code, _, errOut := runCLI(t, "", args...)
				require.Equal(t, exitUsage, code, errOut)
				require.Contains(t, errOut, tc.want)
				require.Equal(t, 1, strings.Count(errOut, "(or -checkout-url)"), errOut)
			}
		})
	}
}
