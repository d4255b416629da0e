// Package paygate is a Go SDK for one Malaysian payment gateway (FPX online
// banking, DuitNow, card) and for the bank webhook that posts zakat payment
// records to the same service. docs/protocol.md describes the service's
// interface as the SDK understands it; docs/assumptions.md lists what the
// SDK assumes where that interface is silent.
//
// A merchant creates orders, mounts one http.Handler on its returnUrl and
// reconciles:
//
//	client, err := paygate.NewClientFromEnv() // PAYGATE_AGENCY, PAYGATE_API_KEY, PAYGATE_CHECKOUT_URL, ...
//	key, err := paygate.KeyFromEnv()          // PAYGATE_API_KEY, for the handler
//
//	// Stage 1: the buyer's browser posts a signed order to the hosted checkout.
//	form, err := client.CheckoutForm(paygate.Order{RefNo: "INV-1001", Amount: 14990,
//		Email: "buyer@example.com", ReturnURL: "https://shop.example/paygate/return"})
//	err = form.WriteHTML(w)
//
//	// Stages 3-4: the returnUrl. Fulfil runs once per paid order.
//	http.Handle("/paygate/return", &paygate.CallbackHandler{
//		Keys:   []paygate.Key{key},
//		Fulfil: paygate.FulfilFunc(func(ctx context.Context, cb *paygate.Callback) error { return shop.MarkPaid(ctx, cb.RefNo) }),
//	})
//
//	// Stage 5: reconcile.
//	for row, err := range client.Payments(ctx, paygate.ReportQuery{Start: from, End: to}) { ... }
//
// A partner bank posts zakat transactions:
//
//	sender, err := paygate.NewWebhookSenderFromEnv() // PAYGATE_WEBHOOK_URL, PAYGATE_WEBHOOK_PASSWORD, ...
//	report, err := sender.Send(ctx, txs)             // txs: []zakat.Transaction; report.Outcomes(): each one's status
//
// Everything else of the bank's is in package zakat: the transaction and
// its values (zakat.AgencyADBLZS, zakat.Selangor), the Validator and its
// JSON Schema, the SendReport.
//
// Money is integer sen (Amount), never a float. Secrets (Key, the AuthToken,
// the webhook password) print as [REDACTED] and never appear in an error or
// a log line, and no request that carries one follows a redirect. The
// gatewaytest package is an in-process sandbox of the whole service, for
// tests; the Example functions of this package run against it.
package paygate

// Version is the SDK's version, sent in the User-Agent header and printed
// by `paygate version`. CHANGELOG.md says what each version changed.
const Version = "0.3.0"
