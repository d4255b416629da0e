package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// runSandboxOrder dispatches `paygate sandbox order create|settle`, which
// act on a running sandbox (`paygate sandbox`) through the PAYGATE_*
// variables it printed.
func runSandboxOrder(e env, args []string) int {
	return dispatchSub(e, "sandbox order", []command{
		{name: "create", run: runSandboxOrderCreate},
		{name: "settle", run: runSandboxOrderSettle},
	}, args)
}

// runSandboxOrderCreate creates an order on a running sandbox the way a
// merchant's server does: Client.CreateOrder, signed with PAYGATE_API_KEY.
func runSandboxOrderCreate(e env, args []string) int {
	fs := newFlags(e, "sandbox order create", "-refno REF [-extra DATA] -amount 10.00 -return-url URL [-email ADDR] [flags]",
		"Creates an order on a running sandbox (paygate sandbox; its PAYGATE_* lines exported) as a merchant's server does, signed with PAYGATE_API_KEY, and prints its checkout page.")
	refNo := fs.String("refno", "", "the merchant's reference (required)")
	extra := fs.String("extra", "", "extra data sent with the reference: the order is created as refNo~extra")
	amount := fs.String("amount", "", "the amount in ringgit, e.g. 10.00 (required)")
	returnURL := fs.String("return-url", "", "where the sandbox posts the callbacks, e.g. http://127.0.0.1:8080/paygate/callback (required)")
	email := fs.String("email", "buyer@example.com", "the buyer's e-mail address")
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if st, missing := missingFlags(e, fs, "refno", "amount", "return-url"); missing {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (flags come before arguments)", fs.Arg(0))
	}
	amt, err := paygate.ParseAmount(*amount)
	if err != nil {
		return fail(e, "-amount: %v", err)
	}
	base, st := sandboxURL(e, *cf.checkoutURL)
	if st != exitOK {
		return st
	}
	*cf.checkoutURL = base
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	o := paygate.Order{RefNo: *refNo, ExtraData: *extra, Amount: amt, Email: *email, ReturnURL: *returnURL}
	res, err := client.CreateOrder(e.ctx, o)
	if err != nil {
		return failed(e, "sandbox order create", err)
	}
	created := o.RefNo
	if o.ExtraData != "" {
		created += "~" + o.ExtraData
	}
	fmt.Fprintf(e.stdout, "created %s (%s); checkout page: %s\n", created, amt, res.Location)
	return exitOK
}

// runSandboxOrderSettle decides or settles an order of a running sandbox
// through its admin route (gatewaytest.AdminSettlePath), which exists in
// the sandbox only.
func runSandboxOrderSettle(e env, args []string) int {
	fs := newFlags(e, "sandbox order settle", "-refno REF [-status success|failed|pending] [-checkout-url URL]",
		"Decides a sandbox order as the buyer's choice does (or settles a pending one as success or failed); the sandbox then posts the signed callback to the order's returnUrl. Sandbox only: it calls the sandbox's admin route on loopback with PAYGATE_AUTH_TOKEN.")
	refNo := fs.String("refno", "", "the order's refNo as sent, or its base reference (required)")
	status := fs.String("status", "success", "success, failed or pending")
	checkoutURL := fs.String("checkout-url", "", "the sandbox's URL (default $PAYGATE_CHECKOUT_URL)")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if st, missing := missingFlags(e, fs, "refno"); missing {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (flags come before arguments)", fs.Arg(0))
	}
	if !paygate.Status(*status).Valid() {
		return fail(e, "-status %q: want success, failed or pending", *status)
	}
	base, st := sandboxURL(e, *checkoutURL)
	if st != exitOK {
		return st
	}
	token := os.Getenv(paygate.EnvAuthToken)
	if token == "" {
		return fail(e, "%s is not set (the sandbox prints it)", paygate.EnvAuthToken)
	}
	form := url.Values{"refNo": {*refNo}, "status": {*status}}
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, base+gatewaytest.AdminSettlePath, strings.NewReader(form.Encode()))
	if err != nil {
		return fail(e, "%v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return failed(e, "sandbox order settle", err)
	}
	defer resp.Body.Close()
	var answer struct {
		Status string                 `json:"status"`
		Error  string                 `json:"error"`
		Order  gatewaytest.AdminOrder `json:"order"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&answer); err != nil {
		return failed(e, "sandbox order settle", fmt.Errorf("HTTP %d, not the sandbox's answer: %w", resp.StatusCode, err))
	}
	if resp.StatusCode != http.StatusOK {
		return failed(e, "sandbox order settle", fmt.Errorf("HTTP %d: %s", resp.StatusCode, answer.Error))
	}
	o := answer.Order
	fmt.Fprintf(e.stdout, "%s %s: %s (orderNo %s, fpx_debit_auth_code %s); the callback goes to its returnUrl\n", o.RefNo, o.Amount, o.Status, o.OrderNo, o.FPXCode)
	return exitOK
}

// sandboxURL is the running sandbox's URL: flag, else
// PAYGATE_CHECKOUT_URL; only a loopback http(s) URL is accepted, since the
// commands it serves exist for the sandbox only.
func sandboxURL(e env, flagValue string) (string, int) {
	raw := envOr(flagValue, paygate.EnvCheckoutURL)
	if raw == "" {
		return "", fail(e, "%s is not set: run paygate sandbox and export what it prints", paygate.EnvCheckoutURL) // cliText names the flag
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !isLoopbackHost(u.Hostname()) {
		return "", fail(e, "%s %q: want the sandbox's loopback URL (these commands are for the sandbox only)", paygate.EnvCheckoutURL, raw)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"), exitOK
}
