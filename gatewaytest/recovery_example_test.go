package gatewaytest_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// A merchant's recovery job tested against the sandbox: INV-1's callback
// never arrives, INV-2 is authorised two days late (in test time: the
// clock is advanced, nothing sleeps), and a reconciliation of the awaited
// orders fulfils each paid one once.
func ExampleWithCallbackLoss() {
	clock := gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	sb := gatewaytest.NewServer(
		gatewaytest.WithTestClock(clock),
		gatewaytest.WithCallbackLoss(func(ref string) bool { return ref == "INV-1" }),
		gatewaytest.WithLateSettlement(48*time.Hour, func(ref string) bool { return ref == "INV-2" }),
	)
	defer sb.Close()

	fulfilled := map[string]int{}
	shop := &paygate.CallbackHandler{
		Keys:   []paygate.Key{sb.Key()},
		Now:    clock.Now, // the callbacks' times are the test clock's
		Logger: slog.New(slog.DiscardHandler),
		Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error { fulfilled[cb.RefNo]++; return nil }),
	}
	srv := httptest.NewServer(shop)
	defer srv.Close()

	client, _ := sb.Client()
	for _, ref := range []string{"INV-1", "INV-2"} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 1000,
			Email: "a@example.com", ReturnURL: srv.URL + "/return"})
		if err != nil {
			panic(err)
		}
		_ = sb.Pay(ref, paygate.StatusSuccess)
	}
	clock.Advance(48 * time.Hour) // INV-2's late success, delivered before Advance returns
	for _, d := range sb.Callbacks() {
		fmt.Println(d.RefNo, d.Status, "dropped:", d.Dropped, "delivered:", d.Delivered)
	}

	rec, err := shop.Reconcile(context.Background(), client, []string{"INV-1", "INV-2"})
	if err != nil {
		panic(err)
	}
	for _, e := range rec.Entries {
		fmt.Println(e.RefNo, e.Outcome)
	}
	fmt.Println(fulfilled)
	// Output:
	// INV-1 success dropped: true delivered: false
	// INV-2 pending dropped: false delivered: true
	// INV-2 success dropped: false delivered: true
	// INV-1 fulfilled
	// INV-2 already_fulfilled
	// map[INV-1:1 INV-2:1]
}
