package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

func main() {
	sandbox := flag.Bool("sandbox", false, "send to the embedded sandbox")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: bankfeed [-sandbox] BATCH.json")
	}
	url, password := os.Getenv("PAYGATE_WEBHOOK_URL"), os.Getenv("PAYGATE_WEBHOOK_PASSWORD")
	rules, err := zakat.NewValidator(zakat.ParseAgencies(os.Getenv("PAYGATE_WEBHOOK_AGENCIES"))...) // e.g. ADBLZS,ADBPPZ,ADB
	if err != nil {
		log.Fatal(err)
	}
	if *sandbox {
		sb := gatewaytest.NewServer(gatewaytest.WithWebhookValidator(rules))
		defer sb.Close()
		url, password = sb.WebhookURL(), sb.WebhookPassword
	}
	body, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	if err := feed(context.Background(), url, password, rules, body, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// feed validates a batch with rules (the agency codes) and sends it to the
// webhook endpoint at url.
func feed(ctx context.Context, url, password string, rules zakat.Validator, body []byte, out io.Writer) error {
	batch, err := rules.ValidateBatchJSON(body)
	if err != nil {
		return err // every problem, by JSON pointer; nothing was sent
	}
	sender, err := paygate.NewWebhookSender(url, password, paygate.WithWebhookValidator(rules))
	if err != nil {
		return err
	}
	// The report is never nil: print what became of each transaction
	// before returning the error, a *paygate.SendError that says only that
	// the send was incomplete (with the counts) and carries this report.
	report, err := sender.Send(ctx, batch.Transactions)
	for _, o := range report.Outcomes() {
		switch {
		case o.Err == nil:
			fmt.Fprintf(out, "%s %s\n", o.OrderNo, o.Status)
		case o.Status.SafeToResend():
			fmt.Fprintf(out, "%s %s (safe to resend): %v\n", o.OrderNo, o.Status, o.Err)
		default:
			fmt.Fprintf(out, "%s %s: %v\n", o.OrderNo, o.Status, o.Err)
		}
	}
	return err
}
