package paygateotel

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate-go/paygate/observe"
)

// scope is the instrumentation scope of the spans and metrics.
const scope = "github.com/paygate-go/paygate/otel"

// The attribute keys. Every value is a fixed word, an HTTP method or
// status, a configured route or a count: never a reference, an amount or
// a credential.
const (
	keyMethod       = attribute.Key("http.request.method")
	keyRoute        = attribute.Key("url.template")
	keyStatus       = attribute.Key("http.response.status_code")
	keyErrorType    = attribute.Key("error.type")
	keyAttempt      = attribute.Key("paygate.attempt")
	keyAttempts     = attribute.Key("paygate.attempts")
	keyRetryAfter   = attribute.Key("paygate.retry_after")
	keyWait         = attribute.Key("paygate.wait_seconds")
	keySource       = attribute.Key("paygate.source")
	keyVerification = attribute.Key("paygate.verification")
	keyClaim        = attribute.Key("paygate.claim")
	keyHook         = attribute.Key("paygate.hook")
	keyUnbounded    = attribute.Key("paygate.replay_unbounded")
	keyOutcome      = attribute.Key("paygate.outcome")
	keyTxState      = attribute.Key("paygate.transaction.state")
	keyTxs          = attribute.Key("paygate.transactions")
	keyRequests     = attribute.Key("paygate.requests")
	keyEntries      = attribute.Key("paygate.entries")
	keyWatchState   = attribute.Key("paygate.watch.state")
)

// Observer is an observe.Observer that records OpenTelemetry spans and
// metrics. Build it with New; it is safe for concurrent use.
type Observer struct {
	tracer trace.Tracer
	in     *instruments
}

var _ observe.Observer = (*Observer)(nil)

// New returns an Observer recording spans with tp and metrics with mp; a
// nil provider means the global one (otel.GetTracerProvider,
// otel.GetMeterProvider). The error is the meter's, when an instrument
// could not be made; the Observer is usable all the same.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Observer, error) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	in, err := newInstruments(mp.Meter(scope))
	return &Observer{tracer: tp.Tracer(scope), in: in}, err
}

// CallStart starts the call's client span, "paygate <method> <route>".
func (o *Observer) CallStart(ctx context.Context, c observe.Call) context.Context {
	ctx, _ = o.tracer.Start(ctx, "paygate "+c.Method+" "+c.Route, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(keyMethod.String(c.Method), keyRoute.String(c.Route)))
	return context.WithValue(ctx, callKey{}, c)
}

// callKey is the context key of the observe.Call under way, for the
// metrics of its retries and end.
type callKey struct{}

// callOf is the call ctx is in.
func callOf(ctx context.Context) observe.Call {
	c, _ := ctx.Value(callKey{}).(observe.Call)
	return c
}

// CallRetry adds a "retry" event to the call's span and counts it, with
// its wait.
func (o *Observer) CallRetry(ctx context.Context, r observe.Retry) {
	c := callOf(ctx)
	asked := r.RetryAfter > 0
	trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(keyAttempt.Int(r.Attempt), keyStatus.Int(r.Status),
		keyRetryAfter.Bool(asked), keyWait.Float64(r.Wait.Seconds())))
	route := metric.WithAttributes(keyMethod.String(c.Method), keyRoute.String(c.Route), keyStatus.Int(r.Status))
	o.in.retries.Add(ctx, 1, route)
	o.in.retryWait.Record(ctx, r.Wait.Seconds(), metric.WithAttributes(keyRoute.String(c.Route), keyRetryAfter.Bool(asked)))
}

// CallEnd ends the call's span, an error unless the call succeeded, and
// counts the call.
func (o *Observer) CallEnd(ctx context.Context, e observe.CallEnd) {
	c := callOf(ctx)
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(keyAttempts.Int(e.Attempts))
	if e.Status != 0 {
		span.SetAttributes(keyStatus.Int(e.Status))
	}
	class := errorType(e)
	if class != "" {
		span.SetAttributes(keyErrorType.String(class))
		span.SetStatus(codes.Error, class)
	}
	o.in.calls.Add(ctx, 1, metric.WithAttributes(keyMethod.String(c.Method), keyRoute.String(c.Route), keyErrorType.String(class)))
	span.End()
}

// errorType is a call's error.type: its HTTP status for an error answer,
// else its class ("" for a success).
func errorType(e observe.CallEnd) string {
	if e.Class == observe.ClassAnswer {
		return strconv.Itoa(e.Status)
	}
	return string(e.Class)
}

// CallbackStart starts the "paygate callback" span: a server span for a
// callback, an internal one for a reconciled record.
func (o *Observer) CallbackStart(ctx context.Context, c observe.Callback) context.Context {
	kind := trace.SpanKindInternal
	if c.Source == observe.SourceCallback {
		kind = trace.SpanKindServer
	}
	ctx, _ = o.tracer.Start(ctx, "paygate callback", trace.WithSpanKind(kind), trace.WithAttributes(keySource.String(string(c.Source))))
	return context.WithValue(ctx, callbackKey{}, c)
}

// callbackKey is the context key of the observe.Callback under way.
type callbackKey struct{}

// CallbackEnd ends the callback's span with what the callback path made of
// it, and counts its verification failure, claim and Fulfil latency.
func (o *Observer) CallbackEnd(ctx context.Context, e observe.CallbackEnd) {
	c, _ := ctx.Value(callbackKey{}).(observe.Callback)
	span := trace.SpanFromContext(ctx)
	attrs := []attribute.KeyValue{keyVerification.String(string(e.Verification)), keyOutcome.String(e.Outcome),
		keyClaim.String(string(e.Claim)), keyHook.String(string(e.Hook))}
	span.SetAttributes(attrs...)
	if e.Status != 0 {
		span.SetAttributes(keyStatus.Int(e.Status))
	}
	if e.Unbounded {
		span.SetAttributes(keyUnbounded.Bool(true))
	}
	if failed := callbackFailure(e); failed != "" {
		span.SetStatus(codes.Error, failed)
	}
	o.in.callbacks.Add(ctx, 1, metric.WithAttributes(keySource.String(string(c.Source)),
		keyVerification.String(string(e.Verification)), keyOutcome.String(e.Outcome)))
	if e.Unbounded {
		o.in.unbounded.Add(ctx, 1)
	}
	if e.Verification != observe.VerifyOK && e.Verification != observe.VerifyUnsigned {
		o.in.verifyFailures.Add(ctx, 1, metric.WithAttributes(keyVerification.String(string(e.Verification))))
	}
	if e.Claim != observe.ClaimNone {
		o.in.claims.Add(ctx, 1, metric.WithAttributes(keyClaim.String(string(e.Claim))))
	}
	if e.FulfilLatency > 0 {
		o.in.fulfil.Record(ctx, e.FulfilLatency.Seconds(), metric.WithAttributes(keyHook.String(string(e.Hook))))
	}
	span.End()
}

// callbackFailure says why a callback's span is an error: a refusal, a
// failed hook, an answer of 5xx; "" when none.
func callbackFailure(e observe.CallbackEnd) string {
	switch {
	case e.Verification != observe.VerifyOK && e.Verification != observe.VerifyUnsigned:
		return "refused: " + string(e.Verification)
	case e.Hook == observe.HookFailed:
		return "hook failed"
	case e.Status >= 500:
		return "answered " + strconv.Itoa(e.Status)
	}
	return ""
}

// SendStart starts the "paygate webhook send" span.
func (o *Observer) SendStart(ctx context.Context, s observe.Send) context.Context {
	ctx, _ = o.tracer.Start(ctx, "paygate webhook send", trace.WithAttributes(keyTxs.Int(s.Transactions)))
	return ctx
}

// SendEnd ends the send's span with its counts and counts its
// transactions by state.
func (o *Observer) SendEnd(ctx context.Context, e observe.SendEnd) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(keyRequests.Int(e.Requests))
	for _, s := range []struct {
		state string
		n     int
	}{{"accepted", e.Accepted}, {"invalid", e.Invalid}, {"rejected", e.Rejected}, {"unconfirmed", e.Unconfirmed}, {"not_sent", e.NotSent}} {
		span.SetAttributes(attribute.Int("paygate.transactions."+s.state, s.n))
		if s.n > 0 {
			o.in.webhookTxs.Add(ctx, int64(s.n), metric.WithAttributes(keyTxState.String(s.state)))
		}
	}
	if e.Failed {
		span.SetStatus(codes.Error, "not every transaction accepted")
	}
	span.End()
}

// ReconcileStart starts the "paygate reconcile" span.
func (o *Observer) ReconcileStart(ctx context.Context, r observe.Reconcile) context.Context {
	ctx, _ = o.tracer.Start(ctx, "paygate reconcile", trace.WithAttributes(keySource.String(string(r.Source))))
	return ctx
}

// ReconcileEntry counts the entry by outcome and adds an "entry" event to
// the reconciliation's span.
func (o *Observer) ReconcileEntry(ctx context.Context, e observe.ReconcileEntry) {
	trace.SpanFromContext(ctx).AddEvent("entry", trace.WithAttributes(keyOutcome.String(e.Outcome)))
	o.in.recons.Add(ctx, 1, metric.WithAttributes(keyOutcome.String(e.Outcome)))
}

// ReconcileEnd ends the reconciliation's span.
func (o *Observer) ReconcileEnd(ctx context.Context, e observe.ReconcileEnd) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(keyEntries.Int(e.Entries))
	if e.Failed {
		span.SetStatus(codes.Error, "reconciliation ended early")
	}
	span.End()
}

// WatchCheck counts the watch's lookup and records the order's age, by
// outcome and by what became of the order: still awaited, settled, or
// given up at its maximum age.
func (o *Observer) WatchCheck(ctx context.Context, c observe.WatchCheck) {
	state := "awaited"
	switch {
	case c.Settled:
		state = "settled"
	case c.GivenUp:
		state = "given_up"
	}
	attrs := metric.WithAttributes(keyOutcome.String(c.Outcome), keyWatchState.String(state))
	o.in.watchChecks.Add(ctx, 1, attrs)
	o.in.watchAge.Record(ctx, c.Age.Seconds(), attrs)
}

// OutboxRound counts a relay round's transactions by what was recorded:
// done, dead or retried.
func (o *Observer) OutboxRound(ctx context.Context, r observe.OutboxRound) {
	for _, s := range []struct {
		state string
		n     int
	}{{"done", r.Accepted}, {"dead", r.Dead}, {"retried", r.Retried}} {
		if s.n > 0 {
			o.in.outboxTxs.Add(ctx, int64(s.n), metric.WithAttributes(keyTxState.String(s.state)))
		}
	}
}

// OutboxStats records the outbox's depth, the age of its oldest
// transaction and its dead count.
func (o *Observer) OutboxStats(ctx context.Context, s observe.OutboxStats) {
	o.in.outboxDepth.Record(ctx, int64(s.Depth))
	o.in.outboxDead.Record(ctx, int64(s.Dead))
	o.in.outboxAge.Record(ctx, s.OldestAge.Seconds())
}
