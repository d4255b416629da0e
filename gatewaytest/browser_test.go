package gatewaytest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

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
