package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// runCallback dispatches the callback subcommands.
func runCallback(e env, args []string) int {
	return dispatchSub(e, "callback", []command{
		{name: "send", run: runCallbackSend},
	}, args)
}

// runCallbackSend posts a test callback, signed with PAYGATE_API_KEY, to a
// merchant's returnUrl on this machine.
func runCallbackSend(e env, args []string) int {
	fs := newFlags(e, "callback send", "-url URL -refno REF [flags]",
		"Posts a direct callback (docs/protocol.md A2) signed with PAYGATE_API_KEY to a local returnUrl; -unsigned sends the browser's return instead.")
	target := fs.String("url", "", "the merchant's returnUrl (loopback only)")
	refNo := fs.String("refno", "", "refNo")
	orderNo := fs.String("orderno", "CLI-TEST-1", "orderNo")
	status := fs.String("status", "success", "status: success, pending or failed")
	amount := fs.String("amount", "1.00", "amount")
	code := fs.String("fpx-code", "", "fpx_debit_auth_code (default: 00, 09 or 51 by status)")
	unsigned := fs.Bool("unsigned", false, "send without a signature, as the buyer's browser does")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if st, missing := missingFlags(e, fs, "url", "refno"); missing {
		return st
	}
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" || !isLoopbackHost(u.Hostname()) {
		return fail(e, "-url %q: want an http(s) URL on this machine (loopback)", *target)
	}
	if _, err := paygate.ParseAmount(*amount); err != nil {
		return fail(e, "-amount: %v", err)
	}
	if *code == "" {
		*code = map[string]string{"success": "00", "pending": "09"}[*status]
		if *code == "" {
			*code = "51"
		}
	}
	fields := url.Values{
		"status": {*status}, "orderNo": {*orderNo}, "refNo": {*refNo}, "amount": {*amount}, "addCharge": {"0.00"},
		"fpxTxnId": {"CLI" + time.Now().Format("060102150405")}, "fpxTxnTime": {time.Now().Format("2006-01-02 15:04:05")},
		"agency": {envOr("", paygate.EnvAgency)}, "extraData": {""},
		"fpx": {fmt.Sprintf(`{"fpx_debit_auth_code":%q}`, *code)},
	}
	var req *http.Request
	if *unsigned {
		req, err = gatewaytest.NewReturnRequest(*target, fields)
	} else {
		key, ok := keyFromEnv(e)
		if !ok {
			return exitUsage
		}
		req, err = gatewaytest.NewCallbackRequest(key, *target, fields)
	}
	if err != nil {
		return fail(e, "%v", err)
	}
	// A redirect is answered, never followed: the callback goes to the
	// loopback -url only.
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := (&http.Client{Timeout: 30 * time.Second, CheckRedirect: noRedirects}).Do(req.WithContext(e.ctx))
	if err != nil {
		return failed(e, "callback send", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	fmt.Fprintf(e.stdout, "%d %s %q\n", resp.StatusCode, http.StatusText(resp.StatusCode), body)
	if resp.StatusCode/100 != 2 {
		return exitInvalid
	}
	return exitOK
}

// isLoopbackHost reports whether host names this machine.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
