package paygate

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every field of CallbackHandler left zero reads as its default, one set
// reads as itself, and a negative limit as the default too (a negative
// ReconcileInterval as no pause).
func TestCallbackHandlerDefaults(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	memory := &MemoryDeduper{}
	for _, tc := range []struct {
		name string
		set  func(h *CallbackHandler)
		get  func(h *CallbackHandler) any
		want any
	}{
		{name: "BodyLimit unset", get: func(h *CallbackHandler) any { return h.bodyLimit() }, want: int64(DefaultCallbackBodyLimit)},
		{name: "BodyLimit negative", set: func(h *CallbackHandler) { h.BodyLimit = -1 }, get: func(h *CallbackHandler) any { return h.bodyLimit() }, want: int64(DefaultCallbackBodyLimit)},
		{name: "BodyLimit set", set: func(h *CallbackHandler) { h.BodyLimit = 100 }, get: func(h *CallbackHandler) any { return h.bodyLimit() }, want: int64(100)},
		{name: "ReadTimeout unset", get: func(h *CallbackHandler) any { return h.readTimeout() }, want: DefaultCallbackReadTimeout},
		{name: "ReadTimeout set", set: func(h *CallbackHandler) { h.ReadTimeout = time.Second }, get: func(h *CallbackHandler) any { return h.readTimeout() }, want: time.Second},
		{name: "Lease unset", get: func(h *CallbackHandler) any { return h.lease() }, want: DefaultLease},
		{name: "Lease set", set: func(h *CallbackHandler) { h.Lease = time.Minute }, get: func(h *CallbackHandler) any { return h.lease() }, want: time.Minute},
		{name: "HookTimeout unset", get: func(h *CallbackHandler) any { return h.hookTimeout() }, want: DefaultHookTimeout},
		{name: "HookTimeout negative", set: func(h *CallbackHandler) { h.HookTimeout = -time.Second }, get: func(h *CallbackHandler) any { return h.hookTimeout() }, want: DefaultHookTimeout},
		{name: "HookTimeout set", set: func(h *CallbackHandler) { h.HookTimeout = time.Second }, get: func(h *CallbackHandler) any { return h.hookTimeout() }, want: time.Second},
		{name: "ReconcileInterval unset", get: func(h *CallbackHandler) any { return h.reconcileInterval() }, want: DefaultReconcileInterval},
		{name: "ReconcileInterval negative: no pause", set: func(h *CallbackHandler) { h.ReconcileInterval = -1 }, get: func(h *CallbackHandler) any { return h.reconcileInterval() }, want: time.Duration(0)},
		{name: "ReconcileInterval set", set: func(h *CallbackHandler) { h.ReconcileInterval = time.Second }, get: func(h *CallbackHandler) any { return h.reconcileInterval() }, want: time.Second},
		{name: "Logger unset", get: func(h *CallbackHandler) any { return h.logger() }, want: slog.Default()},
		{name: "Logger set", set: func(h *CallbackHandler) { h.Logger = logger }, get: func(h *CallbackHandler) any { return h.logger() }, want: logger},
		{name: "Deduper set", set: func(h *CallbackHandler) { h.Deduper = memory }, get: func(h *CallbackHandler) any { return h.deduper() }, want: Deduper(memory)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &CallbackHandler{}
			if tc.set != nil {
				tc.set(h)
			}
			require.Equal(t, tc.want, tc.get(h))
		})
	}
	// Unset, the Deduper is the handler's own in-memory one, the same on
	// every call: one replica's record of what it handled.
	h := &CallbackHandler{}
	d := h.deduper()
	require.IsType(t, &MemoryDeduper{}, d)
	require.Same(t, d, h.deduper())
	require.NotSame(t, d, (&CallbackHandler{}).deduper())
}
