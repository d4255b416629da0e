package shop

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"sync"

	"github.com/paygate-go/paygate"
)

// order is the shop's own record of an order.
type order struct {
	RefNo   string
	Amount  paygate.Amount
	Status  string // "awaiting payment", "paid", "pending", "failed"
	Fulfils int    // how many times it was fulfilled (must never exceed 1)
}

// shop is the merchant's application.
type shop struct {
	client *paygate.Client
	base   string
	mu     sync.Mutex
	orders map[string]*order
	seq    int
}

// price is the one product's price: RM 25.90.
const price paygate.Amount = 2590

// New returns the shop's handler; base is its own URL, for returnUrl.
func New(client *paygate.Client, key paygate.Key, base string) http.Handler {
	s := &shop{client: client, base: base, orders: map[string]*order{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.product)
	mux.HandleFunc("POST /buy", s.buy)
	mux.HandleFunc("GET /orders", s.list)
	mux.HandleFunc("GET /orders/{ref}", s.show)
	mux.Handle("POST /paygate/return", &paygate.CallbackHandler{
		Keys:     []paygate.Key{key},
		Fulfil:   paygate.FulfilFunc(s.fulfil),
		OnStatus: s.onStatus,
		OnReturn: func(w http.ResponseWriter, r *http.Request, cb *paygate.Callback) {
			// Display only, and unsigned: anyone can post any refNo, so
			// nothing is looked up from it. Send the buyer to their orders
			// (in a real shop behind their login), which read our records.
			http.Redirect(w, r, "/orders", http.StatusSeeOther)
		},
	})
	return mux
}

var pages = template.Must(template.New("").Parse(`
{{define "product"}}<!DOCTYPE html><html><head><meta charset="utf-8"><title>Kedai</title></head><body>
<h1>Zakat fitrah kit</h1><p>RM {{.}}</p>
<form method="post" action="/buy"><button id="buy" type="submit">Buy</button></form>
<p><a href="/orders">Orders</a></p></body></html>{{end}}
{{define "order"}}<!DOCTYPE html><html><head><meta charset="utf-8"><title>Order {{.RefNo}}</title></head><body>
<h1>Order {{.RefNo}}</h1><p>RM {{.Amount}}</p><p id="status">{{.Status}}</p>
<p><a href="/orders">Orders</a></p></body></html>{{end}}
{{define "orders"}}<!DOCTYPE html><html><head><meta charset="utf-8"><title>Orders</title></head><body>
<h1>Orders</h1><table><tr><th>refNo</th><th>amount</th><th>status</th><th>fulfilled</th></tr>
{{range .}}<tr><td><a href="/orders/{{.RefNo}}">{{.RefNo}}</a></td><td>{{.Amount}}</td><td class="status">{{.Status}}</td><td class="fulfils">{{.Fulfils}}</td></tr>
{{end}}</table></body></html>{{end}}`))

func (s *shop) product(w http.ResponseWriter, _ *http.Request) {
	_ = pages.ExecuteTemplate(w, "product", price)
}

// buy records the order and answers the auto-submitting checkout form.
func (s *shop) buy(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.seq++
	o := &order{RefNo: fmt.Sprintf("KEDAI-%04d", s.seq), Amount: price, Status: "awaiting payment"}
	s.orders[o.RefNo] = o
	s.mu.Unlock()
	form, err := s.client.CheckoutForm(paygate.Order{
		RefNo: o.RefNo, Amount: o.Amount, Email: "buyer@example.com", ReturnURL: s.base + "/paygate/return",
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = form.WriteHTML(w)
}

// fulfil is called once per paid order, from a verified callback only.
func (s *shop) fulfil(_ context.Context, cb *paygate.Callback) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[cb.RefNo]
	if !ok {
		return fmt.Errorf("unknown order %q", cb.RefNo)
	}
	if cb.Amount != o.Amount {
		return fmt.Errorf("order %s: paid %s, expected %s", o.RefNo, cb.Amount, o.Amount)
	}
	o.Status = "paid"
	o.Fulfils++
	return nil
}

// onStatus records a verified pending or failed result.
func (s *shop) onStatus(_ context.Context, cb *paygate.Callback) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.orders[cb.RefNo]; ok && o.Status != "paid" {
		o.Status = string(cb.Status)
	}
	return nil
}

func (s *shop) show(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.orders[r.PathValue("ref")]
	var c order
	if ok {
		c = *o
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_ = pages.ExecuteTemplate(w, "order", c)
}

func (s *shop) list(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	list := make([]order, 0, len(s.orders))
	for _, o := range s.orders {
		list = append(list, *o)
	}
	s.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].RefNo < list[j].RefNo })
	_ = pages.ExecuteTemplate(w, "orders", list)
}
