package gatewaytest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/signing"
)

// RefNoForm is how the sandbox's callbacks carry the merchant's extra
// reference. The protocol names both a joined convention (refNo~extra) and a
// separate extraData field without saying which the callback uses
// (docs/assumptions.md A-refno); split is the default.
// paygate.CallbackHandler accepts both as one order.
type RefNoForm int

const (
	// RefNoSplit sends refNo without the extra reference and the extra
	// reference in extraData (the default).
	RefNoSplit RefNoForm = iota
	// RefNoJoined sends refNo as received with the order (refNo~extra) and
	// the extra reference in extraData too.
	RefNoJoined
)

// WithCallbackRefNo sets how callbacks carry the extra reference (default
// RefNoSplit).
func WithCallbackRefNo(f RefNoForm) Option { return func(c *config) { c.refNoForm = f } }

// FPXShape is what the sandbox's callbacks put in the `fpx` field, whose
// inner structure the protocol does not show (docs/assumptions.md A-fpx).
type FPXShape int

const (
	// FPXDetailed is a JSON object with fpx_debit_auth_code and a few other
	// members (the default).
	FPXDetailed FPXShape = iota
	// FPXAbsent sends no fpx field (as card or DuitNow payments might).
	FPXAbsent
	// FPXWithoutCode is a JSON object without fpx_debit_auth_code.
	FPXWithoutCode
	// FPXEmptyCode is a JSON object whose fpx_debit_auth_code is "".
	FPXEmptyCode
	// FPXNull is the JSON literal null.
	FPXNull
	// FPXNotJSON is text that is not JSON.
	FPXNotJSON
)

// WithCallbackFPX sets the shape of the callbacks' fpx field (default
// FPXDetailed).
func WithCallbackFPX(s FPXShape) Option { return func(c *config) { c.fpxShape = s } }

// callbackFields are the payment callback's fields for an order, unsigned,
// in the configured refNo form and fpx shape.
func (s *Server) callbackFields(o Order) url.Values {
	base, extra, _ := strings.Cut(o.RefNo, "~")
	refNo := base
	if s.cfg.refNoForm == RefNoJoined {
		refNo = o.RefNo
	}
	f := url.Values{
		"status":     {string(o.Status)},
		"orderNo":    {o.OrderNo},
		"refNo":      {refNo},
		"amount":     {o.Amount.String()},
		"addCharge":  {"0.00"},
		"fpxTxnId":   {o.FPXTxnID},
		"fpxTxnTime": {o.Paid.In(time.FixedZone("MYT", 8*3600)).Format("2006-01-02 15:04:05")},
		"agency":     {o.Agency},
		"extraData":  {extra},
	}
	detail := fmt.Sprintf(`"fpx_seller_order_no":%q,"fpx_txn_amount":%q,"fpx_fpx_txn_id":%q,"fpx_buyer_name":"SANDBOX BUYER"`,
		o.RefNo, o.Amount.String(), o.FPXTxnID)
	switch s.cfg.fpxShape {
	case FPXDetailed:
		f.Set("fpx", fmt.Sprintf(`{"fpx_debit_auth_code":%q,%s}`, o.FPXCode, detail))
	case FPXWithoutCode:
		f.Set("fpx", "{"+detail+"}")
	case FPXEmptyCode:
		f.Set("fpx", `{"fpx_debit_auth_code":"",`+detail+"}")
	case FPXNull:
		f.Set("fpx", "null")
	case FPXNotJSON:
		f.Set("fpx", "approved")
	}
	return f
}

// WithPOSTSignedWithPath makes the sandbox check signed POSTs (orders, QR
// requests) over `<path>?<query>`, the way the public PHP client's SignMessage
// signs them, instead of the query alone, which the protocol says
// (docs/assumptions.md A-post-path). Pair it with the Client's
// paygate.WithPOSTSignedWithPath.
func WithPOSTSignedWithPath() Option { return func(c *config) { c.postWithPath = true } }

// WithUnsignedOrders makes the sandbox accept an order that carries neither
// signature nor exp: the protocol asks for a signature only "when using an
// API key" (docs/assumptions.md A-unsigned-orders). A signature that is
// present must still verify.
func WithUnsignedOrders() Option { return func(c *config) { c.unsignedOrders = true } }

// verifyPOST checks a signed POST's form under the configured rule.
func (s *Server) verifyPOST(r *http.Request, form url.Values) error {
	if s.cfg.postWithPath {
		return signing.VerifyForm(r.URL.EscapedPath()+"?", form, s.cfg.now(), s.verifier)
	}
	return signing.VerifyForm("", form, s.cfg.now(), s.verifier)
}

// WithMaxItems caps the report's page size at n rows whatever items asks
// for, as a service may (docs/assumptions.md A-report-filters); total_pages
// follows the cap.
func WithMaxItems(n int) Option { return func(c *config) { c.maxItems = n } }

// CallbackEncoding is the encoder whose message the sandbox signs its
// callbacks over. "Form-style, space becomes +" fits several encoders that
// differ on ~ and *, and the gateway's public PHP client signs everything
// else in RFC 3986 (space as %20); paygate.VerifyCallback accepts each
// (docs/assumptions.md A-callback-encoding). The form encoders differ only
// when a field holds ~ or * (a joined refNo, an extra reference): pair with
// WithCallbackRefNo(RefNoJoined) or WithRefNoTildes to see a difference.
// RFC 3986 differs whenever a field holds a space, as the default fpx
// field's buyer name does.
type CallbackEncoding int

const (
	// EncodingForm is Go's url.Values.Encode: ~ kept, * as %2A (the default).
	EncodingForm CallbackEncoding = iota
	// EncodingPHP is PHP's urlencode: ~ as %7E, * as %2A.
	EncodingPHP
	// EncodingWHATWG is the browsers' form serializer (and Java's
	// URLEncoder): ~ as %7E, * kept.
	EncodingWHATWG
	// EncodingRFC3986 is PHP's http_build_query with PHP_QUERY_RFC3986, as
	// the public PHP client signs its requests: space as %20, ~ kept, * as
	// %2A.
	EncodingRFC3986
)

// WithCallbackEncoding sets the encoder the callbacks are signed with
// (default EncodingForm).
func WithCallbackEncoding(e CallbackEncoding) Option { return func(c *config) { c.encoding = e } }

// WithUpperCaseSignature sends the callbacks' signature in upper-case hex
// (docs/assumptions.md A-callback-encoding).
func WithUpperCaseSignature() Option { return func(c *config) { c.upperHex = true } }

// signCallback signs a callback's fields as configured: the message of the
// configured encoder, the signature in the configured case.
func (s *Server) signCallback(f url.Values) (url.Values, error) {
	if s.cfg.encoding == EncodingForm && !s.cfg.upperHex {
		return SignCallback(s.key, f)
	}
	// Computed here, not with the SDK's own candidate list, so that the
	// sandbox tests the verifier rather than agree with it. In Go's
	// encoding a literal ~ comes only from ~, %2A only from * and + only
	// from a space.
	msg := f.Encode()
	switch s.cfg.encoding {
	case EncodingPHP:
		msg = strings.ReplaceAll(msg, "~", "%7E")
	case EncodingWHATWG:
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, "~", "%7E"), "%2A", "*")
	case EncodingRFC3986:
		msg = strings.ReplaceAll(msg, "+", "%20")
	}
	raw, err := hex.DecodeString(strings.ReplaceAll(s.APIKey, "-", ""))
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, raw)
	mac.Write([]byte(msg))
	sig := hex.EncodeToString(mac.Sum(nil))[:16]
	if s.cfg.upperHex {
		sig = strings.ToUpper(sig)
	}
	out := make(url.Values, len(f)+1)
	for k, v := range f {
		out[k] = v
	}
	out.Set("signature", sig)
	return out, nil
}
