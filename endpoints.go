package paygate

// The gateway's paths, in one place: the protocol's (docs/protocol.md
// endpoints 1 to 5 and 7) and those of the gateway's public PHP client
// (docs/assumptions.md A-endpoints). Each but WebhookPath (the
// WebhookSender's, not the Client's) is the default of its Endpoints field.
const (
	// CheckoutPath is order creation on {checkout_url}, used when the
	// checkout URL is a bare host (docs/protocol.md endpoint 1).
	CheckoutPath = "/v2/checkout"
	// PayPath prefixes the hosted pay URL on the checkout host
	// (docs/protocol.md endpoint 2).
	PayPath = "/pay/"
	// QR2Path is the unsigned QR image page on the checkout host, which
	// takes a pay URL in q.
	QR2Path = "/qr2/"
	// PaymentReportPath is the payment report on {reports_url}
	// (docs/protocol.md endpoint 4).
	PaymentReportPath = "/api/report/v1/payment"
	// FPXRequestPath is the single order lookup on {reports_url}
	// (docs/protocol.md endpoint 5).
	FPXRequestPath = "/api/report/v1/fpxrequest"
	// TransactionsPath is a buyer's transaction history on {reports_url}.
	TransactionsPath = "/api/user/v1/transactions"
	// QRPath is the gateway's QR generator on {reports_url}
	// (docs/protocol.md endpoint 3).
	QRPath = "/api/qrcode/v1/generator"
	// DuitNowQRPath is the DuitNow QR generator on {reports_url}.
	DuitNowQRPath = "/api/duitnowqr/v1/generator"
	// VersionPath is the service's version on {reports_url}.
	VersionPath = "/api/version"
	// EchoPath is the service's echo, a health check, on {reports_url}.
	EchoPath = "/api/echo"
	// WebhookPath is the document's path of the bank transaction webhook
	// (docs/protocol.md endpoint 7), which NewWebhookSender adds to a bare
	// host. The real service's path carries the brand instead of `bank`
	// (/api/adb/webhook on the bank webhook page): give NewWebhookSender that
	// endpoint's whole URL (docs/assumptions.md A-webhook-brand).
	WebhookPath = "/api/bank/webhook"
)

// Endpoints are the paths the Client calls, in one place: where the real
// service differs from the protocol document, set the path here
// (WithEndpoints) instead of patching calls. An empty field keeps its
// default (DefaultEndpoints). Paths are absolute ("/..."), without query
// or fragment; Checkout applies only to a checkout URL given as a bare
// host (WithCheckoutURL).
type Endpoints struct {
	// Checkout is order creation (CheckoutPath).
	Checkout string
	// Pay prefixes the hosted pay URL (PayPath); it ends in "/".
	Pay string
	// QR2 is the unsigned QR image page (QR2Path); it ends in "/".
	QR2 string
	// PaymentReport is the payment report (PaymentReportPath).
	PaymentReport string
	// FPXRequest is the single order lookup (FPXRequestPath).
	FPXRequest string
	// Transactions is a buyer's transaction history (TransactionsPath).
	Transactions string
	// QR is the gateway's QR generator (QRPath).
	QR string
	// DuitNowQR is the DuitNow QR generator (DuitNowQRPath).
	DuitNowQR string
	// Version is the service's version (VersionPath).
	Version string
	// Echo is the service's echo (EchoPath).
	Echo string
}

// DefaultEndpoints are the protocol's paths and the public PHP client's (docs/assumptions.md A-endpoints).
func DefaultEndpoints() Endpoints {
	return Endpoints{
		Checkout: CheckoutPath, Pay: PayPath, QR2: QR2Path,
		PaymentReport: PaymentReportPath, FPXRequest: FPXRequestPath, Transactions: TransactionsPath,
		QR: QRPath, DuitNowQR: DuitNowQRPath, Version: VersionPath, Echo: EchoPath,
	}
}

// endpointField is one Endpoints field, for defaults and validation.
type endpointField struct {
	name, def string
	p         *string
	dir       bool // the path is a prefix and ends in "/"
}

// fields lists the endpoints by name.
func (e *Endpoints) fields() []endpointField {
	d := DefaultEndpoints()
	return []endpointField{
		{"Checkout", d.Checkout, &e.Checkout, false}, {"Pay", d.Pay, &e.Pay, true}, {"QR2", d.QR2, &e.QR2, true},
		{"PaymentReport", d.PaymentReport, &e.PaymentReport, false}, {"FPXRequest", d.FPXRequest, &e.FPXRequest, false},
		{"Transactions", d.Transactions, &e.Transactions, false}, {"QR", d.QR, &e.QR, false},
		{"DuitNowQR", d.DuitNowQR, &e.DuitNowQR, false}, {"Version", d.Version, &e.Version, false}, {"Echo", d.Echo, &e.Echo, false},
	}
}
