package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// defaultForwardTimeout bounds one post of paygate listen and paygate
// replay to the merchant's handler.
const defaultForwardTimeout = 10 * time.Second

// forwardBodyLimit is how much of the handler's answer is read and shown.
const forwardBodyLimit = 512

// forwarder posts callbacks rebuilt from the gateway's records to the
// merchant's handler at target, signed with the merchant's key, as the
// gateway's direct callback does. A redirect is answered, never followed:
// the signed form goes to target only.
type forwarder struct {
	key    paygate.Key
	target string
	client *http.Client
}

// newForwarder makes a forwarder to target whose posts each last at most
// timeout.
func newForwarder(key paygate.Key, target string, timeout time.Duration) forwarder {
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return forwarder{key: key, target: target, client: &http.Client{Timeout: timeout, CheckRedirect: noRedirects}}
}

// answer is the handler's answer to one post.
type answer struct {
	code int
	// body is the start of the answer's body, the signature sent cut out.
	body string
}

// ok reports whether the handler took the callback (2xx).
func (a answer) ok() bool { return a.code/100 == 2 }

// String is the status line: "200 OK".
func (a answer) String() string {
	s := fmt.Sprintf("%d %s", a.code, http.StatusText(a.code))
	if a.code/100 == 3 {
		s += " (a redirect: not followed)"
	}
	return s
}

// post signs form (gatewaytest.SignCallback) and POSTs it, form-encoded, to
// the target. The error is the transport's (no answer); it and the
// answer never hold the key or the signature.
func (f forwarder) post(ctx context.Context, form url.Values) (answer, error) {
	signed, err := gatewaytest.SignCallback(f.key, form)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.target, strings.NewReader(signed.Encode()))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := f.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, forwardBodyLimit))
	// A handler that echoes its request would print the signature.
	text := strings.ReplaceAll(string(body), signed.Get("signature"), "[signature]")
	return answer{code: resp.StatusCode, body: text}, nil
}

// forwardTarget checks the URL callbacks are forwarded to: an absolute
// http(s) URL. warning is non-empty when the callbacks would leave this
// machine unencrypted.
func forwardTarget(flag, s string) (target, warning string, err error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("%s %q: want an absolute http(s) URL, such as http://localhost:8080/paygate/callback", flag, s)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		warning = fmt.Sprintf("%s is not this machine and the signed callbacks go to it over plain http", u.Hostname())
	}
	return u.String(), warning, nil
}

// callbackForm is the direct callback the gateway sends for record p
// (docs/protocol.md A2), unsigned: refNo and extraData apart (the
// sandbox's default form, A-refno), the amount in ringgit, fpxTxnTime in
// Malaysian time and fpx carrying fpx_debit_auth_code. A field the record
// does not carry (addCharge always; fpx when the record has no code) is
// left out, never invented.
func callbackForm(p paygate.PaymentRecord) url.Values {
	fields := [...]struct{ name, value string }{
		{"status", string(p.Status)},
		{"orderNo", p.OrderNo},
		{"refNo", p.RefNo},
		{"extraData", p.ExtraData},
		{"amount", amountText(p.Amount)},
		{"fpxTxnId", p.FPXTxnID},
		{"fpxTxnTime", timeText(p.Time)},
		{"agency", p.Agency},
		{"fpx", fpxText(p)},
	}
	form := url.Values{}
	for _, f := range fields {
		if f.value != "" {
			form.Set(f.name, f.value)
		}
	}
	return form
}

// amountText is a record's amount as the callback writes it; "" when the
// record had none.
func amountText(a paygate.Amount) string {
	if a == 0 {
		return ""
	}
	return a.String()
}

// timeText is a time as the callback's fpxTxnTime, Malaysian; "" for zero.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(paygate.MalaysiaTime()).Format(time.DateTime)
}

// fpxText is the callback's fpx field for record p: its
// fpx_debit_auth_code as JSON; "" when the record names none.
func fpxText(p paygate.PaymentRecord) string {
	if !p.HasFPXCode {
		return ""
	}
	return fmt.Sprintf(`{"fpx_debit_auth_code":%q}`, string(p.FPXCode))
}

// recordRule is one reason not to forward a record of the gateway as a
// callback. A quiet rule is no problem: there is nothing to forward yet.
type recordRule struct {
	applies func(p *paygate.PaymentRecord, agency string) bool
	reason  string
	quiet   bool
}

// recordRules are the rules a record must pass to be forwarded, in order.
// A callback signed with the merchant's own key is believed whole by the
// handler, so a record the SDK's Reconcile would hold back (docs/assumptions.md
// A-reconcile) is held back here too, and an order the buyer has not yet
// paid (pending, no FPX transaction) is not called back, as the gateway
// calls back only once the buyer decides.
var recordRules = []recordRule{
	{applies: func(p *paygate.PaymentRecord, _ string) bool { return p.RefNo == "" }, reason: "no reference"},
	{applies: func(p *paygate.PaymentRecord, _ string) bool {
		return p.Status == paygate.StatusPending && p.FPXTxnID == ""
	}, reason: "not paid yet: the gateway calls back once the buyer decides", quiet: true},
	{applies: func(p *paygate.PaymentRecord, _ string) bool { return !p.Status.Valid() },
		reason: "the status cannot be proved (neither success, pending nor failed)"},
	{applies: func(p *paygate.PaymentRecord, agency string) bool {
		return agency != "" && p.Agency != "" && p.Agency != agency
	}, reason: "another agency than PAYGATE_AGENCY's"},
	{applies: func(p *paygate.PaymentRecord, _ string) bool {
		return p.Status == paygate.StatusSuccess && p.Amount <= 0
	},
		reason: "a success without an amount"},
	{applies: func(p *paygate.PaymentRecord, _ string) bool {
		return p.Status == paygate.StatusSuccess && moneyProblem(p)
	},
		reason: "a success whose fields did not parse or contradict each other"},
}

// displayOnlyFields are the record fields whose problems do not touch
// money, as CallbackHandler.Reconcile reads them.
var displayOnlyFields = map[string]bool{
	"fpx_txn_time": true, "fpxTxnTime": true, "created_at": true, "created_date": true,
	"fpx_txn_id": true, "fpx_fpx_txn_id": true, "fpxTxnId": true,
}

// moneyProblem reports whether a problem of p is in a field other than
// displayOnlyFields.
func moneyProblem(p *paygate.PaymentRecord) bool {
	for _, fe := range p.Problems {
		if !displayOnlyFields[fe.Field] {
			return true
		}
	}
	return false
}

// holdReason is the first recordRule p breaks, with agency the client's;
// ok is true when p is to be forwarded.
func holdReason(p *paygate.PaymentRecord, agency string) (rule recordRule, ok bool) {
	for _, r := range recordRules {
		if r.applies(p, agency) {
			return r, false
		}
	}
	return recordRule{}, true
}

// fullRef is a record's reference as the order was created: refNo, or
// refNo~extraData.
func fullRef(p *paygate.PaymentRecord) string {
	if p.ExtraData == "" {
		return p.RefNo
	}
	return p.RefNo + "~" + p.ExtraData
}
