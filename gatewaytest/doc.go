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
// WithCallbackStatus (a status outside the three); WithDuplicateCallbacks
// sends each callback several times, at once or in turn, to test that a
// handler acts on each event exactly once. WithLostCreateAnswers loses an
// order's answer at a chosen instant, for the SDK's create-or-find
// (WithRepeatedRefNos: a service that takes a reference twice).
//
// The sandbox runs in real time unless given WithTestClock: then it reads
// the time from a TestClock (NewTestClock) and waits on it, and
// TestClock.Advance runs the callback retries (about every 30 s), give-ups
// and late settlements that fall due, in order, each at its own time,
// delivered before Advance returns; a payment pending for seven days
// settles in milliseconds:
//
//	clock := gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
//	sb := gatewaytest.NewServer(gatewaytest.WithTestClock(clock),
//		gatewaytest.WithLateSettlement(7*24*time.Hour, isB2B))
//	// handler.Now = clock.Now, so that callbacks are judged on the same clock
//	_ = sb.Pay("B2B-1", paygate.StatusSuccess)
//	sb.Settle()                    // the pending callback, sent at once
//	clock.Advance(7 * 24 * time.Hour) // the success, settled and called back
package gatewaytest
