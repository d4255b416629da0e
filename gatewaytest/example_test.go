package gatewaytest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

func ExampleNewServer() {
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(10 * time.Millisecond))
	defer sb.Close()

	// The merchant under test: here it is down for the first delivery.
	calls := 0
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer shop.Close()

	client, _ := sb.Client()
	_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: "INV-1", Amount: 1000,
		Email: "a@example.com", ReturnURL: shop.URL + "/return"})
	if err != nil {
		panic(err)
	}
	_ = sb.Pay("INV-1", paygate.StatusSuccess)
	sb.Settle()
	for _, d := range sb.Callbacks() {
		fmt.Println(d.RefNo, d.Status, len(d.Attempts), "attempts, delivered:", d.Delivered)
	}
	// Output:
	// INV-1 success 2 attempts, delivered: true
}
