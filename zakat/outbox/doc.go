// Package outbox is the bank's durable outbox on PostgreSQL (11 or later)
// for the zakat webhook: Enqueue (EnqueuePgx on pgx) adds transactions in
// the bank's own database transaction, beside its record of the payment,
// so both commit or neither; Run, on every replica, sends the due ones
// with a paygate.WebhookSender and records each one's outcome. Accepted
// is done; rejected or invalid is dead with its reason; unconfirmed or not
// sent is retried with backoff for up to WithMaxAge (7 days), then dead.
// A relay killed at any instant loses nothing, and a transaction whose
// send may have reached the service is resent with Resend, so the
// service's orderno uniqueness keeps it stored once. An orderno enqueued
// twice with the same content is one transaction. Stats, Dead, Retry and
// Drop are the operator's (paygate outbox). Guide: docs/bank-sender.md.
package outbox
