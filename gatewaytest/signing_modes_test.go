package gatewaytest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// A sandbox that checks POSTs signed with their path accepts a client with
// WithPOSTSignedWithPath and refuses the protocol's default, and the other
// way round: the two rules are told apart.
func TestPOSTSigningModes(t *testing.T) {
	for _, tt := range []struct {
		name           string
		sandboxPath    bool
		clientPath     bool
		wantOrder, qrc int
	}{
		{name: "both the protocol's rule", sandboxPath: false, clientPath: false, wantOrder: http.StatusSeeOther, qrc: http.StatusOK},
		{name: "both with the path", sandboxPath: true, clientPath: true, wantOrder: http.StatusSeeOther, qrc: http.StatusOK},
		{name: "client with path, sandbox without", sandboxPath: false, clientPath: true, wantOrder: http.StatusForbidden, qrc: http.StatusForbidden},
		{name: "client without path, sandbox with", sandboxPath: true, clientPath: false, wantOrder: http.StatusForbidden, qrc: http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.sandboxPath {
				opts = append(opts, WithPOSTSignedWithPath())
			}
			sb := newSandbox(t, opts...)
			var copts []paygate.Option
			if tt.clientPath {
				copts = append(copts, paygate.WithPOSTSignedWithPath())
			}
			client, err := sb.Client(copts...)
			require.NoError(t, err)
			order := paygate.Order{RefNo: "INV-P", Amount: 1000, Email: "a@example.com", ReturnURL: "http://127.0.0.1:1/return"}
			res, err := client.CreateOrder(context.Background(), order)
			if tt.wantOrder == http.StatusSeeOther {
				require.NoError(t, err)
				require.Equal(t, tt.wantOrder, res.StatusCode)
			} else {
				var apiErr *paygate.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, tt.wantOrder, apiErr.StatusCode)
			}
			_, err = client.GenerateQR(context.Background(), paygate.QRRequest{RefNo: "INV-Q", Amount: 1000, Category: "fpx"})
			if tt.qrc == http.StatusOK {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, paygate.ErrUnauthorized)
			}
		})
	}
}

// Unsigned orders (a client without an API key) are accepted only by a
// sandbox told to, and a present signature must still verify there.
func TestUnsignedOrders(t *testing.T) {
	for _, accept := range []bool{false, true} {
		var opts []Option
		if accept {
			opts = append(opts, WithUnsignedOrders())
		}
		sb := newSandbox(t, opts...)
		client, err := paygate.NewClient(paygate.WithAgency(sb.Agency), paygate.WithCheckoutURL(sb.URL))
		require.NoError(t, err)
		order := paygate.Order{RefNo: "INV-U", Amount: 1000, Email: "a@example.com", ReturnURL: "http://127.0.0.1:1/return"}
		res, err := client.CreateOrder(context.Background(), order)
		if accept {
			require.NoError(t, err)
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
		} else {
			require.ErrorIs(t, err, paygate.ErrUnauthorized)
		}
		form, err := client.CheckoutForm(order)
		require.NoError(t, err)
		form.Fields.Set("signature", "0000000000000000")
		form.Fields.Set("exp", "9999999999")
		resp, err := http.PostForm(form.Action, form.Fields)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "a wrong signature is refused even where unsigned orders are accepted")
	}
}

// A CheckoutForm goes through the sandbox as a browser would post it; the
// browser's return is available without scraping HTML.
func TestSubmitAndBrowserReturn(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, err := sb.Client()
	require.NoError(t, err)
	form, err := client.CheckoutForm(m.order("INV-B"))
	require.NoError(t, err)
	co, err := sb.Submit(form)
	require.NoError(t, err)
	require.Equal(t, "INV-B~cart", co.RefNo)
	require.True(t, strings.HasPrefix(co.PageURL, sb.URL+"/checkout/"+co.OrderNo))
	_, _, err = sb.BrowserReturn(co.OrderNo)
	require.ErrorContains(t, err, "not decided")
	require.NoError(t, sb.Pay(co.RefNo, paygate.StatusSuccess))
	sb.Settle()
	target, fields, err := sb.BrowserReturn(co.OrderNo)
	require.NoError(t, err)
	require.Equal(t, m.srv.URL+"/return", target)
	require.False(t, fields.Has("signature"), "display only")
	resp, err := http.PostForm(target, fields)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 1, m.returns)
	require.Equal(t, 1, m.fulfilled["INV-B"], "from the signed callback only")

	form.Fields.Set("amount", "1.00") // tampered after signing
	_, err = sb.Submit(form)
	require.ErrorContains(t, err, "HTTP 403")
}

// A report server that caps items is walked at its own page size.
func TestPaymentsWithCappedItems(t *testing.T) {
	sb := newSandbox(t, WithMaxItems(2))
	client, err := sb.Client()
	require.NoError(t, err)
	for i := range 7 {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: fmt.Sprint("INV-C", i), Amount: 1000, Email: "a@example.com", ReturnURL: "http://127.0.0.1:1/r"})
		require.NoError(t, err)
	}
	rows := 0
	for _, err := range client.Payments(context.Background(), paygate.ReportQuery{ItemsPerPage: 5}) {
		require.NoError(t, err)
		rows++
	}
	require.Equal(t, 7, rows, "every row, though each page held 2 of the 5 asked for")
}
