package paygate

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// The checkout URL is where orders go when it has a path (the public pages
// post to the host's root); a bare host gets the protocol's /v2/checkout.
// Pay and QR image URLs are on the host either way.
func TestCheckoutURLAsGiven(t *testing.T) {
	for _, tc := range []struct {
		name, checkout string
		endpoints      *Endpoints
		action, pay    string
	}{
		{name: "the public pages' URL: the host's root", checkout: "https://pay.tulus.my/",
			action: "https://pay.tulus.my/", pay: "https://pay.tulus.my/pay/"},
		{name: "a bare host: the protocol's path", checkout: "https://pay.tulus.my",
			action: "https://pay.tulus.my/v2/checkout", pay: "https://pay.tulus.my/pay/"},
		{name: "the protocol's path given in full", checkout: "https://snapnpay.my/v2/checkout",
			action: "https://snapnpay.my/v2/checkout", pay: "https://snapnpay.my/pay/"},
		{name: "another path, as given", checkout: "https://gw.example/merchant/checkout/",
			action: "https://gw.example/merchant/checkout/", pay: "https://gw.example/pay/"},
		{name: "an escaped path stays escaped", checkout: "https://gw.example/a%2Fb/",
			action: "https://gw.example/a%2Fb/", pay: "https://gw.example/pay/"},
		{name: "a bare host with configured paths", checkout: "https://gw.example", endpoints: &Endpoints{Checkout: "/v3/checkout", Pay: "/p/"},
			action: "https://gw.example/v3/checkout", pay: "https://gw.example/p/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []Option{WithCheckoutURL(tc.checkout)}
			if tc.endpoints != nil {
				opts = append(opts, WithEndpoints(*tc.endpoints))
			}
			f := newTestClient(t, opts...)
			form, err := f.c.CheckoutForm(testOrder())
			require.NoError(t, err)
			require.Equal(t, tc.action, form.Action)

			posted := 0
			f.mt.RegisterResponder(http.MethodPost, tc.action, func(req *http.Request) (*http.Response, error) {
				posted++
				body, _ := io.ReadAll(req.Body)
				fields, err := url.ParseQuery(string(body))
				require.NoError(t, err)
				requireSignedForm(t, fields, testNow)
				return httpmock.NewStringResponse(http.StatusSeeOther, ""), nil
			})
			_, err = f.c.CreateOrder(context.Background(), testOrder())
			require.NoError(t, err)
			require.Equal(t, 1, posted, "the order went to %s", tc.action)

			link := PayLink{Category: "fpx", RefNo: "INV-1", Amount: 1000}
			pay, err := f.c.PayURL(link)
			require.NoError(t, err)
			require.Equal(t, tc.pay+"AGENCY01/fpx/INV-1/10.00", pay)
			qr, err := f.c.QRCodeURL(link)
			require.NoError(t, err)
			host := tc.pay[:strings.Index(tc.pay[len("https://"):], "/")+len("https://")]
			require.Equal(t, host+"/qr2/?q="+url.QueryEscape(pay), qr, "the QR image page is on the host")
		})
	}
}

// Signing with the path signs the path orders actually go to, the root
// included.
func TestCheckoutRootSignedWithPath(t *testing.T) {
	f := newTestClient(t, WithCheckoutURL("https://pay.tulus.my/"), WithPOSTSignedWithPath())
	form, err := f.c.CheckoutForm(testOrder())
	require.NoError(t, err)
	require.Equal(t, independentSign(t, "/?", form.Fields), form.Fields.Get("signature"))
}

// Every path the Client calls is configurable in one place; the calls use
// the configured paths.
func TestEndpointsConfigurable(t *testing.T) {
	e := Endpoints{
		PaymentReport: "/r/payment", FPXRequest: "/r/fpx", Transactions: "/r/tx", QR: "/r/qr", DuitNowQR: "/r/dqr",
		Version: "/r/version", Echo: "/r/echo",
	}
	f := newTestClient(t, WithEndpoints(e), WithAuthToken(testAuthToken))
	var hit []string
	for path, body := range map[string]string{
		e.PaymentReport: `{"status":"OK","data":[],"stats":{"total_pages":0}}`,
		e.FPXRequest:    `{"status":"OK","fpxrequest":{"seller_order_no":"INV-1"}}`,
		e.Transactions:  `{"status":"OK","data":[]}`,
		e.Version:       `1.2.3`,
		e.Echo:          `ok`,
	} {
		f.mt.RegisterResponder(http.MethodGet, testReports+path, func(req *http.Request) (*http.Response, error) {
			hit = append(hit, req.URL.Path)
			return httpmock.NewStringResponse(200, body), nil
		})
	}
	for _, path := range []string{e.QR, e.DuitNowQR} {
		f.mt.RegisterResponder(http.MethodPost, testReports+path, func(req *http.Request) (*http.Response, error) {
			hit = append(hit, req.URL.Path)
			return httpmock.NewStringResponse(200, `{}`), nil
		})
	}
	ctx := context.Background()
	_, err := f.c.PaymentReportPage(ctx, ReportQuery{}, 0)
	require.NoError(t, err)
	_, err = f.c.LookupOrder(ctx, "INV-1")
	require.NoError(t, err)
	_, err = f.c.Transactions(ctx, "buyer@example.com")
	require.NoError(t, err)
	_, err = f.c.GenerateQR(ctx, QRRequest{RefNo: "INV-1", Amount: 100, Category: "fpx"})
	require.NoError(t, err)
	_, err = f.c.GenerateQR(ctx, QRRequest{RefNo: "INV-1", Amount: 100, Category: "fpx", DuitNow: true})
	require.NoError(t, err)
	_, err = f.c.Version(ctx)
	require.NoError(t, err)
	_, err = f.c.Echo(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{e.PaymentReport, e.FPXRequest, e.Transactions, e.QR, e.DuitNowQR, e.Version, e.Echo}, hit)
	require.Equal(t, DefaultEndpoints().Checkout, f.c.endpoints.Checkout, "an empty field keeps its default")
}

func TestWithEndpointsRefusesBadPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Endpoints
		want string
	}{
		{name: "relative", e: Endpoints{Echo: "api/echo"}, want: "Echo"},
		{name: "a query", e: Endpoints{PaymentReport: "/r?x=1"}, want: "PaymentReport"},
		{name: "a fragment", e: Endpoints{Version: "/v#x"}, want: "Version"},
		{name: "another host", e: Endpoints{Checkout: "//evil.example/x"}, want: "Checkout"},
		{name: "dot-dot", e: Endpoints{FPXRequest: "/a/../b"}, want: "FPXRequest"},
		{name: "a prefix without /", e: Endpoints{Pay: "/pay"}, want: "must end in /"},
		{name: "the QR image prefix without /", e: Endpoints{QR2: "/qr2"}, want: "QR2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(WithEndpoints(tc.e))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Every Endpoints field has a default and a row in fields, in the
// struct's order, pointing at that field: a new endpoint left out of
// either would go to the bare host under WithEndpoints.
func TestEndpointsFieldsCoverTheStruct(t *testing.T) {
	var e Endpoints
	rows := e.fields()
	st := reflect.TypeOf(e)
	require.Len(t, rows, st.NumField(), "one fields() row per Endpoints field")
	def := reflect.ValueOf(DefaultEndpoints())
	ev := reflect.ValueOf(&e).Elem()
	for i, row := range rows {
		name := st.Field(i).Name
		require.Equal(t, name, row.name, "row %d", i)
		require.NotEmpty(t, def.Field(i).String(), "DefaultEndpoints sets %s", name)
		require.Equal(t, def.Field(i).String(), row.def, "%s's default", name)
		require.Same(t, ev.Field(i).Addr().Interface().(*string), row.p, "%s's row points at its field", name)
		require.Equal(t, strings.HasSuffix(row.def, "/"), row.dir, "%s: a prefix path ends in /", name)
	}
}
