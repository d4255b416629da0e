package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// replay rebuilds an order's callback from the lookup: a handler that
// already took it (from listen) answers the replay as a duplicate and
// fulfils nothing again; a fresh handler takes it once. The reference
// goes before or after the flags. An order that is not found, not yet
// paid, or asked for by its base reference when it has extra data, is
// refused with what to pass; nothing secret is printed.
func TestReplay(t *testing.T) {
	sb, _ := listenSandbox(t, []sandboxOrder{
		{ref: "PAID-1", extra: "cart", status: paygate.StatusSuccess},
		{ref: "BARE-1", status: paygate.StatusSuccess},
		{ref: "FAIL-1", status: paygate.StatusFailed},
		{ref: "OPEN-1"},
	})
	orderNo := map[string]string{}
	for _, o := range sb.Orders() {
		orderNo[o.RefNo] = o.OrderNo
	}
	shop := newTestShop(t, sb)
	code, _, errOut := runCLI(t, "", "listen", "-once", "-since", "today", "-forward-to", shop.srv.URL)
	require.Equal(t, exitOK, code, errOut)
	fulfilled, _ := shop.counts()
	require.Equal(t, map[string]int{"PAID-1": 1, "BARE-1": 1}, fulfilled)

	var outputs []string
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
		err  string
	}{
		{name: "a duplicate, REF then -to", args: []string{"replay", "PAID-1~cart", "-to", shop.srv.URL},
			code: exitOK, out: "replayed PAID-1~cart " + orderNo["PAID-1~cart"] + " success: 200 OK \"\"\n"},
		{name: "a duplicate, -to then REF", args: []string{"replay", "-to", shop.srv.URL, "BARE-1"},
			code: exitOK, out: "replayed BARE-1 " + orderNo["BARE-1"] + " success: 200 OK \"\"\n"},
		{name: "a failed payment", args: []string{"replay", "--to", shop.srv.URL, "FAIL-1"},
			code: exitOK, out: "replayed FAIL-1 " + orderNo["FAIL-1"] + " failed: 200 OK \"\"\n"},
		{name: "the base reference of an order with extra data", args: []string{"replay", "PAID-1", "-to", shop.srv.URL},
			code: exitInvalid, err: "paygate replay: PAID-1: no such order; if it was created with extra data, give refNo~extraData (the seller_order_no of paygate report)"},
		{name: "no such order", args: []string{"replay", "NOPE-1~x", "-to", shop.srv.URL},
			code: exitInvalid, err: "paygate replay: NOPE-1~x: no such order\n"},
		{name: "not paid yet", args: []string{"replay", "OPEN-1", "-to", shop.srv.URL},
			code: exitInvalid, err: "not paid yet: the gateway calls back once the buyer decides; nothing sent"},
		{name: "no REF", args: []string{"replay", "-to", shop.srv.URL}, code: exitUsage, err: "want one REF"},
		{name: "no -to", args: []string{"replay", "PAID-1~cart"}, code: exitUsage, err: "-to is required"},
		{name: "two REFs", args: []string{"replay", "A", "-to", shop.srv.URL, "B"}, code: exitUsage, err: `got "B" too`},
		{name: "a bad target", args: []string{"replay", "A", "-to", "mailto:x@y"}, code: exitUsage, err: "want an absolute http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			require.Equal(t, tc.code, code, errOut)
			require.Equal(t, tc.out, out)
			require.Contains(t, errOut, tc.err)
			outputs = append(outputs, out, errOut)
		})
	}
	fulfilled, _ = shop.counts()
	require.Equal(t, map[string]int{"PAID-1": 1, "BARE-1": 1}, fulfilled, "a replay fulfils nothing twice")

	fresh := newTestShop(t, sb)
	code, out, errOut := runCLI(t, "", "replay", "PAID-1~cart", "-to", fresh.srv.URL)
	require.Equal(t, exitOK, code, errOut)
	fulfilled, _ = fresh.counts()
	require.Equal(t, map[string]int{"PAID-1": 1}, fulfilled)
	shop.requireNoSecret(sb, append(outputs, out, errOut)...)
	fresh.requireNoSecret(sb, append(outputs, out, errOut)...)

	fresh.failNext.Store(1)
	code, out, _ = runCLI(t, "", "replay", "BARE-1", "-to", fresh.srv.URL)
	require.Equal(t, exitInvalid, code)
	require.Contains(t, out, "500 Internal Server Error")
}
