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
	rules, err := paygate.NewWebhookValidator(zakat.ParseAgencies(os.Getenv("PAYGATE_WEBHOOK_AGENCIES"))...) // e.g. ADBLZS,ADBPPZ,ADB
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
func feed(ctx context.Context, url, password string, rules paygate.WebhookValidator, body []byte, out io.Writer) error {
	batch, err := rules.ValidateBatchJSON(body)
	if err != nil {
		return err // every problem, by JSON pointer; nothing was sent
	}
	sender, err := paygate.NewWebhookSender(url, password, paygate.WithWebhookValidator(rules))
	if err != nil {
		return err
	}
	report, err := sender.Send(ctx, batch.Transactions)
	if report != nil {
		fmt.Fprintf(out, "accepted %v\nrejected %v\nunconfirmed (safe to resend) %v\n", report.Accepted, report.Rejected, report.Unconfirmed)
	}
	return err
}
