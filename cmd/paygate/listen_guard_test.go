package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// Every order number of a reference is forwarded, not only the first: two
// failed attempts at one order (the gateway takes a reference again once
// its order failed), and two successes under one reference at a gateway
// that takes a reference twice (a double payment, which the handler must
// see). Defect caught (issue 42): changes keyed by the reference alone,
// so that a second order number with the same status looks already
// forwarded.
func TestListenForwardsEachOrderNoOfAReference(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status paygate.Status
		opts   []gatewaytest.Option
	}{
		{name: "two failures", status: paygate.StatusFailed},
		{name: "two successes", status: paygate.StatusSuccess, opts: []gatewaytest.Option{gatewaytest.WithRepeatedRefNos()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := useSandbox(t, tc.opts...)
			client, err := sb.Client()
			require.NoError(t, err)
			shop := newTestShop(t, sb)
			for range 2 {
				_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "DUP-1", Amount: 2590, Email: "a@example.com", ReturnURL: shop.srv.URL})
				require.NoError(t, err)
				require.NoError(t, sb.Pay("DUP-1", tc.status))
			}
			sb.Settle()
			shop.mu.Lock()
			shop.forms = nil // the sandbox's own callbacks
			shop.mu.Unlock()
			var want []string
			for _, o := range sb.Orders() {
				want = append(want, "forwarded DUP-1 "+o.OrderNo+" "+string(tc.status)+": 200 OK")
			}
			require.Len(t, want, 2)

			code, out, errOut := runCLI(t, "", "listen", "-once", "-since", "today", "-forward-to", shop.srv.URL)
			require.Equal(t, exitOK, code, errOut)
			require.ElementsMatch(t, want, lines(out, "forwarded"), out)
			shop.mu.Lock()
			defer shop.mu.Unlock()
			require.Len(t, shop.forms, 2)
			require.NotEqual(t, shop.forms[0].Get("orderNo"), shop.forms[1].Get("orderNo"))
		})
	}
}
