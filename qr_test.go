package paygate

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// The QR image URL is the public client's qr2 shape: the checkout host's
// /qr2/ with the unsigned pay URL, query-escaped, in q.
func TestQRCodeURL(t *testing.T) {
	f := newTestClient(t, WithCheckoutURL("https://snapnpay.my/"))
	link := PayLink{Category: "fpx", RefNo: "INV-1", ExtraData: "cart 7", Amount: 1050}
	got, err := f.c.QRCodeURL(link)
	require.NoError(t, err)
	require.Equal(t, "https://snapnpay.my/qr2/?q=https%3A%2F%2Fsnapnpay.my%2Fpay%2FAGENCY01%2Ffpx%2FINV-1~cart%25207%2F10.50", got)
	u, err := url.Parse(got)
	require.NoError(t, err)
	require.Equal(t, "https://snapnpay.my/pay/AGENCY01/fpx/INV-1~cart%207/10.50", u.Query().Get("q"))
	require.Zero(t, f.mt.GetTotalCallCount(), "nothing is sent")

	link.Signed = true
	_, err = f.c.QRCodeURL(link)
	require.ErrorContains(t, err, "unsigned")
	_, err = f.c.QRCodeURL(PayLink{Category: "fpx", RefNo: "A~B", Amount: 1050})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve, "the pay link's rules apply")
}

func TestGenerateQR(t *testing.T) {
	for _, duitnow := range []bool{false, true} {
		f := newTestClient(t)
		path := "/api/qrcode/v1/generator"
		if duitnow {
			path = "/api/duitnowqr/v1/generator"
		}
		f.mt.RegisterResponder(http.MethodPost, testReports+path, func(req *http.Request) (*http.Response, error) {
			body, _ := io.ReadAll(req.Body)
			form, _ := url.ParseQuery(string(body))
			require.Equal(t, "INV-9~x", form.Get("refno"))
			require.Equal(t, "12.00", form.Get("amount"))
			require.Equal(t, "fpx", form.Get("paymentCategory"))
			require.Equal(t, testAgency, form.Get("agency"))
			requireSignedForm(t, form, testNow)
			resp := httpmock.NewBytesResponse(200, []byte("\x89PNG..."))
			resp.Header.Set("Content-Type", "image/png")
			return resp, nil
		})
		qr, err := f.c.GenerateQR(context.Background(), QRRequest{RefNo: "INV-9", ExtraData: "x", Amount: 1200, Category: "fpx", DuitNow: duitnow})
		require.NoError(t, err)
		require.Equal(t, "image/png", qr.ContentType)
		require.Equal(t, "\x89PNG...", string(qr.Body))
	}
	f := newTestClient(t)
	_, err := f.c.GenerateQR(context.Background(), QRRequest{RefNo: "a~b", Amount: 99, Category: "fpx"})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 2)
	require.Zero(t, f.mt.GetTotalCallCount())
}
