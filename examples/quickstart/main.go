package main

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
	"sync"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// shop is the merchant: its own record of orders, and the CallbackHandler on
// its returnUrl.
type shop struct {
	mu     sync.Mutex
	paid   map[string]int // fulfilments by refNo
	notice chan string
}

func run(out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(200 * time.Millisecond))
	defer sb.Close()
	fmt.Fprintf(out, "sandbox at %s, agency %s\n", sb.URL, sb.Agency)

	s := &shop{paid: map[string]int{}, notice: make(chan string, 4)}
	merchant := httptest.NewServer(s.handler(sb.Key()))
	defer merchant.Close()
	client, err := sb.Client()
	if err != nil {
		return err
	}
	checkout, err := createAndPay(ctx, out, client, merchant.URL)
	if err != nil {
		return err
	}
	if err := browserReturn(out, sb, checkout); err != nil {
		return err
	}
	if err := s.directCallback(ctx, out, sb); err != nil {
		return err
	}
	if err := reconcile(ctx, out, client); err != nil {
		return err
	}
	fmt.Fprintln(out, "all five stages behaved as docs/protocol.md says")
	return nil
}

// handler is the shop's CallbackHandler: it fulfils a verified success once
// and shows the buyer's browser a page that reveals nothing.
func (s *shop) handler(key paygate.Key) *paygate.CallbackHandler {
	return &paygate.CallbackHandler{
		Keys: []paygate.Key{key},
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
			s.mu.Lock()
			s.paid[cb.RefNo]++
			s.mu.Unlock()
			s.notice <- fmt.Sprintf("signed callback verified: %s %s RM %s, FPX %s -> order fulfilled", cb.Status, cb.RefNo, cb.Amount, cb.FPX.DebitAuthCode.Describe())
			return nil
		}),
		OnReturn: func(w http.ResponseWriter, _ *http.Request, _ *paygate.Callback) {
			// Display only, and unsigned: anyone can post any refNo, so the
			// page shows nothing of the order (its state comes from the
			// signed callback, and the buyer sees it behind their login).
			fmt.Fprint(w, "thank you: your payment is being confirmed")
		},
	}
}

// createAndPay is stages 1 and 2: the merchant creates the order, and the
// buyer pays on the hosted page (the sandbox's Pay button). It returns the
// hosted page's URL.
func createAndPay(ctx context.Context, out io.Writer, client *paygate.Client, merchantURL string) (string, error) {
	// 1. Create order.
	order := paygate.Order{RefNo: "INV-1001", ExtraData: "cart-7", Amount: 14990, Email: "buyer@example.com", ReturnURL: merchantURL + "/paygate/return"}
	res, err := client.CreateOrder(ctx, order)
	if err != nil {
		return "", fmt.Errorf("create order: %w", err)
	}
	fmt.Fprintf(out, "1. create order: POST /v2/checkout, signed -> %d, hosted page %s\n", res.StatusCode, res.Location)

	// 2. The buyer pays on the hosted page (the sandbox's Pay button).
	choice, err := http.PostForm(res.Location, url.Values{"choice": {"success"}})
	if err != nil {
		return "", fmt.Errorf("pay: %w", err)
	}
	choice.Body.Close()
	fmt.Fprintln(out, "2. buyer pays on the gateway's hosted checkout (the merchant never sees bank data)")
	return res.Location, nil
}

// browserReturn is stage 3: the browser's auto-submitted form, unsigned,
// display only.
func browserReturn(out io.Writer, sb *gatewaytest.Server, checkout string) error {
	orderNo := strings.TrimPrefix(checkout, sb.URL+"/checkout/")
	returnURL, fields, err := sb.BrowserReturn(orderNo)
	if err != nil {
		return err
	}
	if fields.Has("signature") {
		return errors.New("the browser return carried a signature")
	}
	back, err := http.PostForm(returnURL, fields)
	if err != nil {
		return fmt.Errorf("browser return: %w", err)
	}
	page, _ := io.ReadAll(back.Body)
	back.Body.Close()
	fmt.Fprintf(out, "3. indirect return (browser, unsigned, display only): page says %q\n", page)
	return nil
}

// directCallback is stage 4: the signed direct callback, server to server,
// fulfils the order; a retry of the same callback changes nothing.
func (s *shop) directCallback(ctx context.Context, out io.Writer, sb *gatewaytest.Server) error {
	select {
	case msg := <-s.notice:
		fmt.Fprintf(out, "4. direct callback: %s\n", msg)
	case <-ctx.Done():
		return errors.New("no direct callback")
	}
	sb.Settle()
	s.mu.Lock()
	fulfilled := s.paid["INV-1001"] // the base reference, without the extra data
	s.mu.Unlock()
	if fulfilled != 1 {
		return fmt.Errorf("fulfilled %d times", fulfilled)
	}
	return nil
}

// reconcile is stage 5: today's approved payments from the report, and the
// order looked up by the reference it was created with.
func reconcile(ctx context.Context, out io.Writer, client *paygate.Client) error {
	today := time.Now().In(time.FixedZone("MYT", 8*3600))
	rows := 0
	for row, err := range client.Payments(ctx, paygate.ReportQuery{Start: today, End: today, ApprovedOnly: true}) {
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		var r struct {
			SellerOrderNo string `json:"seller_order_no"`
			Amount        string `json:"amount"`
		}
		if err := row.Decode(&r); err != nil {
			return err
		}
		rows++
		fmt.Fprintf(out, "5. reconcile: report row %s RM %s", r.SellerOrderNo, r.Amount)
	}
	rec, err := client.LookupOrder(ctx, "INV-1001~cart-7")
	if err != nil {
		return fmt.Errorf("lookup: %w", err)
	}
	var st struct {
		Status string `json:"status"`
	}
	if err := rec.Decode(&st); err != nil || rows != 1 || st.Status != "success" {
		return fmt.Errorf("reconcile: %d rows, status %q, %v", rows, st.Status, err)
	}
	fmt.Fprintf(out, "; lookup says %s\n", st.Status)
	return nil
}
