package paygateotel

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// The metric instruments' names.
const (
	metricCallbacks      = "paygate.callback.count"
	metricVerifyFailures = "paygate.callback.verification.failures"
	metricUnbounded      = "paygate.callback.replay_unbounded"
	metricClaims         = "paygate.callback.claims"
	metricFulfil         = "paygate.callback.fulfil.duration"
	metricRetries        = "paygate.client.retries"
	metricRetryWait      = "paygate.client.retry.wait"
	metricCalls          = "paygate.client.calls"
	metricWebhookTxs     = "paygate.webhook.transactions"
	metricReconcile      = "paygate.reconcile.entries"
	metricWatchChecks    = "paygate.watch.checks"
	metricWatchAge       = "paygate.watch.age"
	metricOutboxTxs      = "paygate.outbox.transactions"
	metricOutboxDepth    = "paygate.outbox.depth"
	metricOutboxAge      = "paygate.outbox.oldest_age"
	metricOutboxDead     = "paygate.outbox.dead"
)

// instruments are the metrics an Observer records.
type instruments struct {
	callbacks, verifyFailures, claims  metric.Int64Counter
	retries, calls, webhookTxs, recons metric.Int64Counter
	watchChecks, unbounded, outboxTxs  metric.Int64Counter
	fulfil, retryWait, watchAge        metric.Float64Histogram
	outboxDepth, outboxDead            metric.Int64Gauge
	outboxAge                          metric.Float64Gauge
}

// counterSpec is one counter: where it goes, its name, description and
// unit.
type counterSpec struct {
	dst              *metric.Int64Counter
	name, desc, unit string
}

// newInstruments makes every instrument of m.
func newInstruments(m metric.Meter) (*instruments, error) {
	in := &instruments{}
	counters := []counterSpec{
		{&in.callbacks, metricCallbacks, "Callbacks handled and gateway records reconciled, by source, verification and outcome.", "{callback}"},
		{&in.verifyFailures, metricVerifyFailures, "Callbacks refused, by reason.", "{callback}"},
		{&in.unbounded, metricUnbounded, "Successes fulfilled without a fpxTxnTime the replay bound reads: their replays rest on the Deduper's record alone.", "{callback}"},
		{&in.claims, metricClaims, "Deduper claims of callback events, by outcome (new, duplicate, in_flight, lost, error).", "{claim}"},
		{&in.retries, metricRetries, "Attempts of a gateway call that failed and were retried, by route and status.", "{retry}"},
		{&in.calls, metricCalls, "Gateway calls, by route, method and error class.", "{call}"},
		{&in.webhookTxs, metricWebhookTxs, "Webhook transactions given to Send, by the state they ended in.", "{transaction}"},
		{&in.recons, metricReconcile, "Reconciliation entries, by outcome.", "{entry}"},
		{&in.outboxTxs, metricOutboxTxs, "Transactions of the bank's outbox relayed, by what was recorded (done, dead, retried).", "{transaction}"},
		{&in.watchChecks, metricWatchChecks, "Lookups of awaited orders by the pending watch, by outcome and what became of the order (awaited, settled, given_up).", "{lookup}"},
	}
	var errs []error
	for _, c := range counters {
		var err error
		*c.dst, err = m.Int64Counter(c.name, metric.WithDescription(c.desc), metric.WithUnit(c.unit))
		errs = append(errs, err)
	}
	var err error
	in.fulfil, err = m.Float64Histogram(metricFulfil, metric.WithDescription("How long Fulfil ran, by hook outcome."), metric.WithUnit("s"))
	errs = append(errs, err)
	in.retryWait, err = m.Float64Histogram(metricRetryWait,
		metric.WithDescription("Waits before a retry, by route and whether the service asked for it (Retry-After)."), metric.WithUnit("s"))
	errs = append(errs, err)
	in.watchAge, err = m.Float64Histogram(metricWatchAge,
		metric.WithDescription("The age of awaited orders at each lookup by the pending watch, by what became of the order."), metric.WithUnit("s"))
	errs = append(errs, err)
	in.outboxDepth, err = m.Int64Gauge(metricOutboxDepth, metric.WithDescription("Transactions in the bank's outbox not yet accepted nor dead."), metric.WithUnit("{transaction}"))
	errs = append(errs, err)
	in.outboxDead, err = m.Int64Gauge(metricOutboxDead, metric.WithDescription("Dead transactions in the bank's outbox, left for an operator."), metric.WithUnit("{transaction}"))
	errs = append(errs, err)
	in.outboxAge, err = m.Float64Gauge(metricOutboxAge, metric.WithDescription("The age of the oldest transaction in the bank's outbox not yet accepted nor dead."), metric.WithUnit("s"))
	errs = append(errs, err)
	return in, errors.Join(errs...)
}
