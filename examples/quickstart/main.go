// Command quickstart walks the spec's payment stages with the SDK, offline:
// it plays the gateway's side with paygate.SignCallback, so that it needs no
// account and no network. Run it with `go run ./examples/quickstart`.
//
// Until the in-process sandbox (gatewaytest) lands, stages 2 and 5 (the
// hosted checkout and the reports) are described rather than run.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/paygate-go/paygate"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	// A demo key; a real one comes from the merchant dashboard.
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	if err != nil {
		return err
	}
	now := time.Now()

	amount, err := paygate.ParseAmount("149.90")
	if err != nil {
		return err
	}
	order := url.Values{
		"agency":    {"AGENCY01"},
		"refNo":     {"INV-1001~cart-7"},
		"amount":    {amount.String()},
		"email":     {"buyer@example.com"},
		"returnUrl": {"https://shop.example/paygate/return"},
	}
	signed, err := paygate.SignForm(key, order, now)
	if err != nil {
		return err
	}
	msg, err := paygate.FormMessage(order, now)
	if err != nil {
		return err
	}
	fmt.Printf("1. create order: POST /v2/checkout with exp=%s signature=%s\n", signed.Get("exp"), signed.Get("signature"))
	fmt.Printf("   signed message: %s\n", msg.Message)

	fmt.Println("2. buyer pays on the hosted checkout (the gateway's page; the merchant never sees bank data)")

	callback := url.Values{
		"status": {"success"}, "orderNo": {"GW-88001"}, "refNo": {"INV-1001~cart-7"}, "amount": {"149.90"},
		"addCharge": {"0.00"}, "fpxTxnId": {"2611221030150987"}, "fpxTxnTime": {"2026-11-22 10:30:15"},
		"agency": {"AGENCY01"}, "extraData": {"cart-7"}, "fpx": {`{"fpx_debit_auth_code":"00"}`},
	}
	err = paygate.VerifyCallback(callback, key)
	fmt.Printf("3. indirect return (browser, unsigned): %v -> show a page, never fulfil\n", err)
	if !errors.Is(err, paygate.ErrSignatureMissing) {
		return fmt.Errorf("unsigned return not recognised: %v", err)
	}

	direct, err := paygate.SignCallback(key, callback) // what the gateway sends
	if err != nil {
		return err
	}
	if err := paygate.VerifyCallback(direct, key); err != nil {
		return fmt.Errorf("signed callback rejected: %w", err)
	}
	code := paygate.FPXCode("00")
	fmt.Printf("4. direct callback (server, signed): verified, status=%s, fpx %s -> fulfil %s once\n",
		direct.Get("status"), code.Describe(), direct.Get("refNo"))
	direct.Set("amount", "1.00")
	err = paygate.VerifyCallback(direct, key)
	fmt.Printf("   the same callback with amount changed to 1.00: %v -> 403\n", err)
	if !errors.Is(err, paygate.ErrSignatureMismatch) {
		return fmt.Errorf("tampered callback accepted")
	}

	fmt.Println("5. reconcile: GET /api/report/v1/payment page by page (with the Client, coming next)")
	return nil
}
