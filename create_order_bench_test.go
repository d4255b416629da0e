package paygate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paygate-go/paygate"
)

// BenchmarkRequestCreateOrder is Client.CreateOrder against a minimal
// gateway on loopback that reads the order and answers 303 to its
// checkout page.
func BenchmarkRequestCreateOrder(b *testing.B) {
	key, err := paygate.ParseKey(benchRequestKey)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("signature") == "" {
			http.Error(w, "bad order", http.StatusBadRequest)
			return
		}
		w.Header().Set("Location", "/checkout/"+r.PostForm.Get("refNo"))
		w.WriteHeader(http.StatusSeeOther)
	}))
	defer srv.Close()
	c, err := paygate.NewClient(paygate.WithKey(key), paygate.WithCheckoutURL(srv.URL), paygate.WithAgency("AGENCY01"))
	if err != nil {
		b.Fatal(err)
	}
	o := paygate.Order{RefNo: "INV-2026-000123", Amount: 14990, Email: "buyer+shop@example.com",
		ReturnURL: "https://shop.example.my/paygate/return?src=web"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CreateOrder(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != http.StatusSeeOther {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}
