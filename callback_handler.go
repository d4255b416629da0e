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

	"github.com/paygate-go/paygate/internal/formbody"
	"github.com/paygate-go/paygate/observe"
)

// CallbackHandler is the http.Handler for the merchant's returnUrl
// (docs/protocol.md "Payment callback" and "Receiver rules").
//
// It promises:
//   - 403 for a signature that does not verify under Keys (nothing runs
//     but OnReject), and for a POST without one unless OnReturn is set: the
//     buyer's browser, which OnReturn renders, display only, never fulfilled.
//   - Fulfil only for a verified success, at most once per base refNo
//     under the gateway's retries, duplicates, replays and replicas sharing
//     one Deduper, as long as the Deduper keeps the completed event
//     (DefaultRetention); a success whose fpxTxnTime is older than
//     MaxTxnAge is held back (OnHeldBack), never fulfilled; OnStatus once per other verified event; OnDoublePayment once
//     per second payment for a fulfilled refNo, never a second Fulfil.
//   - 5xx whenever a retry can help, so that the gateway retries: 500 when
//     a hook fails, 503 with Retry-After when the Deduper is unreachable or
//     another replica or delivery holds the event's claim; 200 once handled.
//
// The caller must set Keys and Fulfil (or FulfilTx), give several replicas
// one shared Deduper (e.g. sqldedup), and make each hook idempotent on
// cb.RefNo or write its effect in the Deduper's transaction (FulfilTx): a
// crash between a hook's effect and the record of its completion runs the
// hook again.
//
// docs/callbacks.md tells each rule in full (stale and unknown statuses,
// second payments, 400, 405, 413, 415), the lease and transactional paths,
// and what a crash costs.
type CallbackHandler struct {
	// Keys verify the signature; several allow key rotation. Required.
	Keys []Key
	// Fulfil is called for a verified success, once per base refNo; an
	// error or panic answers 500 and the gateway's retry calls it again.
	// Required, unless FulfilTx is set instead.
	Fulfil func(ctx context.Context, cb *Callback) error
	// FulfilTx, set in place of Fulfil, fulfils a verified success in one
	// transaction that claims the event, writes the merchant's effect and
	// records the completion (sqldedup.Deduper.FulfilTx): exactly once,
	// one commit, and no lease to wait out after a crash.
	FulfilTx TxFulfiller
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
	// OnHeldBack is told of every verified success held back by the replay
	// bound (MaxTxnAge): never fulfilled, answered 200, logged at error
	// level; err wraps ErrHeldBack and says the age. A replay of a
	// captured callback, or a genuine payment to reconcile by hand. An
	// error or panic answers 500, so that the gateway tells it again.
	// Optional.
	OnHeldBack func(ctx context.Context, cb *Callback, err error) error
	// MaxTxnAge bounds replays (docs/assumptions.md A-replay-bound): a
	// callback's success whose fpxTxnTime is older than MaxTxnAge, or more
	// than a day ahead of Now, is held back (OnHeldBack), never fulfilled.
	// A success without a fpxTxnTime the SDK reads is fulfilled once as
	// ever, its replays answered by the Deduper's completed record alone.
	// 0 means DefaultMaxTxnAge, a negative value no bound. Keep it far
	// below the Deduper's retention (DefaultRetention): a replay then
	// finds the completed record, or is held back.
	MaxTxnAge time.Duration
	// Now is the clock MaxTxnAge is measured on (default time.Now), for
	// tests.
	Now func() time.Time
	// Deduper records handled events; nil means an in-memory one, for one
	// replica only. Several replicas must share one, e.g. sqldedup.
	Deduper Deduper
	// BodyLimit caps the body; 0 means DefaultCallbackBodyLimit
	// (docs/assumptions.md A-callback-body-limit).
	BodyLimit int64
	// ReadTimeout bounds reading the body; 0 means
	// DefaultCallbackReadTimeout. Behind a middleware, its ResponseWriter
	// needs Unwrap for it.
	ReadTimeout time.Duration
	// Lease is how long a claim on an event lasts unrenewed: an event whose
	// replica died while holding it is taken over within Lease. A hook's
	// ctx is cancelled once its claim is lost or could lapse unrenewed, so a
	// hook that stops on cancellation never overlaps another delivery. 0
	// means DefaultLease; keep it in seconds, far above the Deduper's
	// latency and any stall of the process.
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
	// Observer is told of every callback (how it was verified, claimed and
	// handled) and of each reconciliation (package observe). Optional.
	Observer observe.Observer

	initOnce sync.Once
	memory   *MemoryDeduper
	// deadlineWarning logs once that the read deadline could not be set.
	deadlineWarning sync.Once
}

// ServeHTTP implements the receiver rules.
func (h *CallbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Observer != nil {
		h.serveObserved(w, r)
		return
	}
	h.serve(w, r)
}

// serve is ServeHTTP without its Observer's start and end.
func (h *CallbackHandler) serve(w http.ResponseWriter, r *http.Request) {
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
		h.note(r).Refused(http.StatusInternalServerError, err)
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
	h.answer(w, h.newEvent(cb, origin{r: r}).run(r.Context()))
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
	form, err := formbody.Parse(string(body))
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
	h.note(r).Refused(status, err)
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
