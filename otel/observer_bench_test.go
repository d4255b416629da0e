package paygateotel_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/observe"
	paygateotel "github.com/paygate-go/paygate/otel"
)

// observers are the cases of the overhead benchmarks: no Observer; this
// package's with OpenTelemetry's no-op providers (wired, no SDK
// installed); and with the OpenTelemetry SDK behind it (every span
// sampled and handed to an exporter that drops it; metrics aggregated for
// a manual reader).
func observers(b *testing.B) []struct {
	name string
	obs  observe.Observer
} {
	b.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	obs, err := paygateotel.New(tp, mp)
	if err != nil {
		b.Fatal(err)
	}
	noops, err := paygateotel.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		obs  observe.Observer
	}{{"none", nil}, {"noop", noops}, {"otel", obs}}
}

// BenchmarkCallback serves a new verified success (Fulfil runs once) to a
// CallbackHandler in process, without and with the Observer.
func BenchmarkCallback(b *testing.B) {
	key, err := paygate.ParseKey("5b0c2f0e-9d2a-4a51-8f3e-6c1d7e9a2b40")
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range observers(b) {
		b.Run(o.name, func(b *testing.B) {
			h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Observer: o.obs,
				Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				ref := "INV-" + strconv.Itoa(i)
				r, err := gatewaytest.NewCallbackRequest(key, "/paygate/return", url.Values{"status": {"success"}, "refNo": {ref},
					"orderNo": {"GW" + ref}, "amount": {"10.00"}})
				if err != nil {
					b.Fatal(err)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("answered %d", w.Code)
				}
			}
		})
	}
}

// BenchmarkCreateOrder creates an order at the sandbox over loopback
// HTTP, without and with the Observer.
func BenchmarkCreateOrder(b *testing.B) {
	sb := gatewaytest.NewServer()
	b.Cleanup(sb.Close)
	i := 0 // every run's references are new to the sandbox
	for _, o := range observers(b) {
		b.Run(o.name, func(b *testing.B) {
			opts := []paygate.Option{}
			if o.obs != nil {
				opts = append(opts, paygate.WithObserver(o.obs))
			}
			client, err := sb.Client(opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				i++
				_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: o.name + "-" + strconv.Itoa(i), Amount: 1000,
					Email: "a@example.com", ReturnURL: "https://shop.example.my/return"})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
