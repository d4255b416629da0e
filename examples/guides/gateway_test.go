package guides

// The merchant calling the gateway: README.md's first integration and
// docs/calling-the-gateway.md.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// sell is the README's integration: an order, a pay link and its QR page,
// the day's payments and one order's record.
func sell(ctx context.Context, out io.Writer, returnURL string) error {
	// code: readme-gateway
	client, err := paygate.NewClientFromEnv() // PAYGATE_AGENCY, PAYGATE_API_KEY, PAYGATE_AUTH_TOKEN, PAYGATE_*_URL
	if err != nil {
		return err // names the variable to set
	}
	res, err := client.CreateOrder(ctx, paygate.Order{RefNo: "INV-1001", ExtraData: "cart-7",
		Amount: 14990, Email: "buyer@example.com", // Amount in sen: RM 149.90
		ReturnURL: returnURL}) // where your CallbackHandler listens; validated, signed, posted
	if err != nil {
		return err // *paygate.ValidationError (every problem, by field) or *paygate.APIError
	}
	fmt.Fprintln(out, "send the buyer to", res.Location) // the gateway's hosted checkout

	link := paygate.PayLink{Category: "fpx", RefNo: "INV-1002", Amount: 5000}
	payURL, err := client.PayURL(link) // a link for an e-mail, a chat or a printed invoice
	if err != nil {
		return err
	}
	qrPage, err := client.QRCodeURL(link) // the gateway's QR image page for the same link
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "pay at", payURL, "or scan", qrPage)

	today := time.Now().In(paygate.MalaysiaTime())
	for row, err := range client.Payments(ctx, paygate.ReportQuery{Start: today, End: today, ApprovedOnly: true}) {
		if err != nil {
			return err // every page is fetched as you go; the walk stops at the first error
		}
		p, err := row.Payment() // typed: RefNo, ExtraData, Amount, Status, OrderNo, Time, Problems
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "paid:", p.RefNo, p.Amount, p.Status, p.OrderNo)
	}
	rec, err := client.LookupOrderByRefNo(ctx, "INV-1001~cart-7") // as created: refNo~extraData
	if err != nil {
		return err // paygate.ErrOrderNotFound when the gateway has no such order
	}
	p, err := rec.Payment()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "INV-1001 is", p.Status)
	// end: readme-gateway
	return nil
}

// The README's integration runs against the sandbox: it creates its
// order and sees an earlier one paid.
func TestSell(t *testing.T) {
	sb := sandboxEnv(t)
	ctx := context.Background()
	client, err := sb.Client()
	require.NoError(t, err)
	_, err = client.CreateOrder(ctx, paygate.Order{RefNo: "INV-0999", Amount: 1000,
		Email: "a@example.com", ReturnURL: "https://shop.example/paygate/return"})
	require.NoError(t, err)
	require.NoError(t, sb.Pay("INV-0999", paygate.StatusSuccess))

	var out strings.Builder
	require.NoError(t, sell(ctx, &out, "https://shop.example/paygate/return"))
	require.Contains(t, out.String(), "send the buyer to "+sb.URL+"/checkout/")
	require.Contains(t, out.String(), "/qr2/?q=")
	require.Contains(t, out.String(), "paid: INV-0999 10.00 success")
	require.NotContains(t, out.String(), "paid: INV-1001")
	require.Contains(t, out.String(), "INV-1001 is pending")
}

// newClient is the guide's configuration from the environment.
func newClient() (*paygate.Client, error) {
	// code: client-from-env
	client, err := paygate.NewClientFromEnv()
	if err != nil {
		// The variable to set, by name: "PAYGATE_CHECKOUT_URL is not set",
		// or ErrDeprecatedAuth when PAYGATE_TOKEN, PAYGATE_USERNAME or
		// PAYGATE_PASSWORD is set.
		return nil, err
	}
	// end: client-from-env
	return client, nil
}

// realClient is the guide's configuration for the real service, in code.
func realClient() (*paygate.Client, error) {
	// code: client-options
	key, err := paygate.KeyFromEnv() // PAYGATE_API_KEY, parsed once; a bad key fails here, unechoed
	if err != nil {
		return nil, err
	}
	client, err := paygate.NewClient(
		paygate.WithAgency("YOURAGENCY"),
		paygate.WithKey(key),                                   // a Key never prints: %v, logs and errors show [REDACTED]
		paygate.WithAuthToken(os.Getenv("PAYGATE_AUTH_TOKEN")), // the dashboard's "Copy AuthToken"
		paygate.WithCheckoutURL("https://pay.tulus.my/"),       // with a path: orders go there, as given
		paygate.WithReportsURL("https://reports.tulus.my"),
	)
	if err != nil {
		return nil, err
	}
	// end: client-options
	return client, nil
}

// Both configurations build a client; the environment's errors name the
// variable.
func TestClientConfiguration(t *testing.T) {
	sandboxEnv(t)
	client, err := newClient()
	require.NoError(t, err)
	require.NotNil(t, client)
	client, err = realClient()
	require.NoError(t, err)
	require.NotNil(t, client)

	t.Setenv("PAYGATE_CHECKOUT_URL", "")
	t.Setenv("PAYGATE_REPORTS_URL", "")
	_, err = newClient()
	require.ErrorContains(t, err, "PAYGATE_CHECKOUT_URL")
	t.Setenv("PAYGATE_TOKEN", "old")
	_, err = newClient()
	require.ErrorIs(t, err, paygate.ErrDeprecatedAuth)
}

// checkoutPage is the usual web checkout: the buyer's browser posts the
// signed order.
func checkoutPage(client *paygate.Client) http.HandlerFunc {
	// code: checkout-form
	return func(w http.ResponseWriter, r *http.Request) {
		form, err := client.CheckoutForm(paygate.Order{RefNo: "INV-1001", ExtraData: "cart-7",
			Amount: 14990, Email: "buyer@example.com", ReturnURL: "https://shop.example/paygate/return",
			PrefMethod: "fpx/b2b1", // optional: preselect FPX for businesses (see PrefMethod below)
		})
		if err != nil {
			http.Error(w, "cannot build the order", http.StatusInternalServerError)
			return
		}
		// An auto-submitting page: the browser must post it within 60 s (exp).
		if err := form.WriteHTML(w); err != nil {
			return // the browser went away
		}
	}
	// end: checkout-form
}

// The checkout page posts a signed order the sandbox accepts.
func TestCheckoutForm(t *testing.T) {
	sb := sandboxEnv(t)
	client, err := newClient()
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	checkoutPage(client)(rec, httptest.NewRequest(http.MethodGet, "/buy", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	page := rec.Body.String()
	require.Contains(t, page, `action="`+sb.URL+`/v2/checkout"`)
	require.Contains(t, page, `name="pref_method" value="fpx/b2b1"`)
	require.Contains(t, page, `name="signature"`)
}

// createOrder posts an order from the server and says what to do on each
// error.
func createOrder(ctx context.Context, client *paygate.Client, w http.ResponseWriter, r *http.Request) {
	// code: create-order
	res, err := client.CreateOrder(ctx, paygate.Order{RefNo: "INV-1003", Amount: 990,
		Email: "buyer@example.com", ReturnURL: "https://shop.example/paygate/return"})
	var invalid *paygate.ValidationError
	var apiErr *paygate.APIError
	switch {
	case errors.As(err, &invalid): // nothing was sent: fix the order
		for _, p := range invalid.Problems {
			fmt.Fprintln(w, p) // every problem at once, by field
		}
	case errors.Is(err, paygate.ErrUnauthorized): // 401/403: the key or agency is wrong
		http.Error(w, "payment is not available", http.StatusServiceUnavailable)
	case errors.As(err, &apiErr): // another answer: status and a body with the credentials scrubbed
		http.Error(w, fmt.Sprintf("the gateway answered %d", apiErr.StatusCode), http.StatusBadGateway)
	case err != nil: // the network or ctx; a POST is retried only when it cannot have arrived
		http.Error(w, "try again", http.StatusServiceUnavailable)
	default:
		http.Redirect(w, r, res.Location, http.StatusSeeOther) // the hosted checkout
	}
	// end: create-order
}

// Each branch of createOrder: a redirect, a refused order, a wrong key.
func TestCreateOrder(t *testing.T) {
	sb := sandboxEnv(t)
	client, err := newClient()
	require.NoError(t, err)
	ctx := context.Background()
	rec := httptest.NewRecorder()
	createOrder(ctx, client, rec, httptest.NewRequest(http.MethodPost, "/buy", nil))
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.True(t, strings.HasPrefix(rec.Header().Get("Location"), sb.URL+"/checkout/"))

	// The same reference again: the sandbox refuses it with a 4xx.
	rec = httptest.NewRecorder()
	createOrder(ctx, client, rec, httptest.NewRequest(http.MethodPost, "/buy", nil))
	require.Equal(t, http.StatusBadGateway, rec.Code, rec.Body.String())

	t.Setenv("PAYGATE_API_KEY", "00000000-0000-4000-8000-000000000000")
	wrong, err := newClient()
	require.NoError(t, err)
	rec = httptest.NewRecorder()
	createOrder(ctx, wrong, rec, httptest.NewRequest(http.MethodPost, "/buy", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
}

// The amount below the minimum is a validation problem: nothing is sent.
func TestCreateOrderInvalid(t *testing.T) {
	sandboxEnv(t)
	client, err := newClient()
	require.NoError(t, err)
	_, err = client.CreateOrder(context.Background(), paygate.Order{RefNo: "INV~1", Amount: 10})
	var invalid *paygate.ValidationError
	require.ErrorAs(t, err, &invalid)
	require.NotEmpty(t, invalid.Problems)
}

// payInPerson is a pay link, its QR image page, and a QR code from the
// gateway's generator.
func payInPerson(ctx context.Context, client *paygate.Client) (payURL, qrPage string, qr *paygate.QRCode, err error) {
	// code: pay-link
	link := paygate.PayLink{Category: "fpx", RefNo: "INV-1004", Amount: 2500}
	payURL, err = client.PayURL(link) // /pay/{agency}/{category}/{refNo}/{amount}; Signed: true signs it (valid 60 s)
	if err != nil {
		return "", "", nil, err
	}
	qrPage, err = client.QRCodeURL(link) // /qr2/?q=...: unsigned, nothing is sent
	if err != nil {
		return "", "", nil, err
	}
	qr, err = client.GenerateQR(ctx, paygate.QRRequest{RefNo: "INV-1005", Amount: 2500,
		Category: "fpx", DuitNow: true}) // the DuitNow QR generator; false: the gateway's own
	if err != nil {
		return "", "", nil, err
	}
	// qr.ContentType and qr.Body: the generator's answer, as sent
	// end: pay-link
	return payURL, qrPage, qr, nil
}

// The pay link, QR page and QR code against the sandbox.
func TestPayInPerson(t *testing.T) {
	sb := sandboxEnv(t)
	client, err := newClient()
	require.NoError(t, err)
	payURL, qrPage, qr, err := payInPerson(context.Background(), client)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(payURL, sb.URL+"/pay/"+sb.Agency+"/fpx/INV-1004/25.00"), payURL)
	u, err := url.Parse(qrPage)
	require.NoError(t, err)
	require.Equal(t, "/qr2/", u.Path)
	require.NotEmpty(t, qr.Body)
}

// sandboxTest is the guide's test of a merchant's code: order, payment,
// the signed callback, all in process.
func sandboxTest(t *testing.T, fulfil func(context.Context, *paygate.Callback) error) []gatewaytest.Delivery {
	ctx := context.Background()
	// code: sandbox-test
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(10 * time.Millisecond))
	defer sb.Close()
	client, err := sb.Client() // configured with the sandbox's fresh credentials
	require.NoError(t, err)
	shop := httptest.NewServer(&paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()}, Fulfil: paygate.FulfilFunc(fulfil)})
	defer shop.Close()
	_, err = client.CreateOrder(ctx, paygate.Order{RefNo: "INV-1", Amount: 1000,
		Email: "a@example.com", ReturnURL: shop.URL + "/return"})
	require.NoError(t, err)
	require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess)) // the buyer's Pay button
	sb.Settle()                                                // waits for the signed callback (and its retries)
	log := sb.Callbacks()                                      // every delivery: attempts and answers
	// end: sandbox-test
	return log
}

// The sandbox test delivers one callback, answered 200, fulfilled once.
func TestSandboxTest(t *testing.T) {
	fulfilled := 0
	log := sandboxTest(t, func(_ context.Context, cb *paygate.Callback) error {
		fulfilled++
		return nil
	})
	require.Equal(t, 1, fulfilled)
	require.NotEmpty(t, log)
}

// sign is the low-level signing, for a request the Client does not make.
func sign(key paygate.Key, r *http.Request) error {
	// code: signing
	signedURL, err := paygate.SignURL(key, "https://reports.example/api/report/v1/payment?page=0", time.Now())
	if err != nil {
		return err
	}
	fields, err := paygate.SignForm(key, url.Values{"agency": {"AG01"}, "amount": {"10.00"}}, time.Now())
	if err != nil {
		return err // ErrMultipleValues: a field with several values
	}
	err = paygate.VerifyCallback(r.PostForm, key) // nil, ErrSignatureMissing or ErrSignatureMismatch
	// end: signing
	_, _ = signedURL, fields
	return err
}

// Signing and verifying: a request with no signature is refused.
func TestSigning(t *testing.T) {
	sandboxEnv(t)
	key, err := paygate.KeyFromEnv()
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/return", strings.NewReader("refNo=INV-1"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	require.NoError(t, r.ParseForm())
	require.ErrorIs(t, sign(key, r), paygate.ErrSignatureMissing)
}
