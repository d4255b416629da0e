package paygate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DefaultCallbackBodyLimit caps a callback body unless BodyLimit says
// otherwise. A genuine callback is a few kilobytes.
const DefaultCallbackBodyLimit = 64 << 10

// DefaultLease is how long a delivery holds its claim on an event while the
// hook runs, unless Lease says otherwise. It is also the hook's time limit.
const DefaultLease = 2 * time.Minute

// CallbackHandler is the http.Handler for the merchant's returnUrl (spec,
// endpoint 6 and Events). It makes the receiver rules hold by construction:
//
//   - A POST without a signature is the buyer's browser (the indirect
//     return): OnReturn renders a page from the unverified fields, or the
//     answer is 403. It never fulfils.
//   - A signature that does not verify under Keys: 403, OnReject, nothing
//     else.
//   - A verified `success`: Fulfil, at most once per refNo for the life of the
//     Deduper, whatever the gateway's retries, duplicates or replicas.
//   - A verified other status (pending, failed, anything else): OnStatus, once
//     per (refNo, orderNo, status). A pending followed by a success is two
//     events.
//   - A hook that fails: 500 and the claim is released, so the gateway's next
//     retry (about every 30 s) tries again. A completed event: 200 without
//     calling anything. An event another delivery is handling: 503.
//
// A verified `success` whose fpx_debit_auth_code is present and not 00
// contradicts the spec's table; it is not fulfilled but handed to OnStatus
// (Callback.Consistent reports false) and logged at warning level, so that a
// person looks before goods leave.
//
// Other answers: 405 for a method other than POST, 415 for a body that is not
// application/x-www-form-urlencoded, 413 over BodyLimit, 400 for a body or
// verified fields that do not parse.
type CallbackHandler struct {
	// Keys verify the signature; several allow key rotation. Required.
	Keys []Key
	// Fulfil is called for a verified success, once per refNo. Required.
	Fulfil func(ctx context.Context, cb *Callback) error
	// OnStatus is called for every other verified event, once each. Optional.
	OnStatus func(ctx context.Context, cb *Callback) error
	// OnReturn renders the buyer's browser return (unsigned, display only).
	// Optional: without it the browser gets 403.
	OnReturn func(w http.ResponseWriter, r *http.Request, cb *Callback)
	// OnReject is told of every callback refused for its signature or shape.
	// Optional.
	OnReject func(r *http.Request, err error)
	// Deduper records handled events; nil means an in-memory one (one
	// replica). Merchants with several replicas share one, e.g. sqldedup.
	Deduper Deduper
	// BodyLimit caps the body; 0 means DefaultCallbackBodyLimit.
	BodyLimit int64
	// Lease is how long a delivery holds an event while its hook runs, and
	// the hook's time limit; 0 means DefaultLease.
	Lease time.Duration
	// Logger receives one line per refused or failed callback; nil logs
	// nothing.
	Logger *slog.Logger

	initOnce sync.Once
	memory   *MemoryDeduper
}

// ServeHTTP implements the receiver rules.
func (h *CallbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		h.reject(w, r, http.StatusUnsupportedMediaType, errors.New("paygate: callback body is not application/x-www-form-urlencoded"))
		return
	}
	limit := h.BodyLimit
	if limit <= 0 {
		limit = DefaultCallbackBodyLimit
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.reject(w, r, http.StatusRequestEntityTooLarge, fmt.Errorf("paygate: callback body over %d bytes", limit))
		return
	case err != nil:
		h.reject(w, r, http.StatusBadRequest, fmt.Errorf("paygate: reading callback body: %w", err))
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		h.reject(w, r, http.StatusBadRequest, fmt.Errorf("paygate: callback body: %w", err))
		return
	}
	switch err := VerifyCallback(form, h.Keys...); {
	case errors.Is(err, ErrInvalidKey):
		// Misconfigured (no key): 500 keeps the gateway retrying until fixed.
		h.log(r, slog.LevelError, "callback handler has no valid key", "err", err)
		http.Error(w, "callback handler misconfigured", http.StatusInternalServerError)
		return
	case errors.Is(err, ErrSignatureMissing):
		h.browserReturn(w, r, form)
		return
	case err != nil:
		h.reject(w, r, http.StatusForbidden, err)
		return
	}
	cb, err := ParseCallback(form)
	if err != nil {
		h.reject(w, r, http.StatusBadRequest, err)
		return
	}
	cb.Verified = true
	h.handle(w, r, cb)
}

// browserReturn serves the unsigned POST of the buyer's browser: display only.
func (h *CallbackHandler) browserReturn(w http.ResponseWriter, r *http.Request, form url.Values) {
	if h.OnReturn == nil {
		h.reject(w, r, http.StatusForbidden, ErrSignatureMissing)
		return
	}
	cb, err := ParseCallback(form)
	if err != nil {
		h.reject(w, r, http.StatusBadRequest, err)
		return
	}
	h.OnReturn(w, r, cb)
}

// handle runs the hook of a verified callback once per event.
func (h *CallbackHandler) handle(w http.ResponseWriter, r *http.Request, cb *Callback) {
	hook, key := h.OnStatus, "status|"+cb.RefNo+"|"+cb.OrderNo+"|"+string(cb.Status)
	if cb.Status == StatusSuccess && cb.Consistent() {
		hook, key = h.Fulfil, "fulfil|"+cb.RefNo
	} else if cb.Status == StatusSuccess {
		h.log(r, slog.LevelWarn, "success callback with a non-00 FPX code: not fulfilled, handed to OnStatus",
			"refNo", cb.RefNo, "fpx_debit_auth_code", string(cb.FPX.DebitAuthCode))
	}
	switch {
	case hook == nil && cb.Status == StatusSuccess && cb.Consistent():
		// A paid order with nowhere to go: keep the gateway retrying.
		h.log(r, slog.LevelError, "callback handler has no Fulfil; paid order not handled", "refNo", cb.RefNo)
		http.Error(w, "callback handler misconfigured", http.StatusInternalServerError)
		return
	case hook == nil:
		w.WriteHeader(http.StatusOK) // no OnStatus: nothing to do; stop the retries
		return
	}
	lease := h.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	// The hook outlives a dropped connection but not its lease.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), lease)
	defer cancel()
	d := h.deduper()
	state, token, err := d.Claim(ctx, key, lease)
	switch {
	case err != nil:
		h.log(r, slog.LevelError, "dedupe claim failed", "refNo", cb.RefNo, "err", err)
		http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
		return
	case state == Done:
		w.WriteHeader(http.StatusOK)
		return
	case state == Busy:
		w.Header().Set("Retry-After", "30")
		http.Error(w, "being handled by another delivery", http.StatusServiceUnavailable)
		return
	}
	if err := callHook(ctx, hook, cb); err != nil {
		h.log(r, slog.LevelError, "callback hook failed; the gateway will retry", "refNo", cb.RefNo, "status", string(cb.Status), "err", err)
		if rerr := d.Release(ctx, key, token); rerr != nil {
			h.log(r, slog.LevelError, "dedupe release failed", "refNo", cb.RefNo, "err", rerr)
		}
		http.Error(w, "callback handling failed", http.StatusInternalServerError)
		return
	}
	if err := d.Complete(ctx, key, token); err != nil {
		// The hook ran but its completion is not recorded: answer 500 so the
		// gateway retries; the claim keeps duplicates out until its lease ends.
		h.log(r, slog.LevelError, "dedupe complete failed after the hook ran", "refNo", cb.RefNo, "err", err)
		http.Error(w, "callback handling failed", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// callHook runs a hook, turning a panic into an error so that the claim is
// released rather than left to lapse.
func callHook(ctx context.Context, hook func(context.Context, *Callback) error, cb *Callback) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("paygate: callback hook panicked: %v", p)
		}
	}()
	return hook(ctx, cb)
}

// deduper returns the configured Deduper or the handler's in-memory one.
func (h *CallbackHandler) deduper() Deduper {
	if h.Deduper != nil {
		return h.Deduper
	}
	h.initOnce.Do(func() { h.memory = &MemoryDeduper{} })
	return h.memory
}

// reject answers status, tells OnReject and logs.
func (h *CallbackHandler) reject(w http.ResponseWriter, r *http.Request, status int, err error) {
	if h.OnReject != nil {
		h.OnReject(r, err)
	}
	h.log(r, slog.LevelWarn, "callback refused", "status", status, "err", err)
	http.Error(w, http.StatusText(status), status)
}

// log writes one line with the request's method and path, never its body.
func (h *CallbackHandler) log(r *http.Request, level slog.Level, msg string, args ...any) {
	if h.Logger == nil {
		return
	}
	h.Logger.Log(r.Context(), level, msg, append([]any{"method", r.Method, "path", r.URL.Path}, args...)...)
}
