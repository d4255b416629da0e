package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

func main() {
	from := flag.String("from", "", "first day, YYYY-MM-DD (default today)")
	to := flag.String("to", "", "last day, YYYY-MM-DD (default today)")
	sandbox := flag.Bool("sandbox", false, "use the embedded sandbox with a few demo orders")
	flag.Parse()
	ctx := context.Background()
	var client *paygate.Client
	var err error
	if *sandbox {
		sb := gatewaytest.NewServer()
		defer sb.Close()
		if client, err = sb.Client(); err == nil {
			err = demoOrders(ctx, sb, client)
		}
	} else {
		client, err = paygate.NewClientFromEnv()
	}
	if err != nil {
		log.Fatal(err)
	}
	today := time.Now().In(time.FixedZone("MYT", 8*3600)).Format(time.DateOnly)
	q, err := query(first(*from, today), first(*to, today))
	if err != nil {
		log.Fatal(err)
	}
	if err := reconcile(ctx, client, q, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// first returns s, or def when s is empty.
func first(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// query builds the report query for a day range.
func query(from, to string) (paygate.ReportQuery, error) {
	start, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return paygate.ReportQuery{}, fmt.Errorf("-from: %w", err)
	}
	end, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return paygate.ReportQuery{}, fmt.Errorf("-to: %w", err)
	}
	return paygate.ReportQuery{Start: start, End: end, ItemsPerPage: 100}, nil
}

// reconcile writes refNo, amount and status of every payment in the range.
func reconcile(ctx context.Context, client *paygate.Client, q paygate.ReportQuery, out io.Writer) error {
	w := csv.NewWriter(out)
	_ = w.Write([]string{"seller_order_no", "amount", "status", "fpx_debit_auth_code"})
	for row, err := range client.Payments(ctx, q) {
		if err != nil {
			return err
		}
		var r struct {
			SellerOrderNo string `json:"seller_order_no"`
			Amount        string `json:"amount"`
			Status        string `json:"status"`
			Code          string `json:"fpx_debit_auth_code"`
		}
		if err := row.Decode(&r); err != nil {
			return err
		}
		_ = w.Write([]string{r.SellerOrderNo, r.Amount, r.Status, r.Code})
	}
	w.Flush()
	return w.Error()
}

// demoOrders creates and settles a few orders in the sandbox (pay links
// have no returnUrl, so no callback is sent).
func demoOrders(_ context.Context, sb *gatewaytest.Server, client *paygate.Client) error {
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, st := range []paygate.Status{paygate.StatusSuccess, paygate.StatusFailed, paygate.StatusSuccess} {
		ref := fmt.Sprintf("DEMO-%d", i+1)
		link, err := client.PayURL(paygate.PayLink{Category: "fpx", RefNo: ref, Amount: paygate.Amount(1000 * (i + 1))})
		if err != nil {
			return err
		}
		resp, err := noFollow.Get(link) // the buyer opens the pay link
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			return fmt.Errorf("pay link %s: %s", link, resp.Status)
		}
		if err := sb.Pay(ref, st); err != nil {
			return err
		}
	}
	return nil
}
