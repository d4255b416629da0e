package paygate

// CallbackHandler, the type: its fields, their defaults, what it checks at
// its first event, and how it logs. It serves (callback_serve.go) and
// reconciles (reconcile.go) through the event (callback_event.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/paygate-go/paygate/observe"
)

// CallbackHandler is the http.Handler for the merchant's returnUrl
// (docs/protocol.md "Receiver rules"). It answers 403 to a signature that
// does not verify under Keys (an unsigned POST goes to OnReturn, display
// only); calls Fulfil for a verified success at most once per base refNo
// across retries, duplicates, replays and replicas sharing one Deduper,
// never for a success older than MaxTxnAge (OnHeldBack); calls OnStatus
// once per other verified event; and answers 5xx whenever a retry can
// help. Keys and Fulfil are required. docs/callbacks.md tells each rule,
// the lease and transactional paths, and what a crash costs.
type CallbackHandler struct {
	// Keys verify the signature; several allow key rotation. Required.
	Keys []Key
	// Fulfil fulfils a verified success, once per base refNo: a
	// FulfilFunc, or a TxFulfiller (pgstore.Deduper.FulfilTx) that does
	// it in the merchant's own database transaction. Required.
	Fulfil Fulfiller
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
	// replica only. Several replicas must share one, e.g. pgstore.
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
	// Settler is told of each order a verified event settled (fulfilled,
	// paid twice, failed), so that a watch.Watch stops awaiting it at once
	// rather than at its next lookup. Optional.
	Settler Settler

	initOnce sync.Once
	// memory is the Deduper when Deduper is nil.
	memory *MemoryDeduper
	// misconfigured is why the handler cannot fulfil, found at its first
	// event (check); nil when it can.
	misconfigured error
	// deadlineWarning logs once that the read deadline could not be set.
	deadlineWarning sync.Once
}

// Defaults of CallbackHandler's limits.
const (
	// DefaultCallbackBodyLimit caps a callback body unless BodyLimit says
	// otherwise. A genuine callback is a few kilobytes; no size is
	// published (docs/assumptions.md A-callback-body-limit).
	DefaultCallbackBodyLimit = 64 << 10
	// DefaultCallbackReadTimeout (docs/assumptions.md
	// A-callback-read-timeout) bounds reading a callback body unless
	// ReadTimeout says otherwise: a client sending a byte a second does not
	// hold a connection for ever.
	DefaultCallbackReadTimeout = 5 * time.Second
	// DefaultLease is how long a claim on an event lasts unrenewed, unless
	// Lease says otherwise: a crashed replica's event is taken over within
	// it, before the gateway's next retry about 30 s later is long overdue.
	DefaultLease = 30 * time.Second
	// DefaultHookTimeout is the time limit of one Fulfil, OnStatus or
	// OnDoublePayment call unless HookTimeout says otherwise.
	DefaultHookTimeout = 2 * time.Minute
)

// bodyLimit is BodyLimit, or DefaultCallbackBodyLimit when unset.
func (h *CallbackHandler) bodyLimit() int64 {
	if h.BodyLimit > 0 {
		return h.BodyLimit
	}
	return DefaultCallbackBodyLimit
}

// readTimeout is ReadTimeout, or DefaultCallbackReadTimeout when unset.
func (h *CallbackHandler) readTimeout() time.Duration {
	if h.ReadTimeout > 0 {
		return h.ReadTimeout
	}
	return DefaultCallbackReadTimeout
}

// lease is Lease or DefaultLease.
func (h *CallbackHandler) lease() time.Duration {
	if h.Lease > 0 {
		return h.Lease
	}
	return DefaultLease
}

// hookTimeout is HookTimeout, or DefaultHookTimeout when unset.
func (h *CallbackHandler) hookTimeout() time.Duration {
	if h.HookTimeout > 0 {
		return h.HookTimeout
	}
	return DefaultHookTimeout
}

// logger is Logger, or slog.Default() when unset.
func (h *CallbackHandler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// deduper returns the configured Deduper or the handler's in-memory one.
func (h *CallbackHandler) deduper() Deduper {
	h.initOnce.Do(h.init)
	if h.Deduper != nil {
		return h.Deduper
	}
	return h.memory
}

// init makes the in-memory Deduper when none is set, and checks once what
// a paid order needs: a Fulfil, and a TxFulfiller that records in the
// handler's Deduper. What it finds is logged once and answered 500 to
// every verified event, so that the gateway keeps retrying until it is
// fixed.
func (h *CallbackHandler) init() {
	d := h.Deduper
	if d == nil {
		h.memory = &MemoryDeduper{}
		d = h.memory
	}
	switch tf, tx := h.Fulfil.(TxFulfiller); {
	case h.Fulfil == nil:
		h.misconfigured = errors.New("paygate: CallbackHandler.Fulfil is not set: set it to a FulfilFunc or a TxFulfiller; no event handled")
	case tx:
		if err := tf.Check(d); err != nil {
			h.misconfigured = fmt.Errorf("paygate: CallbackHandler.Fulfil records in another Deduper than CallbackHandler.Deduper (%T): give both the same one; no event handled: %w", d, err)
		}
	}
	if h.misconfigured == nil {
		h.misconfigured = h.checkRetention(d)
	}
	if h.misconfigured != nil {
		h.logger().Error(h.misconfigured.Error())
	}
}

// checkRetention refuses a Deduper that forgets a completed event before
// the replay bound stops honouring its callback (MaxTxnAge, plus the day a
// fpxTxnTime may run ahead): a replay in between would be fulfilled again
// (docs/assumptions.md A-replay-bound). A Deduper that does not say its
// retention (RetentionReporter) is warned of once.
func (h *CallbackHandler) checkRetention(d Deduper) error {
	bound := h.maxTxnAge()
	if bound == 0 {
		return nil // no replay bound: the record alone answers replays
	}
	r, ok := d.(RetentionReporter)
	if !ok {
		h.logger().Warn("paygate: the CallbackHandler's Deduper does not say how long it keeps completed events (paygate.RetentionReporter): keep it above MaxTxnAge plus a day, or a late replay is fulfilled again",
			"deduper", fmt.Sprintf("%T", d), "maxTxnAge", bound.String())
		return nil
	}
	if kept := r.CompletedRetention(); kept < bound+maxTxnAhead {
		return fmt.Errorf("paygate: the Deduper (%T) keeps completed events for %v, less than CallbackHandler.MaxTxnAge (%v) plus a day: a replay could be fulfilled twice; raise the Deduper's retention (MemoryDeduper.Retention, pgstore.WithRetention) or lower CallbackHandler.MaxTxnAge; no event handled",
			d, kept, bound)
	}
	return nil
}

// DefaultMaxTxnAge is how old a success's transaction time (fpxTxnTime)
// may be and still be fulfilled, unless CallbackHandler.MaxTxnAge says
// otherwise: far longer than the gateway goes on retrying a callback, far
// shorter than a Deduper keeps a completed event (DefaultRetention).
const DefaultMaxTxnAge = 30 * 24 * time.Hour

// maxTxnAhead is how far a success's transaction time may be ahead of the
// handler's clock (the gateway's clock, or its time zone, off) and still
// be fulfilled.
const maxTxnAhead = 24 * time.Hour

// maxTxnAge is MaxTxnAge, DefaultMaxTxnAge when unset, or 0 (no bound)
// when negative.
func (h *CallbackHandler) maxTxnAge() time.Duration {
	switch {
	case h.MaxTxnAge < 0:
		return 0
	case h.MaxTxnAge == 0:
		return DefaultMaxTxnAge
	}
	return h.MaxTxnAge
}

// now reads Now, or time.Now when unset.
func (h *CallbackHandler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// claimLease is how long an event's claim on d is taken for, and whether
// it is renewed while the hook runs: Lease, renewed, on any Deduper but
// the in-memory one; on a *MemoryDeduper, HookTimeout and Lease at once,
// not renewed: an in-process claim lapses only with time, and this one
// outlasts the hook's time limit by a lease, so renewing it would only
// cost a timer per event. The sum saturates: a HookTimeout or Lease near
// the largest Duration (meant as "no limit") must not wrap to a negative
// lease, which would let a duplicate take the event while its hook runs.
func (h *CallbackHandler) claimLease(d Deduper) (lease time.Duration, renewed bool) {
	if _, ok := d.(*MemoryDeduper); ok {
		l := h.lease()
		return min(h.hookTimeout(), math.MaxInt64-l) + l, false
	}
	return h.lease(), true
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
