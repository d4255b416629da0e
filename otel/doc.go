// Package paygateotel turns the paygate SDK's events (package observe)
// into OpenTelemetry spans and metrics. It is a module of its own, so that
// the SDK itself depends on no OpenTelemetry package:
//
//	obs, err := paygateotel.New(tracerProvider, meterProvider)
//	client, err := paygate.NewClient(..., paygate.WithObserver(obs))
//	sender, err := paygate.NewWebhookSender(..., paygate.WithObserver(obs))
//	handler := &paygate.CallbackHandler{..., Observer: obs}
//
// Spans: one per call to the gateway, named by its method and route
// ("paygate GET /api/report/v1/payment": the path, never the query), with
// each retry as an event; "paygate callback" per callback handled or
// record reconciled (its verification, claim, hook and outcome);
// "paygate webhook send" per WebhookSender.Send; "paygate reconcile" per
// Reconcile or ReconcileReport. Metrics: see the instrument names in
// instruments.go (docs/observability.md lists them).
//
// No attribute carries a reference, an order number, an amount, an e-mail,
// a key, a token, a password or a signature: the events hold none
// (package observe), and every attribute value is one of a few fixed
// words, an HTTP method, a configured route or a count.
package paygateotel
