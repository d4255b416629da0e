package paygate

// The defaults of CallbackHandler: each field left zero means a default,
// read through the method of the same name, never inline.

import (
	"log/slog"
	"time"
)

// Defaults of CallbackHandler's limits.
const (
	// DefaultCallbackBodyLimit caps a callback body unless BodyLimit says
	// otherwise. A genuine callback is a few kilobytes; no size is
	// published (docs/assumptions.md A-callback-body-limit).
	DefaultCallbackBodyLimit = 64 << 10
	// DefaultCallbackReadTimeout bounds reading a callback body unless
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
	// storeTimeout bounds each Claim, Complete and Release. They run on a
	// context of their own, never the hook's nearly spent one.
	storeTimeout = 5 * time.Second
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

// reconcileInterval is ReconcileInterval, DefaultReconcileInterval when
// unset, or 0 (no pause) when negative.
func (h *CallbackHandler) reconcileInterval() time.Duration {
	switch {
	case h.ReconcileInterval < 0:
		return 0
	case h.ReconcileInterval == 0:
		return DefaultReconcileInterval
	}
	return h.ReconcileInterval
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
	if h.Deduper != nil {
		return h.Deduper
	}
	h.initOnce.Do(func() { h.memory = &MemoryDeduper{} })
	return h.memory
}
