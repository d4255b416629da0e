package gatewaytest

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/signing"

	"github.com/paygate-go/paygate"
	emailrule "github.com/paygate-go/paygate/internal/email"
)

// Order is an order the sandbox holds (docs/protocol.md A1 fields plus the gateway's
// own number and state).
type Order struct {
	OrderNo   string          // the sandbox's order number (SB...)
	Agency    string          // the merchant's agency
	RefNo     string          // as received: refNo~extraData
	Amount    paygate.Amount  // the order amount
	Email     string          // the buyer's e-mail address
	ReturnURL string          // where the returns and callbacks go
	Category  string          // "checkout" or the pay URL's paymentCategory
	Status    paygate.Status  // "" until the buyer chooses
	FPXCode   paygate.FPXCode // the fpx_debit_auth_code of the outcome
	FPXTxnID  string          // the payment network's transaction id
	CancelURL string          // cancelUrl, where a buyer who cancels goes; "" for none
	Options   url.Values      // the optional fields as received: pref_method, pref_bank, utm_*, extra_data
	Created   time.Time       // when the order was made
	Paid      time.Time       // when the buyer decided; zero until then
}

// createOrder is POST /v2/checkout (docs/protocol.md "Create order"): a
// signed order (or, with WithUnsignedOrders, one with neither signature nor
// exp) from the merchant's server or the buyer's browser. It answers 303 to
// the hosted checkout page.
func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		jsonError(w, http.StatusBadRequest, "form: "+err.Error())
		return
	}
	form := r.PostForm
	unsigned := s.cfg.unsignedOrders && !form.Has("signature") && !form.Has("exp")
	if !unsigned && !s.checkSigned(w, s.verifyPOST(r, form)) {
		return
	}
	o, problems := s.validateOrder(form.Get("agency"), form.Get("refNo"), form.Get("amount"), form.Get("email"), form.Get("returnUrl"))
	problems = append(problems, s.orderOptions(o, form)...)
	if len(problems) > 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"status": "ERROR", "errors": problems})
		return
	}
	o.Category = "checkout"
	loss := s.loseCreate(o)
	err := s.store(o)
	if loss == LoseAfterStore {
		panic(http.ErrAbortHandler) // the answer is lost (WithLostCreateAnswers)
	}
	if err != nil {
		jsonError(w, http.StatusConflict, err.Error())
		return
	}
	http.Redirect(w, r, hostedPagePath+o.OrderNo, http.StatusSeeOther)
}

// payLink is GET /pay/{agency}/{category}/{refNo}/{amount}
// (docs/protocol.md endpoint 2): the same order without a form. A signature, when present, must verify.
func (s *Server) payLink(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("signature") && !s.checkSigned(w, signing.VerifyURL(r.URL, s.cfg.now(), s.verifier)) {
		return
	}
	o, problems := s.validateOrder(r.PathValue("agency"), r.PathValue("refNo"), r.PathValue("amount"), "", "")
	if len(problems) > 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"status": "ERROR", "errors": problems})
		return
	}
	o.Category = r.PathValue("category")
	if err := s.store(o); err != nil {
		jsonError(w, http.StatusConflict, err.Error())
		return
	}
	page := hostedPagePath + o.OrderNo
	if s.paySrv != nil {
		page = s.URL + page // the hosted page is on the checkout host
	}
	http.Redirect(w, r, page, http.StatusSeeOther)
}

// WithB2BMinimumRefused makes the sandbox refuse (400, field amount) an
// order whose pref_method is FPX B2B ("fpx/b2b1") for less than RM 2.00,
// the other reading of docs/assumptions.md A-b2b-minimum. By default the
// sandbox takes it, as the gateway is said to (it hides B2B and offers the
// buyer the other methods).
func WithB2BMinimumRefused() Option { return func(c *config) { c.refuseB2BUnderMinimum = true } }

// WithoutB2BMinimum takes an FPX B2B order under RM 2.00, which the sandbox
// now does by default.
//
// Deprecated: the default since the SDK stopped refusing such orders
// (docs/assumptions.md A-b2b-minimum); WithB2BMinimumRefused plays a
// service that refuses them.
func WithoutB2BMinimum() Option { return func(c *config) { c.refuseB2BUnderMinimum = false } }

// WithRefNoTildes makes the sandbox accept an order whose refNo holds
// several ~, as the public developer pages' sample does
// (docs/assumptions.md A-refno-tildes); its callbacks then carry everything
// after the first ~ as the extra reference. Off by default: the protocol
// keeps ~ out of refNo and the extra reference alike (docs/protocol.md A1).
func WithRefNoTildes() Option { return func(c *config) { c.refNoTildes = true } }

// checkSigned answers a failed signature check: 401 for an expired exp, 403
// otherwise, with a JSON error. It reports whether the request may go on.
func (s *Server) checkSigned(w http.ResponseWriter, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, paygate.ErrSignatureExpired):
		jsonError(w, http.StatusUnauthorized, "signature expired")
	default:
		jsonError(w, http.StatusForbidden, "signature missing or wrong")
	}
	return false
}

// hostedPagePath prefixes the sandbox's hosted checkout page of an order
// (its orderNo follows), where an order's redirect points.
const hostedPagePath = "/checkout/"

// problem is one refused field, as the sandbox reports it.
type problem struct {
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// validateOrder applies docs/protocol.md A1 to received fields. email and returnURL are
// checked when not empty (a pay link has neither).
func (s *Server) validateOrder(agency, refNo, amount, email, returnURL string) (*Order, []problem) {
	a, amountRule := orderAmount(amount)
	checks := []struct {
		field, rule string
		broken      bool
	}{
		{field: "agency", rule: "must be this sandbox's agency " + s.Agency, broken: agency != s.Agency},
		{field: "refNo", rule: "required", broken: refNo == ""},
		{field: "refNo", rule: "at most one ~ (refNo~extraData; WithRefNoTildes accepts more)", broken: strings.Count(refNo, "~") > 1 && !s.cfg.refNoTildes},
		{field: "amount", rule: amountRule, broken: amountRule != ""},
		{field: "email", rule: "a valid e-mail address", broken: email != "" && !emailrule.Valid(email)},
		{field: "returnUrl", rule: "an absolute http(s) URL", broken: returnURL != "" && !absoluteHTTP(returnURL)},
	}
	var ps []problem
	for _, c := range checks {
		if c.broken {
			ps = append(ps, problem{c.field, c.rule})
		}
	}
	for name, v := range map[string]string{"agency": agency, "refNo": refNo, "amount": amount, "email": email, "returnUrl": returnURL} {
		ps = append(ps, textProblems(name, v)...)
	}
	return &Order{Agency: agency, RefNo: refNo, Amount: a, Email: email, ReturnURL: returnURL}, ps
}

// orderAmount reads an order amount and the rule it breaks, "" when none:
// a decimal with exactly two places, at least paygate.MinOrderAmount.
func orderAmount(amount string) (paygate.Amount, string) {
	a, err := paygate.ParseAmount(amount)
	switch {
	case err != nil || !strings.Contains(amount, ".") || len(amount)-strings.IndexByte(amount, '.') != 3:
		return a, "decimal with exactly 2 places"
	case a < paygate.MinOrderAmount:
		return a, "at least 1.00"
	}
	return a, ""
}

// absoluteHTTP reports whether raw is an absolute http or https URL.
func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https")
}

// textProblems are the problems of field name's value v: over 255 bytes,
// or not ASCII.
func textProblems(name, v string) []problem {
	var ps []problem
	if len(v) > 255 {
		ps = append(ps, problem{name, "at most 255 bytes"})
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r >= 0x80 }) {
		ps = append(ps, problem{name, "ASCII only"})
	}
	return ps
}

// cloneValues copies v (nil stays nil).
func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// optionalOrderFields are the order fields beyond the protocol's that the
// gateway's developer pages list (docs/assumptions.md A-order-fields),
// besides cancelUrl.
var optionalOrderFields = [...]string{"pref_method", "pref_bank", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "extra_data"}

// orderOptions checks and keeps an order's optional fields: cancelUrl an
// absolute http(s) URL, every field ASCII and at most 255 bytes, and, with
// WithB2BMinimumRefused, an amount of at least 2.00 for a pref_method of
// FPX B2B.
func (s *Server) orderOptions(o *Order, form url.Values) []problem {
	var ps []problem
	if m := strings.ToLower(form.Get("pref_method")); strings.HasPrefix(m, "fpx/b2b") && o.Amount < paygate.MinB2BAmount && s.cfg.refuseB2BUnderMinimum {
		ps = append(ps, problem{"amount", "at least 2.00 for FPX B2B (WithB2BMinimumRefused)"})
	}
	if c := form.Get("cancelUrl"); c != "" {
		if !absoluteHTTP(c) {
			ps = append(ps, problem{"cancelUrl", "an absolute http(s) URL"})
		}
		o.CancelURL = c
	}
	for _, name := range optionalOrderFields {
		if v, ok := form[name]; ok {
			if o.Options == nil {
				o.Options = url.Values{}
			}
			o.Options[name] = v
		}
	}
	for _, name := range sortedKeys(form) {
		for _, v := range form[name] {
			ps = append(ps, textProblems(name, v)...)
		}
	}
	return ps
}

// store keeps a new order under a fresh number. A refNo is one order: a
// second order with the same refNo is refused unless the first failed (or
// WithRepeatedRefNos).
func (s *Server) store(o *Order) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.byRef[o.RefNo]; ok && prev.Status != paygate.StatusFailed && !s.cfg.repeatedRefNos {
		return fmt.Errorf("refNo %q already has order %s", o.RefNo, prev.OrderNo)
	}
	o.Created = s.cfg.now()
	o.OrderNo = fmt.Sprintf("SB%s%06d", o.Created.UTC().Format("20060102"), len(s.orders)+1)
	s.orders = append(s.orders, o)
	s.byNo[o.OrderNo] = o
	s.byRef[o.RefNo] = o
	return nil
}

// hostedTemplate is the hosted checkout page and the browser return.
var hostedTemplate = template.Must(template.New("hosted").Parse(`{{define "page"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox checkout</title></head>
<body>
<h1>Sandbox checkout</h1>
<p id="order">Order {{.OrderNo}} for {{.RefNo}}: RM {{.Amount}}</p>
{{if .Status}}<p id="status">This order is {{.Status}}.</p>{{else}}
<form method="post"><input type="hidden" name="choice" value="success"><button id="pay" type="submit">Pay</button></form>
<form method="post"><input type="hidden" name="choice" value="failed"><button id="decline" type="submit">Decline</button></form>
<form method="post"><input type="hidden" name="choice" value="pending"><button id="leave-pending" type="submit">Leave pending</button></form>
{{if .CancelURL}}<form method="post"><input type="hidden" name="choice" value="cancel"><button id="cancel" type="submit">Cancel</button></form>{{end}}
{{end}}
</body></html>
{{end}}{{define "return"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Returning to the merchant</title></head>
<body>
<form id="return" method="post" action="{{.Action}}">
{{range .Fields}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<button type="submit">Return to the merchant</button>
</form>
<script>document.getElementById("return").submit();</script>
</body></html>
{{end}}`))

// hostedPage is the gateway-hosted checkout (payment flow stage 2).
func (s *Server) hostedPage(w http.ResponseWriter, r *http.Request) {
	o, ok := s.order(r.PathValue("orderNo"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = hostedTemplate.ExecuteTemplate(w, "page", o)
}

// hostedChoice is a button of the hosted page: the outcome is decided, the
// signed direct callback goes out server to server, and the buyer's browser
// is sent back to returnUrl with the unsigned fields (payment flow stages 3
// and 4). An order from a pay link has no returnUrl: the page shows the
// outcome instead.
func (s *Server) hostedChoice(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("choice") == "cancel" {
		s.cancelChoice(w, r)
		return
	}
	status := paygate.Status(r.PostFormValue("choice"))
	o, err := s.decide(r.PathValue("orderNo"), status, false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if o.ReturnURL == "" {
		_ = hostedTemplate.ExecuteTemplate(w, "page", o)
		return
	}
	type field struct{ Name, Value string }
	var fields []field
	f := s.callbackFields(o)
	for _, k := range sortedKeys(f) {
		fields = append(fields, field{k, f.Get(k)})
	}
	_ = hostedTemplate.ExecuteTemplate(w, "return", struct {
		Action string
		Fields []field
	}{o.ReturnURL, fields})
}

// cancelChoice is the hosted page's Cancel button, offered when the order
// has a cancelUrl: the buyer goes there before anything reaches the bank,
// so the order stays undecided and no callback is sent.
func (s *Server) cancelChoice(w http.ResponseWriter, r *http.Request) {
	o, ok := s.order(r.PathValue("orderNo"))
	switch {
	case !ok:
		http.NotFound(w, r)
	case o.CancelURL == "" || o.Status != "":
		http.Error(w, "this order cannot be cancelled here", http.StatusConflict)
	default:
		http.Redirect(w, r, o.CancelURL, http.StatusSeeOther)
	}
}

// order finds an order by number, as a copy.
func (s *Server) order(orderNo string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.byNo[orderNo]
	if !ok {
		return Order{}, false
	}
	return *o, true
}

// Orders returns a copy of every order, oldest first.
func (s *Server) Orders() []Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Order, len(s.orders))
	for i, o := range s.orders {
		out[i] = *o
		out[i].Options = cloneValues(o.Options)
	}
	return out
}

// Pay is the buyer's choice on the hosted page for the order with refNo:
// the reference as sent (refNo~extraData) or the merchant's base reference
// alone (the part before the first ~, as a Callback's RefNo or a
// PaymentRecord's holds it), which must then name one order. status is
// success, failed or pending. The signed direct callback is sent at once
// and retried in the background until a 2xx.
func (s *Server) Pay(refNo string, status paygate.Status) error {
	return s.decideRef(refNo, status, false)
}

// Complete settles a pending order as success or failed and sends the
// follow-up callback (docs/protocol.md "Events and callback delivery": a
// pending result may be followed by another direct callback). refNo is
// given as to Pay.
func (s *Server) Complete(refNo string, status paygate.Status) error {
	return s.decideRef(refNo, status, true)
}

// decideRef is decide for the order with refNo, as sent or as its base
// reference.
func (s *Server) decideRef(refNo string, status paygate.Status, complete bool) error {
	o, err := s.findRef(refNo)
	if err != nil {
		return err
	}
	_, err = s.decide(o.OrderNo, status, complete)
	return err
}

// findRef finds the order with refNo, as sent or as its base reference
// (which must then name one order), as a copy.
func (s *Server) findRef(refNo string) (Order, error) {
	s.mu.Lock()
	o, ok := s.byRef[refNo]
	var matches []string
	if !ok {
		for full, cand := range s.byRef { // the latest order of each reference
			if base, _ := paygate.SplitRefNo(full); base == refNo {
				o, matches = cand, append(matches, full)
			}
		}
		slices.Sort(matches)
	}
	var found Order
	if o != nil {
		found = *o
	}
	s.mu.Unlock()
	switch {
	case ok:
	case len(matches) == 1:
	case len(matches) > 1:
		return Order{}, fmt.Errorf("gatewaytest: base reference %q names %d orders (%s); give the reference as sent", refNo, len(matches), strings.Join(matches, ", "))
	default:
		return Order{}, fmt.Errorf("%w %q", errNoOrder, refNo)
	}
	return found, nil
}

// errNoOrder is findRef's error for a reference no order has.
var errNoOrder = errors.New("gatewaytest: no order with refNo")

// decide moves an order to status and starts the direct callback. Only an
// undecided order can be decided, and only a pending one completed. A
// success paid for an order WithLateSettlement matches is pending first and
// completed later.
func (s *Server) decide(orderNo string, status paygate.Status, complete bool) (Order, error) {
	if !status.Valid() || complete && status == paygate.StatusPending {
		return Order{}, fmt.Errorf("gatewaytest: status %q", status)
	}
	late := !complete && status == paygate.StatusSuccess && s.settlesLate(orderNo)
	if late {
		status = paygate.StatusPending
	}
	snapshot, due, err := s.record(orderNo, status, complete, late)
	if err != nil {
		return Order{}, err
	}
	if snapshot.ReturnURL != "" {
		s.sendCallback(snapshot)
	}
	if late {
		s.settleLater(snapshot.OrderNo, due)
	}
	return snapshot, nil
}

// settlesLate reports whether a success paid for the order is settled late
// (WithLateSettlement). It is asked without the lock: the predicate is the
// user's.
func (s *Server) settlesLate(orderNo string) bool {
	o, ok := s.order(orderNo)
	return ok && s.cfg.recovery.settlesLate(o.RefNo)
}

// record moves the order to status under the lock and returns a copy; for a
// late settlement, also the channel that settleLater waits on. A completion
// ends a late settlement still due.
func (s *Server) record(orderNo string, status paygate.Status, complete, late bool) (Order, chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.byNo[orderNo]
	switch {
	case !ok:
		return Order{}, nil, fmt.Errorf("gatewaytest: no order %s", orderNo)
	case complete && o.Status != paygate.StatusPending:
		return Order{}, nil, fmt.Errorf("gatewaytest: order %s is %q, not pending", orderNo, o.Status)
	case !complete && o.Status != "":
		return Order{}, nil, fmt.Errorf("gatewaytest: order %s is already %s", orderNo, o.Status)
	}
	o.Status = status
	o.FPXCode = fpxCodes[status]
	if due, ok := s.settling[orderNo]; ok && complete { // settled before its late settlement
		close(due)
		delete(s.settling, orderNo)
	}
	var due chan struct{}
	if late {
		due = make(chan struct{})
		s.settling[orderNo] = due
	}
	o.FPXTxnID = fmt.Sprintf("%s%06d", o.Created.UTC().Format("060102150405"), len(s.log)+1)
	o.Paid = s.cfg.now()
	return *o, due, nil
}
