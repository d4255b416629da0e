package paygate_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

func ExampleClient_CheckoutForm() {
	sb := gatewaytest.NewServer() // stands in for the gateway
	defer sb.Close()
	key, err := paygate.ParseKey(sb.APIKey) // from your secret store, parsed once; a bad key fails here
	if err != nil {
		panic(err)
	}
	client, err := paygate.NewClient(
		paygate.WithAgency(sb.Agency),
		paygate.WithKey(key),
		paygate.WithCheckoutURL(sb.URL),
	)
	if err != nil {
		panic(err)
	}
	form, err := client.CheckoutForm(paygate.Order{RefNo: "INV-1001", ExtraData: "cart-7", Amount: 14990,
		Email: "buyer@example.com", ReturnURL: "https://shop.example/paygate/return"})
	if err != nil {
		panic(err)
	}
	fmt.Println(form.Action == sb.URL+"/v2/checkout", form.Fields.Get("refNo"), form.Fields.Get("amount"), len(form.Fields.Get("signature")))

	var page strings.Builder // in a handler: form.WriteHTML(w), the auto-submitting page
	if err := form.WriteHTML(&page); err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(page.String(), `.submit();</script>`), strings.Contains(page.String(), `<button type="submit">`))
	// Output:
	// true INV-1001~cart-7 149.90 16
	// true true
}

func ExampleClient_Payments() {
	sb := gatewaytest.NewServer()
	defer sb.Close()
	client, _ := sb.Client()
	ctx := context.Background()
	for _, ref := range []string{"INV-1", "INV-2", "INV-3"} {
		link, _ := client.PayURL(paygate.PayLink{Category: "fpx", RefNo: ref, Amount: 1000})
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		_ = sb.Pay(ref, paygate.StatusSuccess)
	}
	for row, err := range client.Payments(ctx, paygate.ReportQuery{ApprovedOnly: true, ItemsPerPage: 2}) {
		if err != nil {
			panic(err)
		}
		p, err := row.Payment() // or row.Decode into a type of your own
		if err != nil {
			panic(err)
		}
		fmt.Println(p.RefNo, p.Amount, p.Status, p.Consistent())
	}
	// Output:
	// INV-1 10.00 success true
	// INV-2 10.00 success true
	// INV-3 10.00 success true
}

func ExampleSplitRefNo() {
	base, extra := paygate.SplitRefNo("test123~881225-08-1234~12 Jalan Foo~#Sample RefNo")
	fmt.Printf("%q %q\n", base, extra)
	// Output:
	// "test123" "881225-08-1234~12 Jalan Foo~#Sample RefNo"
}

func ExampleClient_QRCodeURL() {
	client, _ := paygate.NewClient(paygate.WithAgency("AGENCY01"), paygate.WithCheckoutURL("https://pay.example/"))
	u, _ := client.QRCodeURL(paygate.PayLink{Category: "fpx", RefNo: "INV-1", Amount: 1000})
	fmt.Println(u)
	// Output:
	// https://pay.example/qr2/?q=https%3A%2F%2Fpay.example%2Fpay%2FAGENCY01%2Ffpx%2FINV-1%2F10.00
}

func ExampleCallbackHandler() {
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(10 * time.Millisecond))
	defer sb.Close()
	shop := httptest.NewServer(&paygate.CallbackHandler{
		Keys: []paygate.Key{sb.Key()},
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			fmt.Println("fulfil", cb.RefNo, cb.Amount) // verified success, once per refNo
			return nil
		}),
		OnStatus: func(_ context.Context, cb *paygate.Callback) error {
			fmt.Println("status", cb.RefNo, cb.Status)
			return nil
		},
	})
	defer shop.Close()
	client, _ := sb.Client()
	_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "INV-7", Amount: 2590,
		Email: "buyer@example.com", ReturnURL: shop.URL + "/paygate/return"})
	if err != nil {
		panic(err)
	}
	_ = sb.Pay("INV-7", paygate.StatusPending) // the bank has not answered yet
	sb.Settle()
	_ = sb.Complete("INV-7", paygate.StatusSuccess) // the follow-up callback
	sb.Settle()
	// Output:
	// status INV-7 pending
	// fulfil INV-7 25.90
}
