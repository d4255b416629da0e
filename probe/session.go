package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/probeaccess"
)

// session is one run's state: the paced client, what it is configured
// with, and what earlier checks read.
type session struct {
	client *paygate.Client
	info   probeaccess.Info
	opts   Options
	runID  string
	// created lists the references of orders the run created.
	created []string
	n       int // the last reference number used
	// signPath: orders are taken only signed over their path (A-post-path).
	signPath bool
	// plainAccepted: a plain order (no optional field) was taken.
	plainAccepted bool
	// page0 is the report's first page at PageSize, read once.
	page0     *paygate.ReportPage
	page0Err  error
	page0Read bool
}

// auth is the credential the client's reports use (A-auth-choice).
func (s *session) auth() probeaccess.Auth {
	if s.info.HasToken {
		return probeaccess.AuthBearer
	}
	return probeaccess.AuthSigned
}

// do sends r once.
func (s *session) do(ctx context.Context, r probeaccess.Request) (*probeaccess.Answer, error) {
	return probeaccess.Do(ctx, s.client, r)
}

// query is the report query of the run: Since to today.
func (s *session) query(items int) paygate.ReportQuery {
	return paygate.ReportQuery{Start: s.opts.Since, End: s.opts.Now(), ItemsPerPage: items}
}

// reportValues is the report's query string parameters for page.
func (s *session) reportValues(items, page int) url.Values {
	day := func(t time.Time) string { return t.In(paygate.MalaysiaTime()).Format(time.DateOnly) }
	return url.Values{"start": {day(s.opts.Since)}, "end": {day(s.opts.Now())},
		"items": {strconv.Itoa(items)}, "page": {strconv.Itoa(page)}}
}

// firstPage is the report's page 0 at PageSize, read once.
func (s *session) firstPage(ctx context.Context) (*paygate.ReportPage, error) {
	if !s.page0Read {
		s.page0Read = true
		s.page0, s.page0Err = s.client.PaymentReportPage(ctx, s.query(s.opts.PageSize), 0)
	}
	return s.page0, s.page0Err
}

// newRef is a fresh reference the probe names.
func (s *session) newRef() string {
	s.n++
	return s.opts.RefPrefix + s.runID + "-" + strconv.Itoa(s.n)
}

// order is the form of a minimum order under ref, with extra fields.
func (s *session) order(ref string, extra ...string) url.Values {
	f := url.Values{"agency": {s.info.Agency}, "refNo": {ref}, "amount": {paygate.MinOrderAmount.String()},
		"email": {s.opts.Email}, "returnUrl": {s.opts.ReturnURL}}
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// create POSTs a minimum order under a fresh reference, signed as the
// protocol says (or over its path), and records the reference.
func (s *session) create(ctx context.Context, signPath bool, extra ...string) (string, *probeaccess.Answer, error) {
	ref := s.newRef()
	a, err := s.do(ctx, probeaccess.Request{Method: http.MethodPost, Host: probeaccess.Checkout, Query: s.order(ref, extra...),
		Auth: probeaccess.AuthSigned, SignPath: signPath})
	if err == nil && accepted(a.Status) {
		s.created = append(s.created, ref)
		s.plainAccepted = s.plainAccepted || len(extra) == 0
	}
	return ref, a, err
}

// cannotCreate is the Result of a creating check when the client cannot
// create orders: no API key, or no agency.
func (s *session) cannotCreate() (Result, bool) {
	switch {
	case !s.info.HasKey:
		return cannot("creating an order needs the API key (the client has %s)", credentials(s.info)), true
	case s.info.Agency == "":
		return cannot("creating an order needs the agency (WithAgency, PAYGATE_AGENCY)"), true
	case s.info.CheckoutTarget == "":
		return cannot("creating an order needs the checkout URL (WithCheckoutURL, PAYGATE_CHECKOUT_URL)"), true
	}
	return Result{}, false
}

// accepted reports whether an order's answer took it: 2xx or a redirect
// to the hosted page (A-checkout-answer).
func accepted(status int) bool { return status >= 200 && status < 400 }

// unauthorized reports whether status refuses a credential.
func unauthorized(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// answerText describes an answer: its status and the start of its body,
// on one line, printable.
func answerText(a *probeaccess.Answer) string {
	if a == nil {
		return "no answer"
	}
	body := strings.Join(strings.Fields(string(a.Body)), " ")
	body = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, body)
	if len(body) > 160 {
		body = body[:160] + "…"
	}
	if body == "" {
		return fmt.Sprintf("HTTP %d", a.Status)
	}
	return fmt.Sprintf("HTTP %d %s", a.Status, body)
}

// errText describes an error of a call, with its status when it was an
// answer.
func errText(err error) string {
	var apiErr *paygate.APIError
	if errors.As(err, &apiErr) {
		return answerText(&probeaccess.Answer{Status: apiErr.StatusCode, Body: apiErr.Body})
	}
	return err.Error()
}

// holds, differs and cannot make Results.
func holds(saw string, args ...any) Result {
	return Result{Verdict: Holds, Saw: fmt.Sprintf(saw, args...)}
}

func differs(saw string, args ...any) Result {
	return Result{Verdict: Differs, Saw: fmt.Sprintf(saw, args...)}
}

func cannot(reason string, args ...any) Result {
	return Result{Verdict: Unchecked, Reason: fmt.Sprintf(reason, args...)}
}

// noAnswer is the Result of a check whose request got no answer.
func noAnswer(err error) Result {
	return cannot("no answer from the service: %v", err)
}
