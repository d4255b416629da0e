package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-querystring/query"
)

// Paths of the reporting API (spec, endpoints 3-5; the QR paths and the
// lookup parameter come from the gateway's older public client).
const (
	PaymentReportPath = "/api/report/v1/payment"
	FPXRequestPath    = "/api/report/v1/fpxrequest"
	QRPath            = "/api/qrcode/v1/generator"
	DuitNowQRPath     = "/api/duitnowqr/v1/generator"
)

// DefaultItemsPerPage is the page size when ReportQuery.ItemsPerPage is 0
// (the gateway's own default).
const DefaultItemsPerPage = 20

// maxReportPage caps the body of one report page.
const maxReportPage = 64 << 20

// ReportQuery selects payments for the payment report (spec, endpoint 4).
type ReportQuery struct {
	// Start and End bound the range, sent as YYYY-MM-DD; zero means unset.
	Start time.Time `url:"start,omitempty" layout:"2006-01-02"`
	End   time.Time `url:"end,omitempty" layout:"2006-01-02"`
	// ApprovedOnly sends is_approved=1.
	ApprovedOnly bool `url:"is_approved,int,omitempty"`
	// ItemsPerPage is rows per page (items); 0 means DefaultItemsPerPage.
	ItemsPerPage int `url:"-"`
	// SellerOrderNo filters on one merchant reference.
	SellerOrderNo string `url:"seller_order_no,omitempty"`
	// Extra holds further filters the spec does not list; it may not set
	// output, page, items or the signing fields.
	Extra url.Values `url:"-"`
}

// values encodes the query for one page, with output=json always.
func (q ReportQuery) values(page int) (url.Values, int, error) {
	var v ValidationError
	items := q.ItemsPerPage
	switch {
	case items == 0:
		items = DefaultItemsPerPage
	case items < 0:
		v.add("items", "must be positive (the iterator needs a page size to know the last page)", strconv.Itoa(items))
	}
	if page < 0 {
		v.add("page", "must be >= 0 (the first page is 0)", strconv.Itoa(page))
	}
	if !q.Start.IsZero() && !q.End.IsZero() && q.End.Before(q.Start) {
		v.add("end", "must not be before start", q.End.Format(time.DateOnly))
	}
	for k := range q.Extra {
		switch k {
		case "output", "page", "items", "agency", "exp", "signature":
			v.add(k, "is set by the client; not allowed in Extra", "")
		}
	}
	if err := v.err(); err != nil {
		return nil, 0, err
	}
	vals, err := query.Values(q)
	if err != nil {
		return nil, 0, fmt.Errorf("paygate: encoding the report query: %w", err)
	}
	for k, vs := range q.Extra {
		vals[k] = append([]string(nil), vs...)
	}
	vals.Set("output", "json")
	vals.Set("items", strconv.Itoa(items))
	vals.Set("page", strconv.Itoa(page))
	return vals, items, nil
}

// ReportRow is one row of a report. The spec does not show the fields of a
// row, so the raw JSON is kept (as a slice of its page's body, not a copy);
// Decode reads it into a type of your own.
type ReportRow struct {
	raw string
}

// Raw returns a copy of the row's JSON.
func (r ReportRow) Raw() json.RawMessage { return json.RawMessage(r.raw) }

// Decode unmarshals the row into v.
func (r ReportRow) Decode(v any) error { return json.NewDecoder(strings.NewReader(r.raw)).Decode(v) }

// ReportPage is one page of the payment report (spec A3).
type ReportPage struct {
	Rows []ReportRow
	// TotalPages is stats.total_pages (0 when absent).
	TotalPages int
	// Page is the page number asked for, from 0.
	Page int
	// Items is the page size asked for.
	Items int
}

// parseReport reads the answer of spec A3 in one pass: status, the rows of
// data as slices of body, and stats.total_pages.
func parseReport(body string, p *ReportPage) (status string, err error) {
	sc := &jsonScanner{s: body}
	if sc.peek() != '{' {
		return "", errors.New("the answer is not a JSON object")
	}
	sc.eachMember(func(key string) {
		switch {
		case key == "status" && sc.peek() == '"':
			status = sc.str()
		case key == "data" && sc.peek() == '[':
			sc.eachElement(func(int) {
				p.Rows = append(p.Rows, ReportRow{raw: sc.skip()})
			})
		case key == "stats" && sc.peek() == '{':
			sc.eachMember(func(key string) {
				c := sc.peek()
				if key != "total_pages" || !(c == '-' || '0' <= c && c <= '9') {
					sc.skip()
					return
				}
				num := sc.number()
				f, perr := strconv.ParseFloat(num, 64)
				if perr != nil || f < 0 || f > 1e9 {
					err = fmt.Errorf("stats.total_pages %q", num)
				}
				p.TotalPages = int(f)
			})
		default:
			sc.skip()
		}
	})
	if sc.err == nil && sc.peek() != 0 {
		sc.fail("data after the top-level value")
	}
	if sc.err != nil {
		return "", sc.err
	}
	return status, err
}

// PaymentReportPage fetches one page (from 0) of the payment report (spec,
// endpoint 4), with the AuthToken when set, else signed with the API key
// (agency added). A status other than OK is an error matching
// ErrReportStatus. GETs are retried on network errors, 429 and 5xx.
func (c *Client) PaymentReportPage(ctx context.Context, q ReportQuery, page int) (*ReportPage, error) {
	vals, items, err := q.values(page)
	if err != nil {
		return nil, err
	}
	body, err := c.reportGET(ctx, PaymentReportPath, vals)
	if err != nil {
		return nil, err
	}
	p := &ReportPage{Page: page, Items: items, Rows: make([]ReportRow, 0, items)}
	status, err := parseReport(body, p)
	if err != nil {
		return nil, fmt.Errorf("paygate: payment report page %d: %w", page, err)
	}
	if status != "OK" {
		return nil, fmt.Errorf("%w: page %d: status %q", ErrReportStatus, page, status)
	}
	return p, nil
}

// Payments walks the payment report from page 0 (spec, endpoint 4 paging
// rule): it stops after a page with fewer rows than the page size, and also
// at an empty page and after stats.total_pages pages, so a misbehaving server
// cannot keep it looping. The next page is fetched while the caller consumes
// the current one, so memory stays at about two pages whatever the report's
// size. An error is yielded once, then the walk ends. Leaving the loop early
// cancels the fetch in flight and waits for it: no goroutine outlives the
// loop.
func (c *Client) Payments(ctx context.Context, q ReportQuery) iter.Seq2[ReportRow, error] {
	return func(yield func(ReportRow, error) bool) {
		if _, _, err := q.values(0); err != nil {
			yield(ReportRow{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type result struct {
			page *ReportPage
			err  error
		}
		fetch := func(n int) <-chan result {
			ch := make(chan result, 1)
			go func() {
				p, err := c.PaymentReportPage(ctx, q, n)
				ch <- result{p, err}
			}()
			return ch
		}
		next := fetch(0)
		for n := 0; ; n++ {
			r := <-next
			if r.err != nil {
				yield(ReportRow{}, r.err)
				return
			}
			p := r.page
			last := len(p.Rows) < p.Items || (p.TotalPages > 0 && n+1 >= p.TotalPages)
			if !last {
				next = fetch(n + 1)
			}
			for _, row := range p.Rows {
				if !yield(row, nil) {
					if !last {
						cancel()
						<-next
					}
					return
				}
			}
			if last {
				return
			}
		}
	}
}

// OrderRecord is the answer of LookupOrder: the fpxrequest object kept raw,
// since the spec does not show its fields.
type OrderRecord struct {
	Raw json.RawMessage
}

// Decode unmarshals the record into v.
func (r *OrderRecord) Decode(v any) error { return json.Unmarshal(r.Raw, v) }

// LookupOrder finds one order by the merchant's reference for reconciliation
// (spec, endpoint 5): GET /api/report/v1/fpxrequest?fpx_seller_order_no=...
// answered by {"status":"OK","fpxrequest":{...}}. A 404, or an answer
// without a record, matches ErrOrderNotFound; another status matches
// ErrReportStatus.
func (c *Client) LookupOrder(ctx context.Context, refNo string) (*OrderRecord, error) {
	if refNo == "" {
		return nil, &ValidationError{Problems: []FieldError{newFieldError("refNo", ruleRequired, "")}}
	}
	body, err := c.reportGET(ctx, FPXRequestPath, url.Values{"fpx_seller_order_no": {refNo}})
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %q", ErrOrderNotFound, refNo)
	}
	if err != nil {
		return nil, err
	}
	var a struct {
		Status     string          `json:"status"`
		FPXRequest json.RawMessage `json:"fpxrequest"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		return nil, fmt.Errorf("paygate: order lookup: %w", err)
	}
	if a.Status != "OK" {
		return nil, fmt.Errorf("%w: order lookup %q: status %q", ErrReportStatus, refNo, a.Status)
	}
	switch string(bytes.TrimSpace(a.FPXRequest)) {
	case "", "null", "{}", "[]":
		return nil, fmt.Errorf("%w: %q", ErrOrderNotFound, refNo)
	}
	return &OrderRecord{Raw: a.FPXRequest}, nil
}

// reportGET sends a GET to the reports host with the right credential:
// Bearer AuthToken when set (it spans agencies), else the API-key signature
// with agency added, signed afresh on every attempt.
func (c *Client) reportGET(ctx context.Context, path string, vals url.Values) (string, error) {
	base, err := endpoint(c.reportsURL, "WithReportsURL", path)
	if err != nil {
		return "", err
	}
	bearer := c.authToken.s != nil
	if !bearer {
		if err := c.needKey("reports (or WithAuthToken)"); err != nil {
			return "", err
		}
		if c.agency == "" {
			return "", fmt.Errorf("%w: signed reports need WithAgency", ErrNoCredential)
		}
		vals.Set("agency", c.agency)
	}
	raw := base + "?" + vals.Encode()
	resp, err := c.transport.do(ctx, exchange{retryable: retryTransient, maxBody: maxReportPage, attempt: func(ctx context.Context) (*http.Request, error) {
		target := raw
		if !bearer {
			var err error
			if target, err = SignURL(c.key, raw, c.now()); err != nil {
				return nil, err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", userAgent)
		if bearer {
			req.Header.Set("Authorization", "Bearer "+c.authToken.reveal())
		}
		return req, nil
	}})
	if err != nil {
		return "", err
	}
	return resp.Body, nil
}

// QRRequest asks for a payment QR code (spec, endpoint 3).
type QRRequest struct {
	Agency    string // defaults to the client's
	RefNo     string
	ExtraData string // sent as refno = refNo~extraData
	Amount    Amount // at least 1.00
	Category  string // paymentCategory
	// DuitNow asks for a DuitNow QR (/api/duitnowqr/v1/generator) instead of
	// the gateway's own (/api/qrcode/v1/generator).
	DuitNow bool
}

// QRCode is the generator's answer, returned raw (its shape is not in the
// spec): the body and its content type.
type QRCode struct {
	ContentType string
	Body        []byte
}

// GenerateQR validates q like an order and POSTs it, signed, to the QR
// generator on {reports_url}, with fields agency, amount, refno and
// paymentCategory. Retried like CreateOrder.
func (c *Client) GenerateQR(ctx context.Context, q QRRequest) (*QRCode, error) {
	path := QRPath
	if q.DuitNow {
		path = DuitNowQRPath
	}
	target, err := endpoint(c.reportsURL, "WithReportsURL", path)
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
	resp, err := c.transport.do(ctx, exchange{attempt: c.signedPost(target, form), retryable: retrySignedPost, maxBody: maxCheckoutBody})
	if err != nil {
		return nil, err
	}
	return &QRCode{ContentType: resp.Header.Get("Content-Type"), Body: []byte(resp.Body)}, nil
}
