package paygate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"
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
//   - A verified pending or failed: OnStatus, once per (refNo, orderNo,
//     status). A pending followed by a success is two events. One that
//     comes after the refNo was fulfilled is stale (Callback.Stale, a
//     warning): the order never regresses (docs/assumptions.md
//     A-stale-status).
//   - A verified status outside the three (docs/assumptions.md
//     A-unknown-status) is never silent: an error line with the value,
//     never Fulfil; OnStatus once if set, else 500 so that the gateway keeps
//     the event until the merchant reconciles it.
//   - A hook that fails or panics: 500 and the claim is released, so the
//     gateway's next retry (about every 30 s) tries again. A completed event:
//     200 without calling anything. An event another delivery is handling:
//     503 with Retry-After.
//
// What is guaranteed depends on the path:
//
//   - The lease path (any Deduper, Fulfil writing where it likes): while
//     the processes sharing the Deduper live, each event's hook completes at
//     most once. Its claim is renewed while the hook runs, and the hook's
//     context is cancelled when renewal reports the claim lost or, by a
//     timer, a safety margin (Lease/4) before an unrenewed claim could lapse,
//     so a hook that stops on cancellation never overlaps the next
//     claimant. On the in-memory deduper (a *MemoryDeduper, the default),
//     where a claim lapses only with time, the claim is taken at once for
//     HookTimeout plus Lease and not renewed. After a crash between the
//     hook's side effect and the recording of its completion, the event is
//     handled again when its lease lapses: at least once. Make Fulfil
//     idempotent on cb.RefNo.
//   - The transactional path (sqldedup.Deduper.FulfilTx): the effect and
//     the record of the event commit in one transaction, fenced on the
//     claim's token (HookClaim): exactly once for effects written through
//     that transaction, across crashes, lapses and replicas.
//   - Either way, every verified event is retried by the gateway until its
//     hook succeeds, and a callback that never arrives is recovered by
//     Reconcile, which runs this very path on the order read back from the
//     gateway: a callback and a reconciliation racing fulfil once.
//
// The gateway is assumed to retry until it gets a 2xx (docs/assumptions.md
// A-callback-retries): the handler answers 5xx only when a retry can help.
//
// Other answers: 405 for a method other than POST, 415 for a body that is not
// application/x-www-form-urlencoded, 413 over BodyLimit, 400 for a body that
// does not parse or a verified callback without `status` or `refNo`.
//
// A form already parsed by middleware (r.ParseForm consumes the body) is
// read from r.PostForm, still held to BodyLimit (413). ReadTimeout needs
// a middleware's ResponseWriter to have Unwrap; without it the handler
// logs one warning naming the cure.
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
	// DefaultLease. It is renewed every Lease/3 while the hook runs, and
	// an unrenewed hook is cancelled Lease/4 before it could lapse: keep it
	// in seconds, far above the Deduper's latency and any stall of the
	// process. On a *MemoryDeduper the claim is taken for HookTimeout plus
	// Lease instead, and not renewed.
	Lease time.Duration
	// HookTimeout is the time limit of one hook call, separate from the
	// lease; 0 means DefaultHookTimeout.
	HookTimeout time.Duration
	// ReconcileInterval is the pause between two lookups of Reconcile; 0
	// means DefaultReconcileInterval, a negative value none.
	ReconcileInterval time.Duration
	// Logger receives one line per refused, failed or suspicious callback;
	// nil means slog.Default(). To log nothing, pass
	// slog.New(slog.DiscardHandler).
	Logger *slog.Logger

	initOnce sync.Once
	memory   *MemoryDeduper
	// deadlineWarning logs once that the read deadline could not be set.
	deadlineWarning sync.Once
}

// ServeHTTP implements the receiver rules.
func (h *CallbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !isFormContentType(r.Header.Get("Content-Type")) {
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
	cb, err := parseCallbackFields(form) // its fpx is read once it is acted on
	if err != nil {
		// Signed by the gateway, yet nothing to route it by: keep the gateway
		// retrying and make noise, rather than drop it with a 2xx.
		h.log(r, slog.LevelError, "verified callback cannot be routed", "err", err)
		h.reject(w, r, http.StatusBadRequest, err)
		return
	}
	cb.Verified = true
	h.answer(w, h.newEvent(cb, origin{r: r}).process(r.Context()))
}

// answer writes the gateway's answer for a verdict of the callback path:
// 200, 503 with Retry-After (another delivery holds the event, or the
// Deduper is unreachable), or 500 (a hook failed or the handler is
// misconfigured: the gateway's next retry tries again).
func (h *CallbackHandler) answer(w http.ResponseWriter, v verdict) {
	switch v.code {
	case http.StatusOK:
		w.WriteHeader(http.StatusOK)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "30")
		http.Error(w, v.reason, v.code)
	default:
		http.Error(w, v.reason, v.code)
	}
}

// readForm returns the callback's fields, read under BodyLimit and
// ReadTimeout. A form a middleware parsed already (r.PostForm) is used as
// it is, but still held to BodyLimit: 413 when its Content-Length, or the
// size of its parsed fields, is over the limit. When the read deadline
// cannot be set (a ResponseWriter wrapper without Unwrap), the body is read
// all the same and the handler logs a warning once, naming the cure.
func (h *CallbackHandler) readForm(w http.ResponseWriter, r *http.Request) (url.Values, int, error) {
	limit := h.bodyLimit()
	if r.PostForm != nil {
		if err := parsedFormOverLimit(r, limit); err != nil {
			return nil, http.StatusRequestEntityTooLarge, err
		}
		return r.PostForm, 0, nil
	}
	rc := http.NewResponseController(w)
	err := rc.SetReadDeadline(time.Now().Add(h.readTimeout()))
	deadline := err == nil
	if !deadline {
		h.warnNoReadDeadline(w, r, err)
	}
	body, err := readCallbackBody(http.MaxBytesReader(w, r.Body, limit), min(r.ContentLength, limit))
	if err != nil {
		// The deadline stays: net/http would otherwise wait for the rest of
		// a trickling body before it answers.
		status, err := bodyReadError(err, limit)
		return nil, status, err
	}
	if deadline {
		// Cleared once read: the hook may run longer, and an expired
		// deadline would cancel the request's context.
		_ = rc.SetReadDeadline(time.Time{})
	}
	form, err := parseForm(string(body))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("paygate: callback body: %w", err)
	}
	return form, 0, nil
}

// bodyReadError is the answer to a body that could not be read: 413 over
// limit, else 400.
func bodyReadError(err error, limit int64) (int, error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("paygate: callback body over %d bytes", limit)
	}
	return http.StatusBadRequest, fmt.Errorf("paygate: reading callback body: %w", err)
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
	h.logAt(r.Context(), origin{r: r}, level, msg, args...)
}

// origin is where an event came from, as its log lines say it: the request
// of a callback (r) or a reconciliation's source. Its attributes are built
// only for a line that is written.
type origin struct {
	r      *http.Request
	source Source
}

// attrs is what a log line says of the origin: the request's method and
// path (never its body), or the source.
func (o origin) attrs(more int) []any {
	if o.r != nil {
		return append(make([]any, 0, 4+more), "method", o.r.Method, "path", o.r.URL.Path)
	}
	return append(make([]any, 0, 2+more), "source", o.source.String())
}

// logAt writes one line, saying where the event came from (o), to Logger or
// slog.Default().
func (h *CallbackHandler) logAt(ctx context.Context, o origin, level slog.Level, msg string, args ...any) {
	l := h.logger()
	if !l.Enabled(ctx, level) {
		return
	}
	l.Log(ctx, level, msg, append(o.attrs(len(args)), args...)...)
}
