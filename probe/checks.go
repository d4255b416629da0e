package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/probeaccess"
)

// check is one assumption's probe: its ID, what it sends, and how it judges
// the answer.
type check struct {
	id     string
	create bool // creates orders: only with Options.Create
	sends  string
	run    func(ctx context.Context, s *session) Result
}

// checks lists the probe's checks, the read-only ones first.
func checks() []check {
	return []check{
		{id: "A-health", sends: "GET echo and version, no credential", run: checkHealth},
		{id: "A-clock-skew", sends: "GET echo (its Date); a report request signed 120 s behind the service's clock, so that exp is 60 s past", run: checkClockSkew},
		{id: "A-errors", sends: "a report request without credential, and one with its signature altered", run: checkErrors},
		{id: "A-request-id", sends: "X-Request-Id on every request", run: checkRequestID},
		{id: "A-endpoints", sends: "GET report, lookup, transactions, version and echo at the configured paths", run: checkEndpoints},
		{id: "A-auth-choice", sends: "a report page with the AuthToken, and one signed with the API key", run: checkAuthChoice},
		{id: "A-report-data-shape", sends: "a report page", run: checkDataShape},
		{id: "A-report-paging", sends: "report pages: the first, the last that total_pages announces, and the one after", run: checkPaging},
		{id: "A-report-filters", sends: "a report with items=-1 (AllItems), then the row after its last at items=1", run: checkAllItems},
		{id: "A-report-rows", sends: "a report page", run: checkRows},
		{id: "A-payment-record", sends: "a report page", run: checkPaymentRecord},
		{id: "A-lookup", sends: "a lookup of a reference nobody created (refno=PROBE-…-missing), and of a reference the report holds", run: checkLookup},
		{id: "A-transactions", sends: "GET transactions for Options.Email", run: checkTransactions},
		{id: "A-banklist", sends: "GET the bank list, b2c and b2b", run: checkBankList},
		{id: "A-sort-order", sends: "a signed report request with an extra parameter whose key has an upper-case letter (Probe_Sort)", run: checkSortOrder},
		{id: "A-post-path", create: true, sends: "an order at RM 1.00 signed over its query alone (then, if refused, over its path and query)", run: checkPostPath},
		{id: "A-checkout-answer", create: true, sends: "an order at RM 1.00", run: checkCheckoutAnswer},
		{id: "A-create-or-find", create: true, sends: "the same order twice (one reference)", run: checkRepeatedRef},
		{id: "A-b2b-minimum", create: true, sends: "an order at RM 1.00 with pref_method=fpx/b2b1", run: checkB2BMinimum},
		{id: "A-post-body", create: true, sends: "an order at RM 1.00 whose utm_campaign holds a space, sent as + and signed as %20", run: checkPostBody},
		{id: "A-order-fields", create: true, sends: "an order at RM 1.00 with cancelUrl, utm_source and pref_method=fpx", run: checkOrderFields},
		{id: "A-paylink-host", create: true, sends: "GET the pay link of a probe reference at RM 1.00, unsigned, where the client builds it", run: checkPayLinkHost},
	}
}

func checkHealth(ctx context.Context, s *session) Result {
	if _, err := s.client.Echo(ctx); err != nil {
		return differs("echo: %s", errText(err))
	}
	v, err := s.client.Version(ctx)
	if err != nil {
		return differs("echo answered; version: %s", errText(err))
	}
	return holds("echo and version answered without credential (version: %s)", firstLine(v))
}

func checkClockSkew(ctx context.Context, s *session) Result {
	a, err := s.do(ctx, probeaccess.Request{Path: s.info.Echo})
	if err != nil {
		return noAnswer(err)
	}
	date, ok := serviceDate(a.Header)
	if !ok {
		return differs("the answer to echo has no readable Date header (%q): the client cannot learn the service's clock", a.Header.Get("Date"))
	}
	if !s.info.HasKey {
		return holds("Date %s; the exp check needs the API key (not set)", date.Format(time.RFC1123))
	}
	late, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: s.reportValues(1, 0), Auth: probeaccess.AuthSigned, SignAt: date.Add(-120 * time.Second)})
	if err != nil {
		return noAnswer(err)
	}
	if !unauthorized(late.Status) {
		return differs("Date %s; a signature whose exp was 60 s past by that clock got %s, not 401/403: the service does not check exp on the clock its Date shows", date.Format(time.RFC1123), answerText(late))
	}
	return holds("Date %s; a signature expired by that clock was refused (%s)", date.Format(time.RFC1123), answerText(late))
}

func checkErrors(ctx context.Context, s *session) Result {
	none, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: s.reportValues(1, 0)})
	if err != nil {
		return noAnswer(err)
	}
	if !unauthorized(none.Status) {
		return differs("a report request without credential got %s, not 401/403", answerText(none))
	}
	saw := "no credential: " + answerText(none)
	if s.info.HasKey {
		bad, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: s.reportValues(1, 0), Auth: probeaccess.AuthSigned, Tamper: flipHex})
		if err != nil {
			return noAnswer(err)
		}
		if !unauthorized(bad.Status) {
			return differs("%s; an altered signature got %s, not 401/403", saw, answerText(bad))
		}
		saw += "; altered signature: " + answerText(bad)
	}
	return holds("%s", saw)
}

func checkRequestID(ctx context.Context, s *session) Result {
	a, err := s.do(ctx, probeaccess.Request{Path: s.info.Echo})
	if err != nil {
		return noAnswer(err)
	}
	if a.Status/100 != 2 {
		return differs("echo with X-Request-Id got %s", answerText(a))
	}
	if id := cmp.Or(a.Header.Get("X-Request-Id"), a.Header.Get("Request-Id")); id != "" {
		return holds("a request carrying X-Request-Id was answered; the service names its answer %q", firstLine(id))
	}
	return holds("a request carrying X-Request-Id was answered; the service names no request of its own")
}

func checkEndpoints(ctx context.Context, s *session) Result {
	var missing, seen []string
	for _, e := range []struct {
		name, path string
		auth       probeaccess.Auth
		query      url.Values
	}{
		{"report", s.info.Report, s.auth(), s.reportValues(1, 0)},
		{"transactions", s.info.Transactions, s.auth(), url.Values{"email": {s.opts.Email}}},
		{"version", s.info.Version, probeaccess.AuthNone, nil},
	} {
		a, err := s.do(ctx, probeaccess.Request{Path: e.path, Query: e.query, Auth: e.auth})
		if err != nil {
			return noAnswer(err)
		}
		seen = append(seen, fmt.Sprintf("%s %s: %d", e.name, e.path, a.Status))
		if a.Status == http.StatusNotFound {
			missing = append(missing, e.name+" "+e.path)
		}
	}
	if len(missing) > 0 {
		return differs("404 at %s (%s): set the paths with WithEndpoints", strings.Join(missing, ", "), strings.Join(seen, "; "))
	}
	return holds("%s (the lookup's path: A-lookup)", strings.Join(seen, "; "))
}

func checkAuthChoice(ctx context.Context, s *session) Result {
	if !s.info.HasKey || !s.info.HasToken {
		return cannot("needs both an API key and an AuthToken (the client has %s)", credentials(s.info))
	}
	tok, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: s.reportValues(1, 0), Auth: probeaccess.AuthBearer})
	if err != nil {
		return noAnswer(err)
	}
	key, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: s.reportValues(1, 0), Auth: probeaccess.AuthSigned})
	if err != nil {
		return noAnswer(err)
	}
	if tok.Status/100 != 2 || key.Status/100 != 2 {
		return differs("report with the AuthToken: %s; signed with the key: %s", answerText(tok), answerText(key))
	}
	return holds("the report answers the AuthToken (%d) and the key's signature (%d)", tok.Status, key.Status)
}

func checkDataShape(ctx context.Context, s *session) Result {
	p, err := s.firstPage(ctx)
	switch {
	case err != nil && !isAnswerErr(err) && strings.Contains(err.Error(), "data"):
		return differs("%s", errText(err))
	case err != nil:
		return cannot("the report page did not read, for another reason than data: %s", errText(err))
	}
	return holds("data is an array (%d rows on page 0)", len(p.Rows))
}

func checkPaging(ctx context.Context, s *session) Result {
	p, err := s.firstPage(ctx)
	if err != nil {
		return differs("page 0: %s", errText(err))
	}
	k := s.opts.PageSize
	switch {
	case len(p.Rows) == 0:
		return cannot("the report holds no payment from %s to today: widen the range (-since)", s.opts.Since.Format(time.DateOnly))
	case !p.HasTotalPages:
		return holds("stats.total_pages absent: the short page alone ends a walk, as the SDK reads it (page 0: %d rows of %d)", len(p.Rows), k)
	case len(p.Rows) < k && p.TotalPages != 1:
		return differs("page 0 holds %d rows of %d asked (the last page) but total_pages is %d", len(p.Rows), k, p.TotalPages)
	case len(p.Rows) < k:
		return holds("one page of %d rows, total_pages 1", len(p.Rows))
	}
	last := p.TotalPages - 1
	lastPage, err := s.client.PaymentReportPage(ctx, s.query(k), max(last, 0))
	if err != nil {
		return differs("page %d: %s", last, errText(err))
	}
	after, err := s.client.PaymentReportPage(ctx, s.query(k), last+1)
	if err != nil {
		return differs("page %d: %s", last+1, errText(err))
	}
	switch {
	case last < 0 || len(lastPage.Rows) == 0:
		return differs("total_pages %d, but page %d holds no row", p.TotalPages, last)
	case len(after.Rows) > 0:
		return differs("total_pages %d, but page %d (past it) still holds %d rows: total_pages under-counts", p.TotalPages, last+1, len(after.Rows))
	}
	return holds("total_pages %d: page %d holds %d rows, page %d none", p.TotalPages, last, len(lastPage.Rows), last+1)
}

func checkAllItems(ctx context.Context, s *session) Result {
	all, err := s.client.PaymentReportPage(ctx, s.query(paygate.AllItems), 0)
	switch {
	case err != nil && strings.Contains(err.Error(), "total_pages"):
		return cannot("the report page did not read: %s (A-report-paging)", errText(err))
	case err != nil:
		return differs("items=-1: %s", errText(err))
	}
	m := len(all.Rows)
	if m == 0 {
		return cannot("the report holds no payment from %s to today: widen the range (-since)", s.opts.Since.Format(time.DateOnly))
	}
	next, err := s.client.PaymentReportPage(ctx, s.query(1), m)
	if err != nil {
		return differs("items=1 page %d: %s", m, errText(err))
	}
	if len(next.Rows) > 0 {
		return differs("items=-1 gave %d rows, but row %d exists (items=1, page %d): the service caps items (a payment made between the two requests would show the same)", m, m+1, m)
	}
	return holds("items=-1 gave all %d rows in one answer", m)
}

func checkRows(ctx context.Context, s *session) Result {
	p, err := s.firstPage(ctx)
	if err != nil {
		return cannot("the report did not answer: %s", errText(err))
	}
	if len(p.Rows) == 0 {
		return cannot("the report holds no payment in the range")
	}
	for i, r := range p.Rows {
		var m map[string]any
		if err := r.Decode(&m); err != nil {
			return differs("row %d is not a JSON object: %v", i, err)
		}
	}
	var m map[string]any
	_ = p.Rows[0].Decode(&m)
	return holds("rows are JSON objects; the first has %s", keys(m))
}

func checkPaymentRecord(ctx context.Context, s *session) Result {
	p, err := s.firstPage(ctx)
	if err != nil {
		return cannot("the report did not answer: %s", errText(err))
	}
	if len(p.Rows) == 0 {
		return cannot("the report holds no payment in the range")
	}
	for i, r := range p.Rows {
		rec, err := r.Payment()
		if err != nil {
			return differs("row %d: %v", i, err)
		}
		if !rec.Consistent() {
			return differs("row %d (%s): %v", i, rec.RefNo, rec.Problems)
		}
	}
	return holds("all %d rows of page 0 read as payment records without problem", len(p.Rows))
}

func checkLookup(ctx context.Context, s *session) Result {
	ref := s.opts.RefPrefix + s.runID + "-missing"
	a, err := s.do(ctx, probeaccess.Request{Path: s.info.Lookup, Query: url.Values{"refno": {ref}}, Auth: s.auth()})
	if err != nil {
		return noAnswer(err)
	}
	missing, saw := judgeMissingLookup(a.Status, a.Body)
	if !missing {
		return differs("lookup of %s, which nobody created: %s (%s)", ref, answerText(a), saw)
	}
	res := holds("lookup of a missing reference: %s (%s)", answerText(a), saw)
	p, err := s.firstPage(ctx)
	if err != nil || len(p.Rows) == 0 {
		res.Saw += "; no report row to look up"
		return res
	}
	rec, err := p.Rows[0].Payment()
	if err != nil {
		res.Saw += "; the first report row has no reference to look up"
		return res
	}
	if _, err := s.client.LookupOrder(ctx, rec.RefNo+joinExtra(rec.ExtraData)); err != nil {
		return differs("lookup by fpx_seller_order_no of %s, a reference the report holds: %s", rec.RefNo+joinExtra(rec.ExtraData), errText(err))
	}
	res.Saw += "; a reference the report holds was found as {status: OK, fpxrequest: {…}}"
	return res
}

func checkTransactions(ctx context.Context, s *session) Result {
	h, err := s.client.Transactions(ctx, s.opts.Email)
	if err != nil {
		return differs("%s", errText(err))
	}
	rows, err := h.Payments()
	if err != nil {
		return differs("the answer's rows: %v", err)
	}
	return holds("answered, %d rows for %s", len(rows), s.opts.Email)
}

func checkBankList(ctx context.Context, s *session) Result {
	var saw []string
	for _, ch := range []paygate.BankChannel{paygate.BankChannelB2C, paygate.BankChannelB2B} {
		banks, err := s.client.Banks(ctx, ch)
		if err != nil {
			return differs("%s: %s", ch, errText(err))
		}
		online := 0
		for _, b := range banks {
			if b.Online {
				online++
			}
		}
		saw = append(saw, fmt.Sprintf("%s: %d banks, %d online", ch, len(banks), online))
	}
	return holds("%s", strings.Join(saw, "; "))
}

func checkSortOrder(ctx context.Context, s *session) Result {
	if !s.info.HasKey {
		return cannot("needs the API key (the client has %s)", credentials(s.info))
	}
	q := s.reportValues(1, 0)
	q.Set("Probe_Sort", "1")
	a, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: q, Auth: probeaccess.AuthSigned})
	if err != nil {
		return noAnswer(err)
	}
	if a.Status/100 == 2 {
		return holds("a signature over byte-sorted keys (Probe_Sort before agency) was accepted")
	}
	plain, err := s.do(ctx, probeaccess.Request{Path: s.info.Report, Query: s.reportValues(1, 0), Auth: probeaccess.AuthSigned})
	if err != nil {
		return noAnswer(err)
	}
	if plain.Status/100 != 2 {
		return cannot("the service refuses the key's signed reports (%s)", answerText(plain))
	}
	return cannot("with Probe_Sort the service answered %s, without it %d: it sorts otherwise or refuses an unknown parameter, which the probe cannot tell apart", answerText(a), plain.Status)
}

func checkPostPath(ctx context.Context, s *session) Result {
	if r, ok := s.cannotCreate(); ok {
		return r
	}
	ref, a, err := s.create(ctx, false)
	if err != nil {
		return noAnswer(err)
	}
	if accepted(a.Status) {
		return holds("order %s signed over its query alone: %d", ref, a.Status)
	}
	if !unauthorized(a.Status) {
		return cannot("order %s was refused for another reason than its signature: %s", ref, answerText(a))
	}
	ref2, b, err := s.create(ctx, true)
	if err != nil {
		return noAnswer(err)
	}
	if accepted(b.Status) {
		s.signPath = true // the later orders are signed so, to check the rest
		return differs("order %s signed over its query: %s; order %s signed over path and query: %d: use WithPOSTSignedWithPath", ref, answerText(a), ref2, b.Status)
	}
	return differs("orders refused under both signatures: %s; %s", answerText(a), answerText(b))
}

func checkCheckoutAnswer(ctx context.Context, s *session) Result {
	if r, ok := s.cannotCreate(); ok {
		return r
	}
	ref, a, err := s.create(ctx, s.signPath)
	if err != nil {
		return noAnswer(err)
	}
	switch {
	case a.Status >= 300 && a.Status < 400 && a.Header.Get("Location") != "":
		return holds("order %s: %d, redirected to %s (not followed)", ref, a.Status, a.Header.Get("Location"))
	case a.Status/100 == 2:
		return holds("order %s: %d with a body (%s)", ref, a.Status, answerText(a))
	}
	return differs("order %s: %s", ref, answerText(a))
}

func checkRepeatedRef(ctx context.Context, s *session) Result {
	if r, ok := s.cannotCreate(); ok {
		return r
	}
	ref, a, err := s.create(ctx, s.signPath)
	if err != nil {
		return noAnswer(err)
	}
	if !accepted(a.Status) {
		return cannot("the first order %s was refused: %s", ref, answerText(a))
	}
	b, err := s.do(ctx, probeaccess.Request{Method: http.MethodPost, Host: probeaccess.Checkout, Query: s.order(ref), Auth: probeaccess.AuthSigned, SignPath: s.signPath})
	if err != nil {
		return noAnswer(err)
	}
	if accepted(b.Status) {
		return differs("the service took reference %s twice (%d, then %d): a lost answer's re-send can leave two orders", ref, a.Status, b.Status)
	}
	return holds("reference %s refused the second time: %s", ref, answerText(b))
}

func checkB2BMinimum(ctx context.Context, s *session) Result {
	return s.extraOrder(ctx, "at RM 1.00 preselecting fpx/b2b1", "pref_method", "fpx/b2b1")
}

// extraOrder creates an order with extra fields (name, value pairs),
// described by what: taken, the guess holds; refused while a plain order
// was taken, it differs; refused with no plain order to compare, it
// cannot be told.
func (s *session) extraOrder(ctx context.Context, what string, fields ...string) Result {
	if r, ok := s.cannotCreate(); ok {
		return r
	}
	ref, a, err := s.create(ctx, s.signPath, fields...)
	if err != nil {
		return noAnswer(err)
	}
	if accepted(a.Status) {
		return holds("order %s %s taken: %d", ref, what, a.Status)
	}
	if !s.plainAccepted {
		return cannot("order %s %s refused (%s), but no plain order was taken to compare", ref, what, answerText(a))
	}
	return differs("order %s %s refused, while a plain one was taken: %s", ref, what, answerText(a))
}

func checkPostBody(ctx context.Context, s *session) Result {
	if r, ok := s.cannotCreate(); ok {
		return r
	}
	ref, a, err := s.create(ctx, s.signPath, "utm_campaign", "paygate probe")
	if err != nil {
		return noAnswer(err)
	}
	switch {
	case accepted(a.Status):
		return holds("order %s with a space in utm_campaign taken: %d", ref, a.Status)
	case unauthorized(a.Status) && s.plainAccepted:
		return differs("order %s with a space in utm_campaign refused: %s: the service compares the body's bytes with the signed message", ref, answerText(a))
	}
	return cannot("order %s with a space in utm_campaign refused for another reason than its signature: %s", ref, answerText(a))
}

func checkOrderFields(ctx context.Context, s *session) Result {
	return s.extraOrder(ctx, "with cancelUrl, utm_source and pref_method", "cancelUrl", s.opts.ReturnURL, "utm_source", "paygate-probe", "pref_method", "fpx")
}

func checkPayLinkHost(ctx context.Context, s *session) Result {
	if s.info.PayBase == "" {
		return cannot("the client has no checkout or pay URL")
	}
	ref := s.newRef()
	u, err := s.client.PayURL(paygate.PayLink{Category: "fpx", RefNo: ref, Amount: paygate.MinOrderAmount})
	if err != nil {
		return cannot("the pay link cannot be built: %v", err)
	}
	pu, err := url.Parse(u)
	if err != nil {
		return cannot("the pay link cannot be read: %v", err)
	}
	a, err := s.do(ctx, probeaccess.Request{Host: probeaccess.Pay, Path: strings.TrimPrefix(pu.EscapedPath(), payPrefix(s.info.PayBase))})
	if err != nil {
		return noAnswer(err)
	}
	if a.Status == http.StatusNotFound {
		return differs("pay link %s://%s%s: 404: pay links live on another host (WithPayURL)", pu.Scheme, pu.Host, pu.EscapedPath())
	}
	if a.Status >= 400 {
		return cannot("pay link %s: %s", pu.EscapedPath(), answerText(a))
	}
	s.created = append(s.created, ref+" (pay link opened, may show as an order)")
	return holds("pay link on %s://%s answered %d", pu.Scheme, pu.Host, a.Status)
}

// payPrefix is the path of the pay base before /pay/…: the Pay request
// adds it back.
func payPrefix(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.EscapedPath(), "/pay/")
}

// flipHex changes a signature's first hex digit.
func flipHex(sig string) string {
	if sig == "" {
		return "0"
	}
	c := byte('0')
	if sig[0] == '0' {
		c = '1'
	}
	return string(c) + sig[1:]
}

// serviceDate reads an answer's Date header.
func serviceDate(h http.Header) (time.Time, bool) {
	t, err := http.ParseTime(h.Get("Date"))
	return t, err == nil
}

// isAnswerErr reports whether err is the service's non-2xx answer.
func isAnswerErr(err error) bool {
	var apiErr *paygate.APIError
	return errors.As(err, &apiErr)
}

// credentials names what the client holds.
func credentials(in probeaccess.Info) string {
	switch {
	case in.HasKey && in.HasToken:
		return "both"
	case in.HasKey:
		return "the API key only"
	case in.HasToken:
		return "the AuthToken only"
	}
	return "neither"
}

// keys lists a row's keys, sorted, for the report.
func keys(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

func joinExtra(extra string) string {
	if extra == "" {
		return ""
	}
	return "~" + extra
}

// firstLine is s's first line, printable, cut at 80 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}
