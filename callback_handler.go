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
	"sync/atomic"
	"time"
)

// Defaults of CallbackHandler's limits.
const (
	// DefaultCallbackBodyLimit caps a callback body unless BodyLimit says
	// otherwise. A genuine callback is a few kilobytes.
	DefaultCallbackBodyLimit = 64 << 10
	// DefaultCallbackReadTimeout bounds reading a callback body unless
	// ReadTimeout says otherwise: a client sending a byte a second does not
	// hold a connection for ever.
	DefaultCallbackReadTimeout = 5 * time.Second
	// DefaultLease is how long a claim on an event lasts between renewals,
	// unless Lease says otherwise. A live hook's claim is renewed every third
	// of it; a crashed replica's claim lapses within it, before the gateway's
	// next retry about 30 s later is long overdue.
	DefaultLease = 30 * time.Second
	// DefaultHookTimeout is the time limit of one Fulfil, OnStatus or
	// OnDoublePayment call unless HookTimeout says otherwise.
	DefaultHookTimeout = 2 * time.Minute
	// storeTimeout bounds each Claim, Complete and Release. They run on a
	// context of their own, never the hook's nearly spent one.
	storeTimeout = 5 * time.Second
)

// CallbackHandler is the http.Handler for the merchant's returnUrl
// (docs/protocol.md "Payment callback" and "Receiver rules"). It makes the
// receiver rules hold by construction:
//
//   - A POST without a signature is the buyer's browser (the indirect
//     return, docs/assumptions.md A-browser-return): OnReturn renders a page
//     from the unverified fields, or the answer is 403. It never fulfils.
//   - A signature that does not verify under Keys: 403, OnReject, nothing
//     else.
//   - A verified `success`: Fulfil, once per base refNo (the reference before
//     any "~"), whatever the gateway's retries, duplicates or replicas, and
//     whatever the fields the protocol does not define look like. A success
//     that is not Consistent (an fpx_debit_auth_code other than 00, a field
//     that did not parse) is fulfilled all the same and logged at warning
//     level: Fulfil can check cb.Consistent() and hold the order for review.
//   - A verified `success` for a refNo already fulfilled under another
//     orderNo is a second payment the merchant must refund: OnDoublePayment,
//     once per such orderNo, a warning in the log, never a second Fulfil.
//   - A verified other status (pending, failed, anything else:
//     docs/assumptions.md A-unknown-status): OnStatus, once per (refNo,
//     orderNo, status). A pending followed by a success is two
//     events.
//   - A hook that fails or panics: 500 and the claim is released, so the
//     gateway's next retry (about every 30 s) tries again. A completed event:
//     200 without calling anything. An event another delivery is handling:
//     503 with Retry-After.
//
// What is guaranteed: while the processes sharing the Deduper live, each
// event's hook completes at most once (its claim is renewed while the hook
// runs, and the hook's context is cancelled if renewal fails), and every
// verified event is retried by the gateway until its hook succeeds. After a
// crash between the hook's side effect and the recording of its completion,
// the event is handled again when its lease lapses: at least once. Make
// Fulfil idempotent on cb.RefNo (the base reference), e.g. with a unique
// constraint in the same transaction as the order's update.
//
// The gateway is assumed to retry until it gets a 2xx (docs/assumptions.md
// A-callback-retries): the handler answers 5xx only when a retry can help.
//
// Other answers: 405 for a method other than POST, 415 for a body that is not
// application/x-www-form-urlencoded, 413 over BodyLimit, 400 for a body that
// does not parse or a verified callback without `status` or `refNo`.
//
// A form already parsed by middleware (r.ParseForm consumes the body) is
// read from r.PostForm.
type CallbackHandler struct {
	// Keys verify the signature; several allow key rotation. Required.
	Keys []Key
	// Fulfil is called for a verified success, once per base refNo.
	// Required.
	Fulfil func(ctx context.Context, cb *Callback) error
	// OnStatus is called for every other verified event, once each.
	// Optional.
	OnStatus func(ctx context.Context, cb *Callback) error
	// OnDoublePayment is called once per verified success whose base refNo
	// was already fulfilled under paidOrderNo and whose orderNo differs: the
	// buyer paid twice and the merchant must refund one payment (an
	// assumption: docs/assumptions.md A-double-payment). Optional:
	// without it the handler only logs a warning.
	OnDoublePayment func(ctx context.Context, cb *Callback, paidOrderNo string) error
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
	// ReadTimeout bounds reading the body, through the connection's read
	// deadline; 0 means DefaultCallbackReadTimeout.
	ReadTimeout time.Duration
	// Lease is how long a claim lasts between renewals; 0 means
	// DefaultLease. It is renewed every Lease/3 while the hook runs.
	Lease time.Duration
	// HookTimeout is the time limit of one hook call, separate from the
	// lease; 0 means DefaultHookTimeout.
	HookTimeout time.Duration
	// Logger receives one line per refused, failed or suspicious callback;
	// nil means slog.Default(). To log nothing, pass
	// slog.New(slog.DiscardHandler).
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
	form, status, err := h.readForm(w, r)
	if err != nil {
		h.reject(w, r, status, err)
		return
	}
	switch err := VerifyCallback(form, h.Keys...); {
	case errors.Is(err, ErrInvalidKey):
		// Misconfigured (no key): 500 keeps the gateway retrying until fixed.
		h.log(r, slog.LevelError, "callback handler has no valid key", "err", err)
		http.Error(w, "callback handler misconfigured", http.StatusInternalServerError)
		return
	case errors.Is(err, ErrSignatureMissing):
		if len(form) == 0 {
			h.log(r, slog.LevelWarn, "callback with an empty form: did a middleware read the body without r.ParseForm?")
		}
		h.browserReturn(w, r, form)
		return
	case err != nil:
		h.reject(w, r, http.StatusForbidden, err)
		return
	}
	cb, err := ParseCallback(form)
	if err != nil {
		// Signed by the gateway, yet nothing to route it by: keep the gateway
		// retrying and make noise, rather than drop it with a 2xx.
		h.log(r, slog.LevelError, "verified callback cannot be routed", "err", err)
		h.reject(w, r, http.StatusBadRequest, err)
		return
	}
	cb.Verified = true
	h.handle(w, r, cb)
}

// readForm returns the callback's fields: r.PostForm when a middleware has
// parsed the form already, else the body, read under BodyLimit and
// ReadTimeout.
func (h *CallbackHandler) readForm(w http.ResponseWriter, r *http.Request) (url.Values, int, error) {
	if r.PostForm != nil {
		return r.PostForm, 0, nil
	}
	limit := h.BodyLimit
	if limit <= 0 {
		limit = DefaultCallbackBodyLimit
	}
	timeout := h.ReadTimeout
	if timeout <= 0 {
		timeout = DefaultCallbackReadTimeout
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("paygate: callback body over %d bytes", limit)
	case err != nil:
		// The deadline stays: net/http would otherwise wait for the rest of
		// a trickling body before it answers.
		return nil, http.StatusBadRequest, fmt.Errorf("paygate: reading callback body: %w", err)
	}
	if deadline {
		// Cleared once read: the hook may run longer, and an expired
		// deadline would cancel the request's context.
		_ = rc.SetReadDeadline(time.Time{})
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("paygate: callback body: %w", err)
	}
	return form, 0, nil
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

// event is one thing the handler acts on once: its dedupe key, its hook,
// and what its completion records.
type event struct {
	key    string
	hook   func(context.Context, *Callback) error
	result string
}

// handle acts on a verified callback once per event.
func (h *CallbackHandler) handle(w http.ResponseWriter, r *http.Request, cb *Callback) {
	if cb.Status != StatusSuccess {
		if h.OnStatus == nil {
			w.WriteHeader(http.StatusOK) // nothing to do; stop the retries
			return
		}
		h.once(w, r, cb, event{key: "status|" + cb.RefNo + "|" + cb.OrderNo + "|" + string(cb.Status), hook: h.OnStatus})
		return
	}
	if h.Fulfil == nil {
		// A paid order with nowhere to go: keep the gateway retrying.
		h.log(r, slog.LevelError, "callback handler has no Fulfil; paid order not handled", "refNo", cb.RefNo)
		http.Error(w, "callback handler misconfigured", http.StatusInternalServerError)
		return
	}
	if !cb.Consistent() {
		h.log(r, slog.LevelWarn, "verified success is inconsistent; fulfilling (check cb.Consistent() in Fulfil to hold it)",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "fpx_debit_auth_code", string(cb.FPX.DebitAuthCode),
			"problems", fmt.Sprint(cb.Problems))
	}
	paid, ok := h.once(w, r, cb, event{key: "fulfil|" + cb.RefNo, hook: h.Fulfil, result: cb.OrderNo})
	if !ok || paid == cb.OrderNo {
		return
	}
	if paid == "" || cb.OrderNo == "" {
		// One side has no orderNo: nothing proves a second payment.
		h.log(r, slog.LevelWarn, "success for a fulfilled refNo; an orderNo is missing, so it is taken for a retry",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "paidOrderNo", paid)
		w.WriteHeader(http.StatusOK)
		return
	}
	h.once(w, r, cb, event{key: "double|" + cb.RefNo + "|" + cb.OrderNo, hook: func(ctx context.Context, cb *Callback) error {
		h.log(r, slog.LevelWarn, "second payment for a fulfilled refNo: not fulfilled; refund it",
			"refNo", cb.RefNo, "orderNo", cb.OrderNo, "paidOrderNo", paid, "amount", cb.Amount.String())
		if h.OnDoublePayment == nil {
			return nil
		}
		return h.OnDoublePayment(ctx, cb, paid)
	}})
}

// once claims ev and runs its hook, answering the gateway. When the event was
// completed before, it answers nothing and returns what the completion
// recorded with ok true; the caller decides the answer.
func (h *CallbackHandler) once(w http.ResponseWriter, r *http.Request, cb *Callback, ev event) (recorded string, ok bool) {
	lease := h.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	d := h.deduper()
	sctx, cancel := h.storeContext(r)
	claimed := time.Now()
	claim, err := d.Claim(sctx, ev.key, lease)
	cancel()
	switch {
	case err != nil:
		h.log(r, slog.LevelError, "dedupe claim failed", "refNo", cb.RefNo, "err", err)
		w.Header().Set("Retry-After", "30")
		http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
		return "", false
	case claim.State == ClaimDone:
		if ev.result == "" || claim.Result == ev.result {
			w.WriteHeader(http.StatusOK)
			return claim.Result, false
		}
		return claim.Result, true
	case claim.State != ClaimAcquired:
		w.Header().Set("Retry-After", "30")
		http.Error(w, "being handled by another delivery", http.StatusServiceUnavailable)
		return "", false
	}
	var completed atomic.Bool
	hookErr := h.runRenewed(r, d, ev, claimed, claim.Token, lease, cb, &completed)
	sctx, cancel = h.storeContext(r)
	defer cancel()
	if hookErr != nil {
		h.log(r, slog.LevelError, "callback hook failed; the gateway will retry", "refNo", cb.RefNo, "status", string(cb.Status), "err", hookErr)
		if err := d.Release(sctx, ev.key, claim.Token); err != nil {
			h.log(r, slog.LevelError, "dedupe release failed", "refNo", cb.RefNo, "err", err)
		}
		http.Error(w, "callback handling failed", http.StatusInternalServerError)
		return "", false
	}
	if completed.Load() {
		// The hook committed the completion with its effect (HookClaim).
		w.WriteHeader(http.StatusOK)
		return "", false
	}
	if err := d.Complete(sctx, ev.key, claim.Token, ev.result); err != nil {
		// The hook ran but its completion is not recorded: answer 500 so the
		// gateway retries. If the claim was lost, another delivery may run
		// the hook again: that is the at-least-once case Fulfil must absorb.
		h.log(r, slog.LevelError, "dedupe complete failed after the hook ran", "refNo", cb.RefNo, "err", err)
		http.Error(w, "callback handling failed", http.StatusInternalServerError)
		return "", false
	}
	w.WriteHeader(http.StatusOK)
	return "", false
}

// storeContext is the context of one Deduper call: the request's values,
// not its cancellation (the work must be recorded even if the gateway hung
// up), and a short time limit of its own.
func (h *CallbackHandler) storeContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
}

// runRenewed runs the hook under HookTimeout while renewing its claim,
// taken at claimed for lease, every lease/3. When renewal says the claim is
// lost, or keeps failing until the lease could have lapsed, the hook's
// context is cancelled with that cause.
func (h *CallbackHandler) runRenewed(r *http.Request, d Deduper, ev event, claimed time.Time, token string, lease time.Duration, cb *Callback, completed *atomic.Bool) error {
	timeout := h.HookTimeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	// The hook outlives a dropped connection but not its time limit.
	ctx, cancelTimeout := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx = withHookClaim(ctx, HookClaim{Key: ev.key, Token: token, Result: ev.result}, completed)
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		h.renew(r, d, ev.key, token, claimed.Add(lease), lease, stop, cancel)
	}()
	err := callHook(ctx, ev.hook, cb)
	close(stop)
	<-renewed
	return err
}

// renew extends the claim, held until heldUntil, every lease/3 until stop is
// closed. A failed renewal is tried again every lease/30 while the claim is
// still surely held.
func (h *CallbackHandler) renew(r *http.Request, d Deduper, key, token string, heldUntil time.Time, lease time.Duration, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	every := max(lease/3, 3*time.Millisecond)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		sent := time.Now()
		ctx, done := context.WithDeadline(context.WithoutCancel(r.Context()), heldUntil)
		err := d.Renew(ctx, key, token, lease)
		done()
		switch {
		case err == nil:
			heldUntil = sent.Add(lease)
			t.Reset(every)
			continue
		case errors.Is(err, ErrClaimLost):
			h.log(r, slog.LevelError, "claim lost while the hook ran; cancelling the hook", "key", key)
			cancel(fmt.Errorf("paygate: callback claim lost while the hook ran: %w", err))
			return
		case !time.Now().Before(heldUntil):
			h.log(r, slog.LevelError, "claim renewal failed until the lease ran out; cancelling the hook", "key", key, "err", err)
			cancel(fmt.Errorf("paygate: callback claim renewal failed: %w", err))
			return
		}
		h.log(r, slog.LevelWarn, "claim renewal failed; trying again", "key", key, "err", err)
		t.Reset(every / 10)
	}
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

// log writes one line with the request's method and path, never its body,
// to Logger or slog.Default().
func (h *CallbackHandler) log(r *http.Request, level slog.Level, msg string, args ...any) {
	l := h.Logger
	if l == nil {
		l = slog.Default()
	}
	if !l.Enabled(r.Context(), level) {
		return
	}
	l.Log(r.Context(), level, msg, append([]any{"method", r.Method, "path", r.URL.Path}, args...)...)
}
