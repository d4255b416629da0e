package paygate

import (
	"context"
	"net/http"
	"net/url"
)

// QRRequest asks for a payment QR code (docs/protocol.md endpoint 3).
type QRRequest struct {
	Agency    string // defaults to the client's; another is signed as given (docs/assumptions.md A-agency-override)
	RefNo     string // the merchant's reference, without ~
	ExtraData string // sent as refno = refNo~extraData
	Amount    Amount // at least 1.00
	Category  string // paymentCategory
	// DuitNow asks for a DuitNow QR (/api/duitnowqr/v1/generator) instead of
	// the gateway's own (/api/qrcode/v1/generator).
	DuitNow bool
}

// QRCode is the generator's answer, returned raw (its shape is not
// published: docs/assumptions.md A-qr).
type QRCode struct {
	// ContentType is the answer's Content-Type.
	ContentType string
	// Body is the answer's body, at most 64 KiB.
	Body []byte
}

// GenerateQR validates q like an order and POSTs it, signed, to the QR
// generator on {reports_url}, with fields agency, amount, refno and
// paymentCategory. Retried like CreateOrder.
func (c *Client) GenerateQR(ctx context.Context, q QRRequest) (*QRCode, error) {
	path := c.endpoints.QR
	if q.DuitNow {
		path = c.endpoints.DuitNowQR
	}
	target, err := c.endpoint(c.reportsURL, "WithReportsURL", path)
	if err != nil {
		return nil, err
	}
	if err := c.needKey("GenerateQR"); err != nil {
		return nil, err
	}
	var v ValidationError
	q.Agency = c.checkPayment(&v, "QRRequest", q.Agency, q.Category, q.RefNo, q.ExtraData, q.Amount)
	form := url.Values{"agency": {q.Agency}, "amount": {q.Amount.String()}, "refno": {composeRef(q.RefNo, q.ExtraData)}, "paymentCategory": {q.Category}}
	checkWireFields(&v, form)
	if err := v.err(); err != nil {
		return nil, err
	}
	resp, err := c.transport.do(ctx, exchange{method: http.MethodPost, target: target, attempt: c.signedPost(target, form), retryable: retrySignedPost, maxBody: maxCheckoutBody})
	if err != nil {
		return nil, err
	}
	return &QRCode{ContentType: resp.Header.Get("Content-Type"), Body: []byte(resp.Body)}, nil
}

// QRCodeURL is the gateway's unsigned QR image URL for a pay link:
// {checkout host}/qr2/?q=<the pay URL, query-escaped>, the shape of the
// public PHP client's GetQRCodeUrl (docs/assumptions.md A-qr). The pay URL
// inside is PayURL's, unsigned (a QR code outlives a 60 s signature), so
// l.Signed is refused. Nothing is sent.
func (c *Client) QRCodeURL(l PayLink) (string, error) {
	if l.Signed {
		return "", &ValidationError{Problems: []FieldError{newFieldError("signature", "a QR image URL is unsigned (a signature expires in 60 s); clear PayLink.Signed", "")}}
	}
	pay, err := c.PayURL(l)
	if err != nil {
		return "", err
	}
	page, err := c.payHost(c.endpoints.QR2)
	if err != nil {
		return "", err
	}
	return page + "?q=" + url.QueryEscape(pay), nil
}
