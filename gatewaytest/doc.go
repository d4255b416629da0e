// Package gatewaytest is an in-process sandbox of the whole payment service
// (docs/protocol.md), in the style of net/http/httptest: NewServer starts it
// on loopback with fresh credentials, and merchants and banks test their
// integration against it without an account.
//
// It checks signatures and exp as the service does, validates orders, keeps
// them, serves a hosted checkout page whose buttons pay, decline or leave an
// order pending, sends the buyer's unsigned browser return and the signed
// direct callback (retried every RetryInterval until a 2xx, up to
// MaxAttempts), answers the payment report, order lookup and QR endpoints,
// and receives webhook batches with X-API-Password (at WebhookURL; a bank
// tests against its real endpoint's shape with WithWebhookPath and
// WithWebhookValidator, and gets a matching sender from WebhookSender).
// Tests drive the same
// flow from Go with Pay and Complete, and read the delivery log with
// Callbacks.
//
// A merchant's test, end to end:
//
//	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(10 * time.Millisecond))
//	defer sb.Close()
//	shop := httptest.NewServer(&paygate.CallbackHandler{Keys: []paygate.Key{sb.Key()}, Fulfil: fulfil})
//	client, _ := sb.Client()
//	form, _ := client.CheckoutForm(paygate.Order{RefNo: "INV-1", Amount: 1000,
//		Email: "a@example.com", ReturnURL: shop.URL + "/return"})
//	session, _ := sb.Submit(form)           // what the buyer's browser posts
//	_ = sb.Pay(session.RefNo, paygate.StatusSuccess)
//	sb.Settle()                             // the signed callback, and its retries, are done
//
// Each assumption the SDK makes where the service's interface is silent has
// a switch here (docs/assumptions.md): WithCallbackRefNo, WithCallbackFPX,
// WithPOSTSignedWithPath, WithUnsignedOrders, WithWebhookDuplicates,
// WithWebhookFaults, WithWebhookPath, WithWebhookValidator and WithMaxItems
// among others. The recovery switches leave orders awaited for a
// reconciliation job to find: WithCallbackLoss (a callback never
// delivered), WithMaxAttempts (the gateway gives up), WithLateSettlement
// (pending, settled later), WithStaleCallbacks (out of order) and
// WithCallbackStatus (a status outside the three). WithLostCreateAnswers
// loses an order's answer at a chosen instant, for the SDK's
// create-or-find (WithRepeatedRefNos: a service that takes a reference
// twice).
package gatewaytest
