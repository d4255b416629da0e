package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paygate-go/paygate"
)

// discardWriter keeps only the status code, so that the handlers are timed,
// not a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	return len(p), nil
}
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

// bareHandler is the floor: parse the form, answer 200.
var bareHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
})

// serveFrom returns a call that serves the next of bodies to h (in turn),
// reusing one request and writer, and fails on an answer other than 200.
func serveFrom(b *testing.B, h func() http.Handler, bodies []string) func() {
	r := httptest.NewRequest(http.MethodPost, "/return", nil)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := &discardWriter{h: http.Header{}}
	i := 0
	handler := h()
	return func() {
		if i == len(bodies) {
			i, handler = 0, h() // a fresh handler: every body is a new event again
		}
		// As a server's request: the body and its Content-Length.
		r.Body, r.ContentLength, r.PostForm, r.Form = io.NopCloser(strings.NewReader(bodies[i])), int64(len(bodies[i])), nil, nil
		i++
		w.code = 0
		handler.ServeHTTP(w, r)
		if w.code != http.StatusOK {
			b.Fatal(w.code)
		}
	}
}

// BenchmarkHandler: CallbackHandler in process with its MemoryDeduper, on
// the 11-field callback, against the bare handler on the same bodies: a
// verified duplicate (the gateway's retries) and a new event (claim,
// fulfil, complete).
func BenchmarkHandler(b *testing.B) {
	key := mustKey(b)
	newHandler := func() http.Handler {
		return &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
	}
	b.Run("duplicate", func(b *testing.B) {
		body := []string{callback(b, key, "INV-2026-000123~cart 88").Encode()}
		h := newHandler()
		serveFrom(b, func() http.Handler { return h }, body)() // the first delivery fulfils
		interleave(b, 200, side{"paygate", serveFrom(b, func() http.Handler { return h }, body)},
			side{"bare", serveFrom(b, func() http.Handler { return bareHandler }, body)})
	})
	b.Run("new", func(b *testing.B) {
		bodies := make([]string, 4096)
		for i := range bodies {
			bodies[i] = callback(b, key, fmt.Sprintf("INV-2026-%07d~cart 88", i)).Encode()
		}
		interleave(b, 200, side{"paygate", serveFrom(b, newHandler, bodies)},
			side{"bare", serveFrom(b, func() http.Handler { return bareHandler }, bodies)})
	})
}

// BenchmarkHandlerHTTP: the same over HTTP on loopback, keep-alive, with 8
// and 64 clients at once: CallbackHandler against a bare handler, each on
// its own httptest server, batches of 256 requests alternating. "req/s-x"
// is the handler's requests per second over the bare server's.
func BenchmarkHandlerHTTP(b *testing.B) {
	key := mustKey(b)
	bodies := make([]string, 4096)
	for i := range bodies {
		bodies[i] = callback(b, key, fmt.Sprintf("INV-2026-%07d~cart 88", i)).Encode()
	}
	for _, event := range []string{"duplicate", "new"} {
		for _, conc := range []int{8, 64} {
			b.Run(fmt.Sprintf("%s/c=%d", event, conc), func(b *testing.B) {
				var h http.Handler = &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })}
				if event == "new" {
					// A fresh handler for each pass over the bodies: each is a
					// new event. Swapped without a lock, so that the harness
					// adds no contention to the handler's side (a request at
					// the turn may meet the old handler: a duplicate, 200 too).
					var cur atomic.Pointer[paygate.CallbackHandler]
					var served atomic.Int64
					h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if served.Add(1)%int64(len(bodies)) == 1 {
							cur.Store(&paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: paygate.FulfilFunc(func(context.Context, *paygate.Callback) error { return nil })})
						}
						cur.Load().ServeHTTP(w, r)
					})
				}
				sub := httpLoad(b, h, conc, bodies, event == "new")
				bare := httpLoad(b, bareHandler, conc, bodies, event == "new")
				res := interleave(b, 1, side{"paygate", sub}, side{"bare", bare})
				b.ReportMetric(res[1].ns/res[0].ns, "req/s-x/bare")
			})
		}
	}
}

// httpLoad returns a call that posts 256 callbacks to a server running h,
// conc at a time on kept-alive connections: the same body each time for a
// duplicate, the next of bodies in turn for a new event.
func httpLoad(b *testing.B, h http.Handler, conc int, bodies []string, next bool) func() {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}}
	b.Cleanup(client.CloseIdleConnections)
	var mu sync.Mutex
	i := 0
	body := func() string {
		if !next {
			return bodies[0]
		}
		mu.Lock()
		defer mu.Unlock()
		i++
		return bodies[i%len(bodies)]
	}
	post := func() {
		resp, err := client.Post(srv.URL+"/return", "application/x-www-form-urlencoded", strings.NewReader(body()))
		if err != nil {
			b.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Errorf("status %d", resp.StatusCode)
		}
	}
	post() // a duplicate's first delivery fulfils
	return func() { concurrently(conc, 256, post) }
}
