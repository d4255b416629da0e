// Package observe lets a program watch what the SDK does, as net/http's
// httptrace lets it watch a request: an Observer given to a Client or a
// WebhookSender (paygate.WithObserver) or to a CallbackHandler (its
// Observer field) is told when a call to the gateway starts, retries and
// ends, how each callback was verified, claimed and handled, how a
// webhook send went, and what each reconciliation entry came to. The
// module github.com/paygate-go/paygate/otel turns these events into
// OpenTelemetry spans and metrics; anything else (a log, a test) can
// implement Observer too.
//
// The events say what happened, never to what: they carry no reference,
// order number, amount, e-mail, key, token, password or signature, and no
// URL query, so that nothing an Observer records can leak one. The event
// types have no field that could hold one.
//
// With no Observer, the SDK does not build an event at all: each hook is a
// nil check.
package observe
