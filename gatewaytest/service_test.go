package gatewaytest

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// An order posted to the host's root, as the developer pages do, with every
// optional field, is accepted, signed, and kept; its Cancel button goes to
// cancelUrl without deciding the order.
func TestOrderAtRootWithOptionalFields(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, err := sb.Client(paygate.WithCheckoutURL(sb.URL + "/"))
	require.NoError(t, err)
	o := m.order("INV-1")
	o.CancelURL = "https://shop.example/cart"
	o.PrefMethod, o.PrefBank = "fpx/b2b1", "ABB0235"
	o.UTM = paygate.UTM{Source: "sdk", Medium: "dev", Campaign: "sdk_demo", Term: "tulus sdk"}
	o.DebugData = "x"
	res, err := client.CreateOrder(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	orders := sb.Orders()
	require.Len(t, orders, 1)
	require.Equal(t, "https://shop.example/cart", orders[0].CancelURL)
	require.Equal(t, url.Values{"pref_method": {"fpx/b2b1"}, "pref_bank": {"ABB0235"}, "utm_source": {"sdk"}, "utm_medium": {"dev"},
		"utm_campaign": {"sdk_demo"}, "utm_term": {"tulus sdk"}, "extra_data": {"x"}}, orders[0].Options)

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(res.Location, url.Values{"choice": {"cancel"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "https://shop.example/cart", resp.Header.Get("Location"))
	require.Empty(t, sb.Orders()[0].Status, "a cancel at the checkout page decides nothing")
	require.Empty(t, sb.Callbacks(), "and sends no callback")

	// A field the sandbox cannot take is refused, even when signed.
	form, err := paygate.SignForm(sb.Key(), url.Values{"agency": {sb.Agency}, "refNo": {"INV-2"}, "amount": {"2.00"},
		"email": {"a@example.com"}, "returnUrl": {m.srv.URL}, "cancelUrl": {"/relative"}, "utm_source": {"é"}}, sb.cfg.now())
	require.NoError(t, err)
	resp, err = noRedirect.PostForm(sb.URL+"/", form)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), `"cancelUrl"`)
	require.Contains(t, string(body), `"utm_source"`)
}

// The public client's other endpoints answer in the sandbox: a buyer's
// transactions, the version, the echo, and the QR image page for an
// unsigned pay URL only.
func TestServiceEndpoints(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, err := sb.Client()
	require.NoError(t, err)
	ctx := context.Background()
	for _, ref := range []string{"INV-1", "INV-2"} {
		o := m.order(ref)
		if ref == "INV-2" {
			o.Email = "other@example.com"
		}
		_, err := client.CreateOrder(ctx, o)
		require.NoError(t, err)
	}
	h, err := client.Transactions(ctx, "BUYER@example.com")
	require.NoError(t, err)
	var tx struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, h.Decode(&tx))
	require.Len(t, tx.Data, 1)
	require.Equal(t, "INV-1~cart", tx.Data[0]["seller_order_no"])
	ps, err := h.Payments()
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "INV-1", ps[0].RefNo)
	require.Equal(t, paygate.Amount(2590), ps[0].Amount)

	wrong, err := sb.Client(paygate.WithAuthToken("x")) // a wrong AuthToken is refused
	require.NoError(t, err)
	_, err = wrong.Transactions(ctx, "buyer@example.com")
	require.ErrorIs(t, err, paygate.ErrUnauthorized)

	v, err := client.Version(ctx)
	require.NoError(t, err)
	require.Contains(t, v, Version)
	e, err := client.Echo(ctx)
	require.NoError(t, err)
	require.Contains(t, e, paths.Echo)

	link := paygate.PayLink{Category: "zakat", RefNo: "Q-1", Amount: 500}
	qr, err := client.QRCodeURL(link)
	require.NoError(t, err)
	resp, err := http.Get(qr)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	link.Signed = true
	pay, err := client.PayURL(link)
	require.NoError(t, err)
	resp, err = http.Get(sb.URL + paths.QR2 + "?q=" + url.QueryEscape(pay))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a signed pay URL has no place in a QR code")
	require.True(t, strings.HasPrefix(qr, sb.URL+paths.QR2))
}
