package paygate

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/signing"

	"github.com/google/go-querystring/query"
)

// maxOrderField is the limit on every order field (docs/protocol.md (A1: "at most 255
// bytes each", ASCII).
const maxOrderField = 255

// Order is a payment order (docs/protocol.md A1).
type Order struct {
	// Agency defaults to the client's (WithAgency). Another agency is sent
	// and signed with the client's key as given, unchallenged: the gateway,
	// which knows the key's agency, decides (docs/assumptions.md
	// A-agency-override).
	Agency string
	// RefNo is the merchant's reference; it must not contain ~.
	RefNo string
	// ExtraData, when set, is sent as refNo~extraData (docs/protocol.md A1 convention);
	// it must not contain ~ either.
	ExtraData string
	// Amount is at least MinOrderAmount (RM 1.00).
	Amount Amount
	// Email is the buyer's address, a plain one (docs/assumptions.md A-email).
	Email string
	// ReturnURL receives the callbacks: an absolute http(s) URL
	// (docs/assumptions.md A-return-url).
	ReturnURL string

	// The optional fields below are the gateway's developer pages' order
	// fields beyond the protocol's (docs/assumptions.md A-order-fields).
	// Each is sent only when set, signed like the rest, and held to the
	// order rules: ASCII, at most 255 bytes.

	// CancelURL (cancelUrl) is where the buyer goes on cancelling at the
	// checkout page before the request reaches the bank; an absolute
	// http(s) URL. Later cancellations and failures come to ReturnURL.
	CancelURL string
	// PrefMethod (pref_method) asks the hosted checkout to preselect a
	// payment method; the buyer can still choose another. The protocol
	// does not define it and no list of accepted values is published: the
	// developer pages mark it alpha and give one example, "fpx/b2b1" (FPX
	// for businesses). The SDK sends the value as given, checked only as
	// every order field is (ASCII, at most 255 bytes), and the gateway
	// decides what it accepts (docs/calling-the-gateway.md). An FPX B2B
	// value under MinB2BAmount is sent all the same: the gateway is said to
	// hide B2B then and let the buyer choose another method
	// (docs/assumptions.md A-b2b-minimum).
	PrefMethod string
	// PrefBank (pref_bank) asks the hosted checkout to preselect a bank by
	// its FPX bank code; the buyer can still choose another. The protocol
	// does not define it and no list of accepted codes is published: the
	// developer pages mark it alpha and give one example, "ABB0235". The
	// SDK sends the value as given, checked only as every order field is
	// (ASCII, at most 255 bytes), and the gateway decides what it accepts
	// (docs/calling-the-gateway.md).
	PrefBank string
	// UTM are the campaign tracking fields (utm_*).
	UTM UTM
	// DebugData (extra_data) is the pages' "internal debug use only" field;
	// it is not the extra reference, which is ExtraData.
	DebugData string
}

// UTM are an order's campaign tracking fields, as the gateway's developer
// pages list them (docs/assumptions.md A-order-fields).
type UTM struct {
	// Source (utm_source) names the site that sent the buyer, e.g.
	// "instagram".
	Source string `url:"utm_source,omitempty"`
	// Medium (utm_medium) is the kind of link, e.g. "email" or "cpc".
	Medium string `url:"utm_medium,omitempty"`
	// Campaign (utm_campaign) names the campaign, e.g. "spring_sale".
	Campaign string `url:"utm_campaign,omitempty"`
	// Term (utm_term) is the search terms, e.g. "pay zakat".
	Term string `url:"utm_term,omitempty"`
	// Content (utm_content) is what was clicked, e.g. "logolink".
	Content string `url:"utm_content,omitempty"`
}

// orderWire is the order as its form fields (docs/protocol.md A1, and the
// optional fields of docs/assumptions.md A-order-fields).
type orderWire struct {
	Agency     string `url:"agency"`
	RefNo      string `url:"refNo"`
	Amount     Amount `url:"amount"`
	Email      string `url:"email"`
	ReturnURL  string `url:"returnUrl"`
	CancelURL  string `url:"cancelUrl,omitempty"`
	PrefMethod string `url:"pref_method,omitempty"`
	PrefBank   string `url:"pref_bank,omitempty"`
	UTM
	DebugData string `url:"extra_data,omitempty"`
}

// checkURL records the rule of an order URL: absolute http(s)
// (docs/assumptions.md A-return-url).
func checkURL(v *ValidationError, field, s string) {
	if u, err := url.Parse(s); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		v.add(field, "must be an absolute http(s) URL", s)
	}
}

// composeRef joins a reference and its extra data with ~ (docs/protocol.md A1).
func composeRef(refNo, extra string) string {
	if extra == "" {
		return refNo
	}
	return refNo + "~" + extra
}

// checkRef records the rules of refNo and extraData (docs/protocol.md A1).
func checkRef(v *ValidationError, refNo, extra string) {
	if refNo == "" {
		v.add("refNo", ruleRequired, "")
	}
	if strings.Contains(refNo, "~") {
		v.add("refNo", "must not contain ~ (it separates the extra data)", refNo)
	}
	if strings.Contains(extra, "~") {
		v.add("extraData", "must not contain ~ (it separates the extra data)", extra)
	}
}

// checkOrderAmount records the amount rule (docs/protocol.md A1, Limits: >=
// 1.00).
func checkOrderAmount(v *ValidationError, a Amount) {
	if a < MinOrderAmount {
		v.add("amount", "must be at least 1.00", a.String())
	}
}

// checkWireFields records the A1 limits on the composed fields: ASCII, at
// most 255 bytes.
func checkWireFields(v *ValidationError, form url.Values) {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := form.Get(k)
		if len(s) > maxOrderField {
			v.add(k, fmt.Sprintf("must be at most %d bytes (is %d)", maxOrderField, len(s)), s)
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				v.add(k, "must be ASCII", s)
				break
			}
		}
	}
}

// validate checks every rule of docs/protocol.md A1 at once and returns the form fields.
func (o Order) validate(defaultAgency, agencySetting string) (url.Values, error) {
	var v ValidationError
	w := orderWire{Agency: o.Agency, RefNo: composeRef(o.RefNo, o.ExtraData), Amount: o.Amount, Email: o.Email, ReturnURL: o.ReturnURL,
		CancelURL: o.CancelURL, PrefMethod: o.PrefMethod, PrefBank: o.PrefBank, UTM: o.UTM, DebugData: o.DebugData}
	if w.Agency == "" {
		w.Agency = defaultAgency
	}
	if w.Agency == "" {
		v.add("agency", ruleRequired+" (Order.Agency or "+agencySetting+")", "")
	}
	checkRef(&v, o.RefNo, o.ExtraData)
	checkOrderAmount(&v, o.Amount)
	if o.Email == "" {
		v.add("email", ruleRequired, "")
	} else if !validEmail(o.Email) {
		v.add("email", ruleEmail, o.Email)
	}
	if o.ReturnURL == "" {
		v.add("returnUrl", ruleRequired, "")
	} else {
		checkURL(&v, "returnUrl", o.ReturnURL)
	}
	if o.CancelURL != "" {
		checkURL(&v, "cancelUrl", o.CancelURL)
	}
	form, err := query.Values(w)
	if err != nil {
		return nil, fmt.Errorf("paygate: encoding the order: %w", err)
	}
	checkWireFields(&v, form)
	if err := v.err(); err != nil {
		return nil, err
	}
	return form, nil
}

// CheckoutForm is a signed order for the buyer's browser to POST to the
// hosted checkout (docs/protocol.md "Payment flow", stage 1). The signature's exp is 60 s
// after signing (docs/protocol.md "Authentication"): render it and let the browser submit
// it at once; a form posted after Expires is refused by the gateway.
type CheckoutForm struct {
	// Action is {checkout_url}/v2/checkout.
	Action string
	// Fields are the order fields, with exp and signature when signed.
	Fields url.Values
	// Expires is when the signature stops being valid; zero when unsigned.
	Expires time.Time
	// CSPNonce, when set, is put on the auto-submit script so that a page
	// with a Content-Security-Policy script-src 'nonce-...' runs it.
	CSPNonce string
}

// CheckoutForm validates o and, when the client has an API key, signs it
// for the buyer's browser. Without a key the form is unsigned (no exp, no
// signature, a zero Expires): the protocol asks for a signature only "when
// using an API key" (docs/assumptions.md A-unsigned-orders). Nothing is
// sent.
func (c *Client) CheckoutForm(o Order) (*CheckoutForm, error) {
	action, err := c.checkoutTarget()
	if err != nil {
		return nil, err
	}
	form, err := o.validate(c.agency, c.setting("WithAgency"))
	if err != nil {
		return nil, err
	}
	if !c.key.valid() {
		return &CheckoutForm{Action: action, Fields: form}, nil
	}
	now := c.now()
	signed, err := c.signPOST(action, form, c.signNow())
	if err != nil {
		return nil, err
	}
	return &CheckoutForm{Action: action, Fields: signed, Expires: now.Add(SignatureTTL).Truncate(time.Second)}, nil
}

// checkoutPage is the auto-submitting page. html/template escapes every
// value; the button is the fallback when scripts do not run.
var checkoutPage = template.Must(template.New("checkout").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Redirecting to payment</title></head>
<body>
<form id="paygate-checkout" method="post" action="{{.Action}}">
{{- range .Fields}}
<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{- end}}
<p>Taking you to the payment page…</p>
<button type="submit">Continue to payment</button>
</form>
<script{{if .Nonce}} nonce="{{.Nonce}}"{{end}}>document.getElementById("paygate-checkout").submit();</script>
</body>
</html>
`))

// WriteHTML renders a page that POSTs the form as soon as it loads, with a
// visible submit button when scripts are off. Every value is escaped.
func (f *CheckoutForm) WriteHTML(w io.Writer) error {
	type field struct{ Name, Value string }
	names := make([]string, 0, len(f.Fields))
	for k := range f.Fields {
		names = append(names, k)
	}
	slices.Sort(names)
	fields := make([]field, 0, len(names))
	for _, k := range names {
		for _, v := range f.Fields[k] {
			fields = append(fields, field{k, v})
		}
	}
	return checkoutPage.Execute(w, struct {
		Action string
		Fields []field
		Nonce  string
	}{f.Action, fields, f.CSPNonce})
}

// signedPost makes each attempt of a form POST to target, signed afresh when
// the client has an API key (callers that need one check first).
func (c *Client) signedPost(target string, form url.Values) attemptFunc {
	return func(ctx context.Context) (*http.Request, error) {
		var body string
		if c.key.valid() {
			var err error
			if body, err = c.signedPOSTBody(target, form, c.signNow()); err != nil {
				return nil, err
			}
		} else {
			body = form.Encode()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("User-Agent", userAgent)
		return req, nil
	}
}

// signPOST signs a POST body for target under the client's rule
// (postPrefix).
func (c *Client) signPOST(target string, form url.Values, now time.Time) (url.Values, error) {
	prefix, err := c.postPrefix(target)
	if err != nil {
		return nil, err
	}
	return signing.SignForm(c.key.k, prefix, form, now)
}

// signedPOSTBody is signPOST(...).Encode(), the signed body, built without
// the url.Values in between: form-encoded (space as +) while the signature
// covers the RFC 3986 query (space as %20), the service being assumed to
// decode the fields before it rebuilds the message (docs/assumptions.md
// A-post-body).
func (c *Client) signedPOSTBody(target string, form url.Values, now time.Time) (string, error) {
	prefix, err := c.postPrefix(target)
	if err != nil {
		return "", err
	}
	return signing.SignFormBody(c.key.k, prefix, form, now)
}

// postPrefix is what a POST's signature covers before its query: nothing,
// by the protocol, or target's path and ? with WithPOSTSignedWithPath
// (docs/assumptions.md A-post-path).
func (c *Client) postPrefix(target string) (string, error) {
	if !c.postWithPath {
		return "", nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("paygate: %w", err)
	}
	return u.EscapedPath() + "?", nil
}

// PayLink is a hosted pay URL (docs/protocol.md endpoint 2).
type PayLink struct {
	Agency    string // defaults to the client's; another is used as given, unchallenged (docs/assumptions.md A-agency-override)
	Category  string // paymentCategory; allowed values are not published (docs/assumptions.md A-pay-url)
	RefNo     string // the merchant's reference, without ~
	ExtraData string // sent as refNo~extraData
	Amount    Amount // at least 1.00
	// Signed adds exp and signature with SignURL (whether the gateway
	// requires it is not published (docs/assumptions.md A-pay-url); it needs the API key).
	Signed bool
}

// PayURL builds {checkout_url}/pay/{agency}/{category}/{refNo}/{amount} with
// each segment path-escaped, validated like an order, and signed when
// l.Signed is set. Nothing is sent. A segment may not be "." or "..",
// which url.PathEscape keeps and a browser resolves away.
func (c *Client) PayURL(l PayLink) (string, error) {
	base, err := c.payHost(c.endpoints.Pay)
	if err != nil {
		return "", err
	}
	var v ValidationError
	l.Agency = c.checkPayment(&v, "PayLink", l.Agency, l.Category, l.RefNo, l.ExtraData, l.Amount)
	ref := composeRef(l.RefNo, l.ExtraData)
	checkWireFields(&v, url.Values{"agency": {l.Agency}, "paymentCategory": {l.Category}, "refNo": {ref}})
	checkPathSegments(&v, [][2]string{{"agency", l.Agency}, {"paymentCategory", l.Category}, {"refNo", ref}})
	if err := v.err(); err != nil {
		return "", err
	}
	u := base + url.PathEscape(l.Agency) + "/" + url.PathEscape(l.Category) + "/" + url.PathEscape(ref) + "/" + l.Amount.String()
	if !l.Signed {
		return u, nil
	}
	if err := c.needKey("a signed PayURL"); err != nil {
		return "", err
	}
	return SignURL(c.key, u, c.signNow())
}

// rulePathSegment is the rule of a field a PayURL puts in its path.
const rulePathSegment = `must not be "." or ".." (a segment of the pay URL's path, which browsers and servers resolve away)`

// checkPathSegments records the fields, name and value, that would be a
// dot segment of a PayURL's path: url.PathEscape keeps "." and "..", and
// the browser would resolve them (/pay/AG/fpx/../1.00 is /pay/AG/1.00),
// sending the buyer to another page than the order's (docs/assumptions.md
// A-pay-link-segments).
func checkPathSegments(v *ValidationError, fields [][2]string) {
	for _, f := range fields {
		if f[1] == "." || f[1] == ".." {
			v.add(f[0], rulePathSegment, f[1])
		}
	}
}

// checkPayment records the rules a pay link and a QR request share: an
// agency (the client's by default; another is not challenged,
// docs/assumptions.md A-agency-override), a paymentCategory, refNo and extraData
// without ~, an amount of at least 1.00. It returns the agency to send.
func (c *Client) checkPayment(v *ValidationError, what, agency, category, refNo, extra string, amount Amount) string {
	if agency == "" {
		agency = c.agency
	}
	if agency == "" {
		v.add("agency", ruleRequired+" ("+what+".Agency or WithAgency)", "")
	}
	if category == "" {
		v.add("paymentCategory", ruleRequired, "")
	}
	checkRef(v, refNo, extra)
	checkOrderAmount(v, amount)
	return agency
}
