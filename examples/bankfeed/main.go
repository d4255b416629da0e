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
)

func main() {
	sandbox := flag.Bool("sandbox", false, "send to the embedded sandbox")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: bankfeed [-sandbox] BATCH.json")
	}
	url, password := os.Getenv("PAYGATE_WEBHOOK_URL"), os.Getenv("PAYGATE_WEBHOOK_PASSWORD")
	if *sandbox {
		sb := gatewaytest.NewServer()
		defer sb.Close()
		url, password = sb.URL, sb.WebhookPassword
	}
	body, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	if err := feed(context.Background(), url, password, body, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// feed validates a batch and sends it.
func feed(ctx context.Context, url, password string, body []byte, out io.Writer) error {
	batch, err := paygate.ValidateBatchJSON(body)
	if err != nil {
		return err // every problem, by JSON pointer; nothing was sent
	}
	sender, err := paygate.NewWebhookSender(url, password)
	if err != nil {
		return err
	}
	report, err := sender.Send(ctx, batch.Transactions)
	if report != nil {
		fmt.Fprintf(out, "accepted %v\nrejected %v\nunconfirmed (safe to resend) %v\n", report.Accepted, report.Rejected, report.Unconfirmed)
	}
	return err
}
