package paygate

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

func TestCheckoutForm(t *testing.T) {
	f := newTestClient(t)
	form, err := f.c.CheckoutForm(testOrder())
	require.NoError(t, err)
	require.Equal(t, testCheckout+"/v2/checkout", form.Action)
	require.Equal(t, testNow.Add(60*time.Second), form.Expires)
	require.Equal(t, "INV-1001~cart 7", form.Fields.Get("refNo"))
	require.Equal(t, "149.90", form.Fields.Get("amount"))
	require.Equal(t, testAgency, form.Fields.Get("agency"))
	requireSignedForm(t, form.Fields, testNow)

	form.CSPNonce = "n0nce"
	var page bytes.Buffer
	require.NoError(t, form.WriteHTML(&page))
	html := page.String()
	require.Contains(t, html, `action="https://checkout.example/v2/checkout"`)
	require.Contains(t, html, `<input type="hidden" name="signature" value="`+form.Fields.Get("signature")+`">`)
	require.Contains(t, html, `value="INV-1001~cart 7"`)
	require.Contains(t, html, `<script nonce="n0nce">`)
	require.Contains(t, html, `<button type="submit">`)
	require.Zero(t, f.mt.GetTotalCallCount())

	// Values are escaped: a hostile return URL cannot break out of the page.
	o := testOrder()
	o.ReturnURL = `https://shop.example/r?x="><script>alert(1)</script>`
	form, err = f.c.CheckoutForm(o)
	require.NoError(t, err)
	page.Reset()
	require.NoError(t, form.WriteHTML(&page))
	require.NotContains(t, page.String(), "<script>alert(1)")
	require.Contains(t, page.String(), "&lt;script&gt;alert(1)")
	require.NotContains(t, page.String(), "nonce=", "no nonce attribute without CSPNonce")
}

func TestCreateOrder(t *testing.T) {
	f := newTestClient(t)
	f.mt.RegisterResponder(http.MethodPost, testCheckout+"/v2/checkout", func(req *http.Request) (*http.Response, error) {
		require.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"))
		require.Equal(t, "paygate-go/"+Version, req.Header.Get("User-Agent"))
		require.Empty(t, req.Header.Get("Authorization"))
		body, _ := io.ReadAll(req.Body)
		form, err := url.ParseQuery(string(body))
		require.NoError(t, err)
		require.Equal(t, []string{"agency", "amount", "email", "exp", "refNo", "returnUrl", "signature"}, sortedKeys(form))
		requireSignedForm(t, form, testNow)
		resp := httpmock.NewStringResponse(http.StatusFound, "redirecting")
		resp.Header.Set("Location", testCheckout+"/pay/session/abc")
		return resp, nil
	})
	f.mt.RegisterResponder(http.MethodGet, testCheckout+"/pay/session/abc", httpmock.NewStringResponder(200, "hosted page"))
	res, err := f.c.CreateOrder(context.Background(), testOrder())
	require.NoError(t, err)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, testCheckout+"/pay/session/abc", res.Location)
	require.Equal(t, "redirecting", string(res.Body))
	require.Equal(t, 1, f.mt.GetTotalCallCount(), "the redirect is not followed")
}

func sortedKeys(v url.Values) []string {
	ks := make([]string, 0, len(v))
	for k := range v {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Every order rule is checked before anything is signed or sent, all at once,
// by field.
func TestOrderValidation(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Order)
		field string
		rule  string
		// client, when set, changes the client first.
		client func(*Client)
	}{
		{name: "refNo missing", edit: func(o *Order) { o.RefNo = "" }, field: "refNo", rule: ruleRequired},
		{name: "refNo with ~", edit: func(o *Order) { o.RefNo = "A~B" }, field: "refNo", rule: "must not contain ~"},
		{name: "extraData with ~", edit: func(o *Order) { o.ExtraData = "x~y" }, field: "extraData", rule: "must not contain ~"},
		{name: "amount below 1.00", edit: func(o *Order) { o.Amount = 99 }, field: "amount", rule: "must be at least 1.00"},
		{name: "amount zero", edit: func(o *Order) { o.Amount = 0 }, field: "amount", rule: "must be at least 1.00"},
		{name: "email missing", edit: func(o *Order) { o.Email = "" }, field: "email", rule: ruleRequired},
		{name: "email with display name", edit: func(o *Order) { o.Email = "Ali <ali@example.com>" }, field: "email", rule: "must be a plain e-mail"},
		{name: "email bad", edit: func(o *Order) { o.Email = "ali.example.com" }, field: "email", rule: "must be a plain e-mail"},
		{name: "email address literal (one rule with the webhook)", edit: func(o *Order) { o.Email = "a@[127.0.0.1]" }, field: "email", rule: "must be a plain e-mail"},
		{name: "returnUrl missing", edit: func(o *Order) { o.ReturnURL = "" }, field: "returnUrl", rule: ruleRequired},
		{name: "returnUrl relative", edit: func(o *Order) { o.ReturnURL = "/paygate/return" }, field: "returnUrl", rule: "must be an absolute http(s) URL"},
		{name: "returnUrl ftp", edit: func(o *Order) { o.ReturnURL = "ftp://shop.example/r" }, field: "returnUrl", rule: "must be an absolute http(s) URL"},
		{name: "non-ASCII", edit: func(o *Order) { o.ExtraData = "kedai makan é" }, field: "refNo", rule: "must be ASCII"},
		{name: "over 255 bytes after composition", edit: func(o *Order) { o.RefNo = strings.Repeat("R", 200); o.ExtraData = strings.Repeat("x", 60) }, field: "refNo", rule: "must be at most 255 bytes"},
		{name: "agency missing", edit: func(o *Order) { o.Agency = "" }, client: func(c *Client) { c.agency = "" }, field: "agency", rule: ruleRequired},
		{name: "cancelUrl relative", edit: func(o *Order) { o.CancelURL = "/cancel" }, field: "cancelUrl", rule: "must be an absolute http(s) URL"},
		{name: "cancelUrl javascript", edit: func(o *Order) { o.CancelURL = "javascript:alert(1)" }, field: "cancelUrl", rule: "must be an absolute http(s) URL"},
		{name: "utm_source non-ASCII", edit: func(o *Order) { o.UTM.Source = "café" }, field: "utm_source", rule: "must be ASCII"},
		{name: "utm_content over 255 bytes", edit: func(o *Order) { o.UTM.Content = strings.Repeat("c", 256) }, field: "utm_content", rule: "must be at most 255 bytes"},
		{name: "pref_bank over 255 bytes", edit: func(o *Order) { o.PrefBank = strings.Repeat("B", 256) }, field: "pref_bank", rule: "must be at most 255 bytes"},
		{name: "pref_method non-ASCII", edit: func(o *Order) { o.PrefMethod = "fpx/b2b1é" }, field: "pref_method", rule: "must be ASCII"},
		{name: "extra_data non-ASCII", edit: func(o *Order) { o.DebugData = "ü" }, field: "extra_data", rule: "must be ASCII"},
		{name: "FPX B2B under 1.00", edit: func(o *Order) { o.PrefMethod, o.Amount = "fpx/b2b1", 99 }, field: "amount", rule: "must be at least 1.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestClient(t)
			if tt.client != nil {
				tt.client(f.c)
			}
			f.mt.RegisterNoResponder(httpmock.NewStringResponder(200, ""))
			o := testOrder()
			tt.edit(&o)
			_, err1 := f.c.CheckoutForm(o)
			_, err2 := f.c.CreateOrder(context.Background(), o)
			for _, err := range []error{err1, err2} {
				var ve *ValidationError
				require.ErrorAs(t, err, &ve)
				require.Len(t, ve.Problems, 1, "%v", ve)
				require.Equal(t, tt.field, ve.Problems[0].Field)
				require.Contains(t, ve.Problems[0].Rule, tt.rule)
			}
			require.Zero(t, f.mt.GetTotalCallCount(), "nothing was sent")
		})
	}
	// All problems at once.
	f := newTestClient(t)
	_, err := f.c.CheckoutForm(Order{})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 4)
}

// Every order takes RM 1.00, one that preselects FPX B2B too: the gateway
// hides B2B under RM 2.00 and offers the buyer another method
// (docs/assumptions.md A-b2b-minimum).
func TestB2BUnderMinimumSent(t *testing.T) {
	f := newTestClient(t)
	for _, tc := range []struct {
		method string
		amount Amount
	}{
		{"fpx/b2b1", MinOrderAmount}, {"FPX/B2B", MinB2BAmount - 1}, {"fpx/b2b1", MinB2BAmount}, {"fpx/b2c", MinOrderAmount}, {"", MinOrderAmount}, {"fpx", MinOrderAmount}, {"duitnow/b2b1", MinOrderAmount},
	} {
		t.Run(tc.method, func(t *testing.T) {
			o := testOrder()
			o.PrefMethod, o.Amount = tc.method, tc.amount
			_, err := f.c.CheckoutForm(o)
			require.NoError(t, err)
		})
	}
	_, err := f.c.PayURL(PayLink{Category: "fpx", RefNo: "R1", Amount: MinOrderAmount})
	require.NoError(t, err, "a pay link's channel is the buyer's choice")
	require.Zero(t, f.mt.GetTotalCallCount())
}

// The developer pages' optional order fields are sent only when set, with
// their pages' names, and signed like the rest.
func TestOrderOptionalFields(t *testing.T) {
	f := newTestClient(t)
	o := testOrder()
	form, err := f.c.CheckoutForm(o)
	require.NoError(t, err)
	require.Equal(t, []string{"agency", "amount", "email", "exp", "refNo", "returnUrl", "signature"}, sortedKeys(form.Fields), "unset fields are not sent")

	o.CancelURL = "https://shop.example/cart"
	o.PrefMethod, o.PrefBank = "fpx/b2b1", "ABB0235"
	o.UTM = UTM{Source: "instagram", Medium: "cpc", Campaign: "spring_sale", Term: "pay zakat", Content: "logolink"}
	o.DebugData = "debug 1"
	form, err = f.c.CheckoutForm(o)
	require.NoError(t, err)
	want := map[string]string{
		"cancelUrl": "https://shop.example/cart", "pref_method": "fpx/b2b1", "pref_bank": "ABB0235",
		"utm_source": "instagram", "utm_medium": "cpc", "utm_campaign": "spring_sale", "utm_term": "pay zakat",
		"utm_content": "logolink", "extra_data": "debug 1", "refNo": "INV-1001~cart 7",
	}
	for k, v := range want {
		require.Equal(t, v, form.Fields.Get(k), k)
	}
	require.Len(t, form.Fields, 7+9)
	requireSignedForm(t, form.Fields, testNow)
}

func TestPayURL(t *testing.T) {
	f := newTestClient(t)
	u, err := f.c.PayURL(PayLink{Category: "fpx", RefNo: "INV 1/2", ExtraData: "x", Amount: 1000})
	require.NoError(t, err)
	require.Equal(t, testCheckout+"/pay/AGENCY01/fpx/INV%201%2F2~x/10.00", u)

	signed, err := f.c.PayURL(PayLink{Agency: "AG/02", Category: "duitnow", RefNo: "R1", Amount: 150, Signed: true})
	require.NoError(t, err)
	pu, err := url.Parse(signed)
	require.NoError(t, err)
	require.Equal(t, "/pay/AG%2F02/duitnow/R1/1.50", pu.EscapedPath())
	requireSignedURL(t, pu, testNow)

	_, err = f.c.PayURL(PayLink{RefNo: "a~b", Amount: 50})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 3) // category, ~, amount
	noKey, err := NewClient(WithCheckoutURL(testCheckout), WithAgency(testAgency))
	require.NoError(t, err)
	_, err = noKey.PayURL(PayLink{Category: "fpx", RefNo: "R", Amount: 100, Signed: true})
	require.ErrorIs(t, err, ErrNoCredential)
	_, err = noKey.PayURL(PayLink{Category: "fpx", RefNo: "R", Amount: 100})
	require.NoError(t, err, "an unsigned pay URL needs no key")
}

// A field that would be a dot segment of the pay URL's path is refused,
// naming the field: the browser would resolve it away and open another
// page than the order's. Dots inside a segment are kept.
func TestPayURLDotSegments(t *testing.T) {
	f := newTestClient(t)
	for _, tc := range []struct {
		name  string
		link  PayLink
		field string
	}{
		{name: "refNo ..", link: PayLink{Category: "fpx", RefNo: "..", Amount: 100}, field: "refNo"},
		{name: "refNo .", link: PayLink{Category: "fpx", RefNo: ".", Amount: 100}, field: "refNo"},
		{name: "category ..", link: PayLink{Category: "..", RefNo: "R1", Amount: 100}, field: "paymentCategory"},
		{name: "agency .", link: PayLink{Agency: ".", Category: "fpx", RefNo: "R1", Amount: 100}, field: "agency"},
		{name: "dots inside a refNo", link: PayLink{Category: "fpx", RefNo: "INV..1.", Amount: 100}},
		{name: "refNo .. with extraData", link: PayLink{Category: "fpx", RefNo: "..", ExtraData: "x", Amount: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := f.c.PayURL(tc.link)
			if tc.field == "" {
				require.NoError(t, err)
				pu, err := url.Parse(u)
				require.NoError(t, err)
				require.Equal(t, pu.EscapedPath(), pu.JoinPath().EscapedPath(), "no segment the URL's own resolution changes")
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.Len(t, ve.Problems, 1)
			require.Equal(t, tc.field, ve.Problems[0].Field)
			require.Equal(t, rulePathSegment, ve.Problems[0].Rule)
			require.Zero(t, f.mt.GetTotalCallCount())
		})
	}
}

// Without an API key an order is unsigned: no exp, no signature (the
// protocol asks for a signature only when using an API key).
func TestUnsignedOrder(t *testing.T) {
	c, err := NewClient(WithAgency(testAgency), WithCheckoutURL(testCheckout))
	require.NoError(t, err)
	form, err := c.CheckoutForm(testOrder())
	require.NoError(t, err)
	require.False(t, form.Fields.Has("signature"))
	require.False(t, form.Fields.Has("exp"))
	require.True(t, form.Expires.IsZero())
	require.Equal(t, "INV-1001~cart 7", form.Fields.Get("refNo"))
	_, err = c.GenerateQR(context.Background(), QRRequest{RefNo: "R", Amount: 100, Category: "fpx"})
	require.ErrorIs(t, err, ErrNoCredential, "QR requests are always signed")
}
