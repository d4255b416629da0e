package paygate

import "github.com/paygate-go/paygate/internal/paths"

// Endpoints are the paths the Client calls, in one place: where the real
// service differs from the protocol document, set the path here
// (WithEndpoints) instead of patching calls. An empty field keeps its
// default (DefaultEndpoints). Paths are absolute ("/..."), without query
// or fragment; Checkout applies only to a checkout URL given as a bare
// host (WithCheckoutURL).
type Endpoints struct {
	// Checkout is order creation (docs/protocol.md endpoint 1):
	// /v2/checkout.
	Checkout string
	// Pay prefixes the hosted pay URL (endpoint 2): /pay/. It ends in "/".
	Pay string
	// QR2 is the unsigned QR image page: /qr2/. It ends in "/".
	QR2 string
	// PaymentReport is the payment report (endpoint 4):
	// /api/report/v1/payment.
	PaymentReport string
	// FPXRequest is the single order lookup (endpoint 5):
	// /api/report/v1/fpxrequest.
	FPXRequest string
	// Transactions is a buyer's transaction history:
	// /api/user/v1/transactions.
	Transactions string
	// QR is the gateway's QR generator (endpoint 3):
	// /api/qrcode/v1/generator.
	QR string
	// DuitNowQR is the DuitNow QR generator: /api/duitnowqr/v1/generator.
	DuitNowQR string
	// Version is the service's version: /api/version.
	Version string
	// Echo is the service's echo, a health check: /api/echo.
	Echo string
	// BankList prefixes the FPX bank list, followed by the channel:
	// /api/v1/fpx/banklist/. It ends in "/" (docs/assumptions.md
	// A-banklist).
	BankList string
}

// DefaultEndpoints are the protocol's paths and the public PHP client's (docs/assumptions.md A-endpoints).
func DefaultEndpoints() Endpoints {
	return Endpoints{
		Checkout: paths.Checkout, Pay: paths.Pay, QR2: paths.QR2,
		PaymentReport: paths.PaymentReport, FPXRequest: paths.FPXRequest, Transactions: paths.Transactions,
		QR: paths.QR, DuitNowQR: paths.DuitNowQR, Version: paths.Version, Echo: paths.Echo,
		BankList: paths.BankList,
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
		{"BankList", d.BankList, &e.BankList, true},
	}
}
