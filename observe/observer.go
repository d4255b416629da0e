package observe

import "context"

// Observer receives the SDK's events. Each Start method returns the
// context the operation continues in (an Observer may put a span in it);
// the matching End method is called once with that context, so an Observer
// finds there what its Start put. The calls of one operation never overlap
// each other, but operations run concurrently: an Observer must be safe for
// concurrent use, and it must return quickly, since the SDK waits for it.
//
// Embed Base in an implementation to take the events it does not need as
// no-ops, and to keep compiling when a later version adds a method.
type Observer interface {
	// CallStart: a call to the gateway (a Client method's request, or one
	// request of a WebhookSender) is about to make its first attempt.
	CallStart(ctx context.Context, c Call) context.Context
	// CallRetry: an attempt of the call failed and another follows after
	// the wait.
	CallRetry(ctx context.Context, r Retry)
	// CallEnd: the call is over, answered or given up.
	CallEnd(ctx context.Context, e CallEnd)

	// CallbackStart: a CallbackHandler received a request, or a
	// reconciliation runs a gateway record through the callback path.
	CallbackStart(ctx context.Context, c Callback) context.Context
	// CallbackEnd: the callback is handled (or refused).
	CallbackEnd(ctx context.Context, e CallbackEnd)

	// SendStart: a WebhookSender's Send begins.
	SendStart(ctx context.Context, s Send) context.Context
	// SendEnd: the Send is over.
	SendEnd(ctx context.Context, e SendEnd)

	// ReconcileStart: a CallbackHandler's Reconcile or ReconcileReport
	// begins.
	ReconcileStart(ctx context.Context, r Reconcile) context.Context
	// ReconcileEntry: one reference or report row is settled.
	ReconcileEntry(ctx context.Context, e ReconcileEntry)
	// ReconcileEnd: the reconciliation is over.
	ReconcileEnd(ctx context.Context, e ReconcileEnd)

	// WatchCheck: the pending watch looked an awaited order up.
	WatchCheck(ctx context.Context, c WatchCheck)

	// OutboxRound: a relay of the bank's outbox recorded a round.
	OutboxRound(ctx context.Context, r OutboxRound)
	// OutboxStats: an idle relay read the outbox's depth.
	OutboxStats(ctx context.Context, s OutboxStats)
}

// Base implements Observer with methods that do nothing and return the
// context they were given. Embed it to implement only the events needed.
type Base struct{}

var _ Observer = Base{}

// CallStart returns ctx.
func (Base) CallStart(ctx context.Context, _ Call) context.Context { return ctx }

// CallRetry does nothing.
func (Base) CallRetry(context.Context, Retry) {}

// CallEnd does nothing.
func (Base) CallEnd(context.Context, CallEnd) {}

// CallbackStart returns ctx.
func (Base) CallbackStart(ctx context.Context, _ Callback) context.Context { return ctx }

// CallbackEnd does nothing.
func (Base) CallbackEnd(context.Context, CallbackEnd) {}

// SendStart returns ctx.
func (Base) SendStart(ctx context.Context, _ Send) context.Context { return ctx }

// SendEnd does nothing.
func (Base) SendEnd(context.Context, SendEnd) {}

// ReconcileStart returns ctx.
func (Base) ReconcileStart(ctx context.Context, _ Reconcile) context.Context { return ctx }

// ReconcileEntry does nothing.
func (Base) ReconcileEntry(context.Context, ReconcileEntry) {}

// ReconcileEnd does nothing.
func (Base) ReconcileEnd(context.Context, ReconcileEnd) {}

// WatchCheck does nothing.
func (Base) WatchCheck(context.Context, WatchCheck) {}

// OutboxRound does nothing.
func (Base) OutboxRound(context.Context, OutboxRound) {}

// OutboxStats does nothing.
func (Base) OutboxStats(context.Context, OutboxStats) {}
