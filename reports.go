package paygate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-querystring/query"
	"github.com/paygate-go/paygate/internal/jsonscan"
)

// DefaultItemsPerPage is the page size when ReportQuery.ItemsPerPage is 0
// (the gateway's own default).
const DefaultItemsPerPage = 20

// AllItems as ReportQuery.ItemsPerPage asks for every row in one answer
// (items=-1, docs/assumptions.md A-report-filters). The answer is held
// whole, so it must fit in 64 MiB; Payments pages on if the server caps it.
const AllItems = -1

// maxReportPage caps the body of one report page.
const maxReportPage = 64 << 20

// maxRowsHint caps the rows a page is sized for before its answer comes:
// the page size asked for is the caller's number (math.MaxInt panicked in
// make), and a page may hold fewer rows; more grow the slice.
const maxRowsHint = 1024

// MalaysiaTime is the gateway's time zone, UTC+08:00 (Malaysia has kept no
// daylight saving since 1982), as a fixed zone that needs no tzdata.
func MalaysiaTime() *time.Location { return time.FixedZone("MYT", 8*60*60) }

// ReportQuery selects payments for the payment report (docs/protocol.md
// "Payment report").
type ReportQuery struct {
	// Start and End bound the range, sent as YYYY-MM-DD in Malaysia time
	// (MalaysiaTime), assumed to be the gateway's days (docs/assumptions.md
	// A-report-dates), whatever zone the time.Time has:
	// 2026-11-21T20:00Z is 2026-11-22 in Kuala Lumpur. Zero means unset. To
	// ask for a calendar day, pass time.Date(y, m, d, 0, 0, 0, 0,
	// paygate.MalaysiaTime()).
	Start time.Time `url:"start,omitempty" layout:"2006-01-02"`
	// End is the last day of the range; see Start.
	End time.Time `url:"end,omitempty" layout:"2006-01-02"`
	// Agency filters on one agency, for an AuthToken that spans several
	// (docs/assumptions.md A-report-filters). With API-key signing the
	// agency is always the client's and Agency must be empty or equal to
	// it.
	Agency string `url:"agency,omitempty"`
	// ApprovedOnly sends is_approved=1.
	ApprovedOnly bool `url:"is_approved,int,omitempty"`
	// ItemsPerPage is rows per page (items); 0 means DefaultItemsPerPage,
	// AllItems every row in one answer.
	ItemsPerPage int `url:"-"`
	// MaxPages is the most pages Payments reads before it gives up with
	// ErrReportPaging; 0 means DefaultMaxPages.
	MaxPages int `url:"-"`
	// SellerOrderNo filters on one merchant reference.
	SellerOrderNo string `url:"seller_order_no,omitempty"`
	// Extra holds further filters the protocol does not list (docs/assumptions.md A-report-filters); it may not set
	// output, page, items or the signing fields.
	Extra url.Values `url:"-"`
}

// values encodes the query for one page, with output=json always.
func (q ReportQuery) values(page int) (url.Values, int, error) {
	q.Start, q.End = inMalaysia(q.Start), inMalaysia(q.End)
	items, err := q.check(page)
	if err != nil {
		return nil, 0, err
	}
	vals, _ := query.Values(q) // it fails only for a non-struct or a field with EncodeValues
	for k, vs := range q.Extra {
		vals[k] = append([]string(nil), vs...)
	}
	vals.Set("output", "json")
	vals.Set("items", strconv.Itoa(items))
	vals.Set("page", strconv.Itoa(page))
	return vals, items, nil
}

// check validates the query for one page, its dates already in Malaysia
// time, and returns the page size it asks for.
func (q ReportQuery) check(page int) (items int, err error) {
	var v ValidationError
	items = q.ItemsPerPage
	switch {
	case items == 0:
		items = DefaultItemsPerPage
	case items < AllItems:
		v.add("items", "must be positive, or AllItems (-1) for every row", strconv.Itoa(items))
	}
	if q.MaxPages < 0 {
		v.add("MaxPages", "must not be negative (0 means DefaultMaxPages)", strconv.Itoa(q.MaxPages))
	}
	if page < 0 {
		v.add("page", "must be >= 0 (the first page is 0)", strconv.Itoa(page))
	}
	// An empty range would read as no payments (docs/assumptions.md A-report-date-order).
	if !q.Start.IsZero() && !q.End.IsZero() && q.End.Format(time.DateOnly) < q.Start.Format(time.DateOnly) {
		v.add("end", "must not be before start (Malaysia time)", q.End.Format(time.DateOnly))
	}
	for k := range q.Extra {
		if slices.Contains(clientSetReportParams(), k) {
			v.add(k, "is set by the client; not allowed in Extra", "")
		}
	}
	return items, v.err()
}

// clientSetReportParams are the report parameters the client sets itself,
// which ReportQuery.Extra may not.
func clientSetReportParams() []string {
	return []string{"output", "page", "items", "agency", "exp", "signature"}
}

// inMalaysia is t in Malaysia time (MalaysiaTime); zero stays zero.
func inMalaysia(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(MalaysiaTime())
}

// ReportRow is one row of a report. The protocol does not show the fields
// of a row (docs/assumptions.md A-report-rows), so the raw JSON is kept (as
// a slice of its page's body, not a copy); Decode reads it into a type of
// your own.
type ReportRow struct {
	raw string
}

// Raw returns a copy of the row's JSON.
func (r ReportRow) Raw() json.RawMessage { return json.RawMessage(r.raw) }

// Decode unmarshals the row into v.
func (r ReportRow) Decode(v any) error { return json.NewDecoder(strings.NewReader(r.raw)).Decode(v) }

// ReportPage is one page of the payment report (docs/protocol.md A3).
type ReportPage struct {
	// Rows are the page's rows (data), raw.
	Rows []ReportRow
	// TotalPages is stats.total_pages; HasTotalPages tells whether the
	// answer had it (a null counts as absent).
	TotalPages int
	// HasTotalPages is true when stats.total_pages was a number.
	HasTotalPages bool
	// Page is the page number asked for, from 0.
	Page int
	// Items is the page size asked for.
	Items int
}

// parseReport reads the answer of docs/protocol.md A3 in one pass: status, the rows of
// data as slices of body (readRows), and stats.total_pages.
func parseReport(body string, p *ReportPage) (status string, err error) {
	sc := jsonscan.New(body)
	if sc.Peek() != '{' {
		return "", errors.New("the answer is not a JSON object")
	}
	sc.Members(func(key string) {
		switch {
		case key == "status" && sc.Peek() == '"':
			status = sc.Str()
		case key == "data":
			if e := readRows(sc, p); e != nil {
				err = e
			}
		case key == "stats" && sc.Peek() == '{':
			sc.Members(func(key string) {
				if key != "total_pages" {
					sc.Skip()
				} else if e := readTotalPages(sc, p); e != nil {
					err = e
				}
			})
		default:
			sc.Skip()
		}
	})
	sc.End()
	if err := sc.Err(); err != nil {
		return "", err
	}
	return status, err
}

// readRows reads data into p.Rows: an array of rows (docs/protocol.md A3),
// or null (none). Anything else is an error, not a page of no rows, which
// would end a walk as complete (a PHP server encodes an array whose keys
// have gaps as an object; docs/assumptions.md A-report-data-shape).
func readRows(sc *jsonscan.Scanner[string], p *ReportPage) error {
	switch sc.Peek() {
	case '[':
		sc.Elements(func(int) {
			p.Rows = append(p.Rows, ReportRow{raw: sc.Skip()})
		})
	case 'n':
		sc.Skip()
	default:
		return newQuotedValueError("data", sc.Skip(), "an array of rows")
	}
	return nil
}

// readTotalPages reads stats.total_pages into p: a whole number of pages,
// or null (absent). Anything else is an error, not an absent count: a count
// the walk cannot check (docs/assumptions.md A-report-paging).
func readTotalPages(sc *jsonscan.Scanner[string], p *ReportPage) error {
	switch c := sc.Peek(); {
	case c == 'n':
		sc.Skip()
	case c == '-' || '0' <= c && c <= '9':
		num := sc.Number()
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || n > 1e9 {
			return pagingValueError(num, "a whole number of pages")
		}
		p.TotalPages, p.HasTotalPages = n, true
	default:
		return pagingValueError(sc.Skip(), "a number")
	}
	return nil
}

// pagingValueError is the error of a stats.total_pages the walk cannot
// check: it matches ErrReportPaging (docs/protocol.md "Payment report"),
// and quotes the value cut, however long the answer made it.
func pagingValueError(value, want string) error {
	e := newQuotedValueError("stats.total_pages", value, want)
	e.kind = ErrReportPaging
	return e
}

// PaymentReportPage fetches one page (from 0) of the payment report
// (docs/protocol.md "Payment report"), with the AuthToken when set, else
// signed with the API key (agency added). A status other than OK is an
// error matching ErrReportStatus. GETs are retried on network errors, 429
// and 5xx.
func (c *Client) PaymentReportPage(ctx context.Context, q ReportQuery, page int) (*ReportPage, error) {
	if q.Agency != "" && c.authToken.s == nil && q.Agency != c.agency {
		return nil, &ValidationError{Problems: []FieldError{newFieldError("agency",
			"must be the client's agency when the report is signed with its API key (filter other agencies with an AuthToken)", q.Agency)}}
	}
	vals, items, err := q.values(page)
	if err != nil {
		return nil, err
	}
	resp, err := c.reportGET(ctx, c.endpoints.PaymentReport, vals)
	if err != nil {
		return nil, err
	}
	p := &ReportPage{Page: page, Items: items, Rows: make([]ReportRow, 0, min(max(items, 0), maxRowsHint))}
	status, err := parseReport(resp.Body, p)
	if err != nil {
		var qv *quotedValueError
		if errors.As(err, &qv) {
			qv.value = resp.scrub(qv.value) // whole, before Error cuts it
		}
		return nil, resp.fail(fmt.Errorf("paygate: payment report page %d: %w", page, err))
	}
	if status != "OK" {
		return nil, resp.fail(fmt.Errorf("%w: page %d: status %.40q", ErrReportStatus, page, resp.scrub(status)))
	}
	return p, nil
}

// OrderRecord is the answer of LookupOrder: the fpxrequest object kept raw,
// since the protocol does not show its fields (docs/assumptions.md A-lookup).
type OrderRecord struct {
	// Raw is the fpxrequest object as received.
	Raw json.RawMessage
}

// Decode unmarshals the record into v.
func (r *OrderRecord) Decode(v any) error { return json.Unmarshal(r.Raw, v) }

// LookupOrder finds one order for reconciliation by the merchant's
// reference as the payment network knows it (docs/protocol.md "Single order
// lookup"): GET /api/report/v1/fpxrequest?fpx_seller_order_no=... answered
// by {"status":"OK","fpxrequest":{...}} (docs/assumptions.md A-lookup). A
// 404, or an answer without a record, matches ErrOrderNotFound; another
// status matches ErrReportStatus.
func (c *Client) LookupOrder(ctx context.Context, sellerOrderNo string) (*OrderRecord, error) {
	return c.lookup(ctx, "fpx_seller_order_no", sellerOrderNo)
}

// LookupOrderByRefNo is LookupOrder by the refno the order was created with
// (refNo~extraData when it had extra data), the other parameter the
// public PHP client's GetFpxRequestReport uses: GET ...fpxrequest?refno=...
// Its answer is read like LookupOrder's (docs/assumptions.md A-lookup).
func (c *Client) LookupOrderByRefNo(ctx context.Context, refNo string) (*OrderRecord, error) {
	return c.lookup(ctx, "refno", refNo)
}

// lookup asks the fpxrequest endpoint for the order whose param is ref.
func (c *Client) lookup(ctx context.Context, param, ref string) (*OrderRecord, error) {
	if ref == "" {
		return nil, &ValidationError{Problems: []FieldError{newFieldError(param, ruleRequired, "")}}
	}
	resp, err := c.reportGET(ctx, c.endpoints.FPXRequest, url.Values{param: {ref}})
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return nil, &readError{err: notFound(param, ref), callID: apiErr.CallID}
	}
	if err != nil {
		return nil, err
	}
	var a struct {
		Status     string          `json:"status"`
		FPXRequest json.RawMessage `json:"fpxrequest"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &a); err != nil {
		return nil, resp.fail(fmt.Errorf("paygate: order lookup: %w", err))
	}
	if a.Status != "OK" {
		return nil, resp.fail(fmt.Errorf("%w: order lookup %s %q: status %.40q", ErrReportStatus, param, ref, resp.scrub(a.Status)))
	}
	switch string(bytes.TrimSpace(a.FPXRequest)) {
	case "", "null", "{}", "[]":
		return nil, resp.fail(notFound(param, ref))
	}
	return &OrderRecord{Raw: a.FPXRequest}, nil
}

// notFound is the ErrOrderNotFound of a lookup by param. A refno without
// "~" may be a callback's base reference of an order created with extra
// data, which the gateway knows only whole: the error says what to pass.
func notFound(param, ref string) error {
	if param == "refno" && !strings.Contains(ref, "~") {
		return fmt.Errorf("%w: refno %q (the gateway knows an order by the reference it was created with, refNo~extraData when it had extra data: pass Callback.CreatedRefNo, not Callback.RefNo)", ErrOrderNotFound, ref)
	}
	return fmt.Errorf("%w: %s %q", ErrOrderNotFound, param, ref)
}

// reportGET sends a GET to the reports host with the right credential:
// Bearer AuthToken when set (it spans agencies), else the API-key signature
// with agency added, signed afresh on every attempt (docs/assumptions.md
// A-auth-choice).
func (c *Client) reportGET(ctx context.Context, path string, vals url.Values) (*response, error) {
	base, err := c.endpoint(c.reportsURL, "WithReportsURL", path)
	if err != nil {
		return nil, err
	}
	bearer := c.authToken.s != nil
	if !bearer {
		if err := c.needKey("reports (or " + c.setting("WithAuthToken") + ")"); err != nil {
			return nil, err
		}
		if c.agency == "" {
			return nil, fmt.Errorf("%w: signed reports need %s", ErrNoCredential, c.setting("WithAgency"))
		}
		vals.Set("agency", c.agency)
	}
	raw := base + "?" + vals.Encode()
	resp, err := c.transport.do(ctx, exchange{method: http.MethodGet, target: base, retryable: retryTransient, maxBody: maxReportPage, attempt: func(ctx context.Context) (*http.Request, error) {
		target := raw
		if !bearer {
			var err error
			if target, err = SignURL(c.key, raw, c.signNow()); err != nil {
				return nil, err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err == nil { // it cannot fail: target is a URL the client built (or SignURL wrote)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("User-Agent", userAgent)
			if bearer {
				req.Header.Set("Authorization", "Bearer "+c.authToken.reveal())
			}
		}
		return req, err
	}})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
