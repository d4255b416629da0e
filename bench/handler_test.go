package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
		r.Body, r.PostForm, r.Form = io.NopCloser(strings.NewReader(bodies[i])), nil, nil
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
		return &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: func(context.Context, *paygate.Callback) error { return nil }}
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
