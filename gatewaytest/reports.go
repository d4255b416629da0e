package gatewaytest

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/paths"
	"github.com/paygate-go/paygate/internal/signing"

	"github.com/paygate-go/paygate"
)

// RowShape is the shape of the sandbox's report rows and lookup records,
// whose fields the protocol does not show (docs/assumptions.md
// A-payment-record). paygate.PaymentRecord reads both.
type RowShape int

const (
	// RowsSandbox names fields as the sandbox always has: order_no,
	// seller_order_no, agency, amount (a string), status,
	// fpx_debit_auth_code, fpx_txn_id, created_at (RFC 3339) and
	// is_approved (the default).
	RowsSandbox RowShape = iota
	// RowsFPX names them as the payment network's messages do, with no
	// status member (the status follows from fpx_debit_auth_code):
	// order_no, fpx_seller_order_no, agency, fpx_txn_amount (a JSON
	// number), fpx_debit_auth_code, fpx_fpx_txn_id, fpx_txn_time (FPX's
	// 20060102150405, Malaysian) and created_date (2006-01-02 15:04:05,
	// Malaysian).
	RowsFPX
)

// WithReportRows sets the shape of report rows and lookup records (default
// RowsSandbox).
func WithReportRows(s RowShape) Option { return func(c *config) { c.rowShape = s } }

// TotalPages is what the sandbox's report announces as stats.total_pages,
// which paygate.Client.Payments only cross-checks (docs/assumptions.md
// A-report-paging).
type TotalPages int

const (
	// TotalPagesTrue is the true page count (the default).
	TotalPagesTrue TotalPages = iota
	// TotalPagesUnder is always 1, whatever the rows: a server that
	// under-reports.
	TotalPagesUnder
	// TotalPagesAbsent sends stats without total_pages.
	TotalPagesAbsent
	// TotalPagesString sends the true count as a JSON string.
	TotalPagesString
)

// WithReportTotalPages sets what the report announces as
// stats.total_pages (default TotalPagesTrue).
func WithReportTotalPages(t TotalPages) Option { return func(c *config) { c.totalPages = t } }

// reportRow is one payment as the sandbox's report shows it in the
// RowsSandbox shape.
type reportRow struct {
	OrderNo       string `json:"order_no"`
	SellerOrderNo string `json:"seller_order_no"`
	Agency        string `json:"agency"`
	Amount        string `json:"amount"`
	Status        string `json:"status"`
	DebitAuthCode string `json:"fpx_debit_auth_code"`
	FPXTxnID      string `json:"fpx_txn_id"`
	Created       string `json:"created_at"`
	IsApproved    int    `json:"is_approved"`
}

// fpxRow is one payment in the RowsFPX shape.
type fpxRow struct {
	OrderNo       string      `json:"order_no"`
	SellerOrderNo string      `json:"fpx_seller_order_no"`
	Agency        string      `json:"agency"`
	Amount        json.Number `json:"fpx_txn_amount"`
	DebitAuthCode string      `json:"fpx_debit_auth_code"`
	FPXTxnID      string      `json:"fpx_fpx_txn_id"`
	TxnTime       string      `json:"fpx_txn_time,omitempty"`
	Created       string      `json:"created_date"`
}

// authorized checks a report request: Bearer AuthToken, or a signed URL
// with this sandbox's agency. It answers 401/403 itself when not.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok && equalSecret(tok, s.AuthToken) {
			return true
		}
		jsonError(w, http.StatusUnauthorized, "bad AuthToken")
		return false
	}
	if !s.checkSigned(w, signing.VerifyURL(r.URL, s.cfg.now(), s.verifier)) {
		return false
	}
	if r.URL.Query().Get("agency") != s.Agency {
		jsonError(w, http.StatusForbidden, "agency must be sent with an API-key request")
		return false
	}
	return true
}

// paymentReport is GET /api/report/v1/payment (docs/protocol.md endpoint 4, A3):
// filters is_approved, start, end (YYYY-MM-DD, Malaysian time),
// seller_order_no; paging by items (default 20, -1 for all) and page from 0.
func (s *Server) paymentReport(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	f, err := parseReportFilter(r.URL.Query())
	if err != nil {
		jsonError(w, http.StatusBadRequest, "items, page, start or end malformed")
		return
	}
	if m := s.cfg.maxItems; m > 0 && (f.items == -1 || f.items > m) {
		f.items = m
	}
	var rows []any
	for _, o := range s.Orders() {
		if f.keeps(o) {
			rows = append(rows, s.rowOf(o))
		}
	}
	rows, total := f.pageOf(rows)
	writeJSON(w, http.StatusOK, map[string]any{"status": "OK", "data": rows, "stats": s.cfg.totalPages.stats(total)})
}

// reportFilter is what a payment report request asks for.
type reportFilter struct {
	items, page int
	// start is the first day's start; end is the start of the day after
	// the last (the end day is included); zero when not asked.
	start, end   time.Time
	approvedOnly bool
	ref          string
}

// parseReportFilter reads the report's query; a malformed number or day, a
// negative page, or items 0 or below -1 is an error.
func parseReportFilter(q url.Values) (reportFilter, error) {
	f := reportFilter{approvedOnly: q.Get("is_approved") == "1", ref: q.Get("seller_order_no")}
	var errs [4]error
	f.items, errs[0] = intParam(q, "items", 20)
	f.page, errs[1] = intParam(q, "page", 0)
	f.start, errs[2] = dayParam(q, "start", 0)
	f.end, errs[3] = dayParam(q, "end", 1)
	if err := errors.Join(errs[:]...); err != nil {
		return f, err
	}
	if f.page < 0 || f.items == 0 || f.items < -1 {
		return f, errors.New("page below 0, or items 0 or below -1")
	}
	return f, nil
}

// intParam reads the integer parameter name, def when absent.
func intParam(q url.Values, name string, def int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

// dayParam reads the YYYY-MM-DD parameter name as the start of that day in
// Malaysian time, moved on by days; zero when absent.
func dayParam(q url.Values, name string, days int) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, v, time.FixedZone("MYT", 8*3600))
	return t.AddDate(0, 0, days), err
}

// keeps reports whether order o passes the filters.
func (f reportFilter) keeps(o Order) bool {
	return (!f.approvedOnly || o.Status == paygate.StatusSuccess) &&
		(f.ref == "" || f.ref == o.RefNo) &&
		(f.start.IsZero() || !o.Created.Before(f.start)) &&
		(f.end.IsZero() || o.Created.Before(f.end))
}

// pageOf cuts the matching rows to the page asked for, and counts the
// pages (1 when every row is asked for at once).
func (f reportFilter) pageOf(rows []any) ([]any, int) {
	total := 1
	switch {
	case f.items > 0:
		total = (len(rows) + f.items - 1) / f.items
		lo := min(f.page*f.items, len(rows))
		rows = rows[lo:min(lo+f.items, len(rows))]
	case f.page > 0:
		rows = nil
	}
	if rows == nil {
		rows = []any{}
	}
	return rows, total
}

// stats is the report's stats member for total true pages, as t says.
func (t TotalPages) stats(total int) map[string]any {
	switch t {
	case TotalPagesUnder:
		return map[string]any{"total_pages": 1}
	case TotalPagesAbsent:
		return map[string]any{}
	case TotalPagesString:
		return map[string]any{"total_pages": strconv.Itoa(total)}
	}
	return map[string]any{"total_pages": total}
}

// rowOf is the report row of an order, in the configured shape.
func (s *Server) rowOf(o Order) any {
	if s.cfg.rowShape == RowsFPX {
		myt := time.FixedZone("MYT", 8*3600)
		r := fpxRow{
			OrderNo: o.OrderNo, SellerOrderNo: o.RefNo, Agency: o.Agency, Amount: json.Number(o.Amount.String()),
			DebitAuthCode: string(o.FPXCode), FPXTxnID: o.FPXTxnID, Created: o.Created.In(myt).Format(time.DateTime),
		}
		if !o.Paid.IsZero() {
			r.TxnTime = o.Paid.In(myt).Format("20060102150405")
		}
		return r
	}
	approved := 0
	if o.Status == paygate.StatusSuccess {
		approved = 1
	}
	return reportRow{
		OrderNo: o.OrderNo, SellerOrderNo: o.RefNo, Agency: o.Agency, Amount: o.Amount.String(),
		Status: string(o.Status), DebitAuthCode: string(o.FPXCode), FPXTxnID: o.FPXTxnID,
		Created: o.Created.Format(time.RFC3339), IsApproved: approved,
	}
}

// fpxRequest is GET /api/report/v1/fpxrequest?fpx_seller_order_no=... (or
// refno=...): one order, or 404.
func (s *Server) fpxRequest(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	ref := r.URL.Query().Get("fpx_seller_order_no")
	if ref == "" {
		ref = r.URL.Query().Get("refno")
	}
	if f := s.cfg.failLookup; f != nil && f(ref) {
		s.lookedUp(ref, http.StatusServiceUnavailable, time.Now())
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "ERROR", "message": "lookup failed (WithLookupFailures)"})
		return
	}
	began := time.Now()
	s.mu.Lock()
	o, ok := s.byRef[ref]
	var snapshot Order
	if ok {
		snapshot = *o
	}
	s.mu.Unlock()
	s.land(ref) // a create in flight lands after the lookup was read (WithLostCreateAnswers)
	if !ok {
		s.lookedUp(ref, http.StatusNotFound, began)
		writeJSON(w, http.StatusNotFound, map[string]any{"status": "NOT_FOUND", "fpxrequest": nil})
		return
	}
	s.lookedUp(ref, http.StatusOK, began)
	writeJSON(w, http.StatusOK, map[string]any{"status": "OK", "fpxrequest": s.rowOf(snapshot)})
}

// qr is the QR generators (docs/protocol.md endpoint 3): a signed form of agency,
// amount, refno and paymentCategory. The answer is the pay URL the QR code
// would carry, as JSON; the sandbox does not draw the image.
func (s *Server) qr(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		jsonError(w, http.StatusBadRequest, "form: "+err.Error())
		return
	}
	f := r.PostForm
	if !s.checkSigned(w, s.verifyPOST(r, f)) {
		return
	}
	_, problems := s.validateOrder(f.Get("agency"), f.Get("refno"), f.Get("amount"), "", "")
	if f.Get("paymentCategory") == "" {
		problems = append(problems, problem{"paymentCategory", "required"})
	}
	if len(problems) > 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"status": "ERROR", "errors": problems})
		return
	}
	payload := s.PayURL + paths.Pay + f.Get("agency") + "/" + f.Get("paymentCategory") + "/" + f.Get("refno") + "/" + f.Get("amount")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "OK", "qr_payload": payload, "kind": strings.TrimPrefix(r.URL.Path, "/api/")})
}
