package paygate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

func ExampleSignForm() {
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301") // once, at start-up
	if err != nil {
		panic(err)
	}
	order := url.Values{"agency": {"AG01"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}}
	signed, err := paygate.SignForm(key, order, time.Unix(1_800_000_000, 0))
	if err != nil {
		panic(err)
	}
	fmt.Println(signed.Get("exp"), signed.Get("signature"))
	// Output: 1800000060 dac9e5ed2dd48c8a
}

func ExampleSignURL() {
	key, _ := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	u, err := paygate.SignURL(key, "https://reports.example/api/report/v1/payment?output=json&page=0", time.Unix(1_800_000_000, 0))
	if err != nil {
		panic(err)
	}
	fmt.Println(u)
	// Output: https://reports.example/api/report/v1/payment?exp=1800000060&output=json&page=0&signature=d9ab890ca3e7d26c
}

func ExampleVerifyCallback() {
	key, _ := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	// What the gateway POSTs to the returnUrl (here signed by the sandbox's helper).
	form, _ := gatewaytest.SignCallback(key, url.Values{"status": {"success"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}})

	fmt.Println(paygate.VerifyCallback(form, key))
	form.Set("amount", "1.00")
	fmt.Println(errors.Is(paygate.VerifyCallback(form, key), paygate.ErrSignatureMismatch))
	form.Del("signature")
	fmt.Println(errors.Is(paygate.VerifyCallback(form, key), paygate.ErrSignatureMissing))
	// Output:
	// <nil>
	// true
	// true
}

func ExampleParseAmount() {
	a, err := paygate.ParseAmount("10.5")
	fmt.Println(int64(a), a, err)
	_, err = paygate.ParseAmount("10.505")
	fmt.Println(err)
	// Output:
	// 1050 10.50 <nil>
	// paygate: invalid amount "10.505": more than two decimals
}

func ExampleFPXCode() {
	for _, c := range []paygate.FPXCode{"00", "09", "1C"} {
		fmt.Println(c.Status(), c.Reason())
	}
	// Output:
	// success Approved
	// pending Transaction Pending
	// failed Buyer Choose Cancel At Login Page
}

func ExampleWebhookSender_Send() {
	// A stand-in for the service on loopback.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-API-Password") != "demo-password" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, err := zakat.Validator{}.ValidateBatchJSON(body)
		fmt.Println("server:", r.URL.Path, err)
	}))
	defer srv.Close()

	sender, err := paygate.NewWebhookSender(srv.URL, "demo-password")
	if err != nil {
		panic(err)
	}
	report, err := sender.Send(context.Background(), []zakat.Transaction{{
		Agency: zakat.AgencyLZS, OrderNo: "A1", Amount: 2500, Name: "Ali", Email: "ali@example.com",
		Time:   time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("MYT", 8*3600)),
		Status: zakat.StatusSuccess,
		Data:   zakat.Data{Type: zakat.ZakatPendapatan, State: zakat.Selangor},
	}})
	fmt.Println(report.Accepted, err)
	// Output:
	// server: /api/bank/webhook <nil>
	// [A1] <nil>
}

// What became of each transaction, by its index in the slice given to
// Send: the report is never nil, and the error, a *SendError, carries the
// same report and says only that the send was incomplete.
func ExampleWebhookSender_Send_outcomes() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		batch, _ := zakat.Validator{}.ValidateBatchJSON(body)
		if batch.Transactions[0].OrderNo == "A2" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, "unknown zakat_name")
		}
	}))
	defer srv.Close()

	sender, err := paygate.NewWebhookSender(srv.URL, "demo-password", paygate.WithBatchSize(1))
	if err != nil {
		panic(err)
	}
	tx := zakat.Transaction{
		Agency: zakat.AgencyLZS, Amount: 2500, Name: "Ali", Email: "ali@example.com",
		Time:   time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("MYT", 8*3600)),
		Status: zakat.StatusSuccess,
	}
	txs := []zakat.Transaction{tx, tx, tx}
	txs[0].OrderNo, txs[1].OrderNo, txs[2].OrderNo = "A1", "A2", "A3"
	txs[2].Amount = -1 // invalid: never sent

	report, err := sender.Send(context.Background(), txs)
	for _, o := range report.Outcomes() {
		fmt.Println(o.Index, o.OrderNo, o.Status, "safe to resend:", o.Status.SafeToResend())
	}
	var se *paygate.SendError
	fmt.Println(errors.As(err, &se) && se.Report == report)
	// Output:
	// 0 A1 accepted safe to resend: false
	// 1 A2 rejected safe to resend: false
	// 2 A3 invalid safe to resend: false
	// true
}

// The bank webhook page's endpoint and agency codes: the URL's path is
// used as given, and the validator, the sender and the schema share the
// codes.
func ExampleWithWebhookValidator() {
	rules, err := zakat.NewValidator(zakat.ADBAgencies()...)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, err := rules.ValidateBatchJSON(body)
		fmt.Println("server:", r.URL.Path, err)
	}))
	defer srv.Close()

	sender, err := paygate.NewWebhookSender(srv.URL+"/api/adb/webhook", "demo-password", paygate.WithWebhookValidator(rules))
	if err != nil {
		panic(err)
	}
	tx := zakat.Transaction{
		Agency: "ADBLZS", OrderNo: "A1", Amount: 2500, Name: "Ali", Email: "ali@example.com",
		Time:   time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("MYT", 8*3600)),
		Status: zakat.StatusSuccess,
	}
	report, err := sender.Send(context.Background(), []zakat.Transaction{tx})
	fmt.Println(report.Accepted, err)
	fmt.Println(rules.Agencies(), zakat.Validator{}.ValidateTransactions([]zakat.Transaction{tx}))
	// Output:
	// server: /api/adb/webhook <nil>
	// [A1] <nil>
	// [ADBLZS ADBPPZ ADB] paygate: 1 validation problem
	// 	/transactions/0/agency: must be one of BANKLZS, BANKPPZ, BANK (the document's placeholders, the default; the real service's are ADBLZS, ADBPPZ, ADB; set them with zakat.NewValidator, PAYGATE_WEBHOOK_AGENCIES or the CLI's -agencies) (value "ADBLZS")
}
