// Command example wires paygate's OpenTelemetry Observer to the stdout
// exporters and runs one checkout, its callback, a reconciliation and a
// webhook send against the embedded sandbox (gatewaytest): the spans, then
// the metrics, are printed as JSON.
//
//	go run ./example
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	paygateotel "github.com/paygate-go/paygate/otel"
	"github.com/paygate-go/paygate/zakat"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

// run does the flows with the telemetry written to out.
func run(out io.Writer) error {
	ctx := context.Background()
	spans, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		return err
	}
	metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(out))
	if err != nil {
		return err
	}
	tracerProvider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewPeriodicReader(metrics, sdkmetric.WithInterval(time.Hour)) // exported once, at Shutdown
	meterProvider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(50 * time.Millisecond))
	defer sb.Close()
	handler := &paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()},
		Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}

	// code: readme-otel
	obs, err := paygateotel.New(tracerProvider, meterProvider) // nil providers: the global ones
	if err != nil {
		return err
	}
	observed := paygate.WithObserver(obs) // an Option of NewClient, a SenderOption of NewWebhookSender
	handler.Observer = obs                // a CallbackHandler's
	// end: readme-otel

	client, err := sb.Client(observed)
	if err != nil {
		return err
	}
	shop := httptest.NewServer(handler)
	defer shop.Close()

	if err := checkout(ctx, sb, client, shop.URL); err != nil {
		return err
	}
	if _, err := handler.Reconcile(ctx, client, []string{"INV-1001~cart-7"}); err != nil {
		return err
	}
	if err := send(ctx, sb, observed); err != nil {
		return err
	}
	if err := tracerProvider.Shutdown(ctx); err != nil {
		return err
	}
	return meterProvider.Shutdown(ctx)
}

// checkout creates an order, pays it on the hosted page and waits for its
// callback.
func checkout(ctx context.Context, sb *gatewaytest.Server, client *paygate.Client, shopURL string) error {
	res, err := client.CreateOrder(ctx, paygate.Order{RefNo: "INV-1001", ExtraData: "cart-7", Amount: 14990,
		Email: "buyer@example.com", ReturnURL: shopURL + "/paygate/return"})
	if err != nil {
		return err
	}
	resp, err := http.PostForm(res.Location, url.Values{"choice": {"success"}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	sb.Settle()
	return nil
}

// send posts one zakat transaction to the sandbox's webhook, observed.
func send(ctx context.Context, sb *gatewaytest.Server, observed paygate.TransportOption) error {
	sender, err := sb.WebhookSender(observed)
	if err != nil {
		return err
	}
	_, err = sender.Send(ctx, []zakat.Transaction{{Agency: zakat.AgencyLZS, OrderNo: "ZK-1", Amount: 5000, Name: "Ali",
		Email: "ali@example.com", Time: time.Now(), Status: zakat.StatusSuccess}})
	return err
}
