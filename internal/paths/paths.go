// Package paths holds the gateway's default paths, in one place: the
// protocol's (docs/protocol.md endpoints 1 to 5 and 7) and those of the
// gateway's public PHP client (docs/assumptions.md A-endpoints). The SDK's
// Client reads them through paygate.DefaultEndpoints; the sandbox
// (gatewaytest) serves them and the command-line tool names them. They are
// not part of the merchant's API: a merchant changes a path with
// paygate.WithEndpoints.
package paths

// The default paths. Pay and QR2 are prefixes and end in "/".
const (
	// Checkout is order creation on {checkout_url} (endpoint 1).
	Checkout = "/v2/checkout"
	// Pay prefixes the hosted pay URL on the checkout host (endpoint 2).
	Pay = "/pay/"
	// QR2 is the unsigned QR image page on the checkout host.
	QR2 = "/qr2/"
	// PaymentReport is the payment report on {reports_url} (endpoint 4).
	PaymentReport = "/api/report/v1/payment"
	// FPXRequest is the single order lookup on {reports_url} (endpoint 5).
	FPXRequest = "/api/report/v1/fpxrequest"
	// Transactions is a buyer's transaction history on {reports_url}.
	Transactions = "/api/user/v1/transactions"
	// QR is the gateway's QR generator on {reports_url} (endpoint 3).
	QR = "/api/qrcode/v1/generator"
	// DuitNowQR is the DuitNow QR generator on {reports_url}.
	DuitNowQR = "/api/duitnowqr/v1/generator"
	// Version is the service's version on {reports_url}.
	Version = "/api/version"
	// Echo is the service's echo, a health check, on {reports_url}.
	Echo = "/api/echo"
	// BankList prefixes the FPX bank list of a channel (b2c or b2b) on
	// {reports_url}; not in the protocol (docs/assumptions.md A-banklist).
	BankList = "/api/v1/fpx/banklist/"
	// Webhook is the document's path of the bank transaction webhook
	// (endpoint 7); the real service's carries the brand instead of
	// `bank` (docs/assumptions.md A-webhook-brand).
	Webhook = "/api/bank/webhook"
	// ADBWebhook is the real service's webhook path, the bank webhook
	// page's (docs/assumptions.md A-webhook-brand).
	ADBWebhook = "/api/adb/webhook"
)
