package paygate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// FuzzParseReport: any answer body parses or fails cleanly, and every row it
// returns is one valid JSON value.
func FuzzParseReport(f *testing.F) {
	f.Add(reportBody(0, 3, 2))
	f.Add(`{"status":"OK","data":[],"stats":{"total_pages":"x"}}`)
	f.Add(`{"status":"OK","data":[1,"a",{"b":[null]}],"stats":{"total_pages":1e3}}`)
	f.Add(`{"status":`)
	f.Fuzz(func(t *testing.T, body string) {
		var p ReportPage
		if _, err := parseReport(body, &p); err != nil {
			return
		}
		for _, r := range p.Rows {
			require.True(t, json.Valid([]byte(r.raw)), "row %q", r.raw)
		}
		require.GreaterOrEqual(t, p.TotalPages, 0)
	})
}

// A report answer ends with its object: anything but white space after it
// (a NUL byte too) is an error, never a page.
func TestParseReportTrailingData(t *testing.T) {
	body := reportBody(0, 3, 2)
	for _, tc := range []struct {
		name, tail, err string
	}{
		{name: "white space", tail: " \r\n\t"},
		{name: "a NUL byte", tail: "\x00", err: "data after the top-level value"},
		{name: "a second object", tail: "{}", err: "data after the top-level value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p ReportPage
			_, err := parseReport(body+tc.tail, &p)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, p.Rows, 3)
		})
	}
}

// Report dates are the gateway's days: Malaysia time, whatever zone the
// time.Time is in.
func TestReportDatesInMalaysiaTime(t *testing.T) {
	utc := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC) // 04:00 on the 22nd in Kuala Lumpur
	ny := time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("EST", -5*3600))
	tests := []struct {
		name       string
		start, end time.Time
		want       [2]string
	}{
		{name: "UTC evening is the next Malaysian day", start: utc, end: utc, want: [2]string{"2026-11-22", "2026-11-22"}},
		{name: "another zone", start: ny, end: ny, want: [2]string{"2026-11-22", "2026-11-22"}},
		{name: "a calendar day in Malaysia time", start: time.Date(2026, 11, 1, 0, 0, 0, 0, MalaysiaTime()), end: time.Date(2026, 11, 30, 23, 59, 0, 0, MalaysiaTime()), want: [2]string{"2026-11-01", "2026-11-30"}},
		{name: "local midnight before UTC midnight", start: time.Date(2026, 11, 22, 0, 30, 0, 0, MalaysiaTime()).UTC(), end: time.Date(2026, 11, 22, 0, 30, 0, 0, MalaysiaTime()).UTC(), want: [2]string{"2026-11-22", "2026-11-22"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals, _, err := ReportQuery{Start: tt.start, End: tt.end}.values(0)
			require.NoError(t, err)
			require.Equal(t, tt.want, [2]string{vals.Get("start"), vals.Get("end")})
		})
	}
	// The order check is by Malaysian day too.
	_, _, err := ReportQuery{Start: utc, End: time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)}.values(0) // 23:00 on the 21st there
	require.ErrorContains(t, err, "must not be before start")
}

// An order can be looked up by either reference; a multi-agency AuthToken
// can filter the report by agency, a single-agency signature cannot.
func TestLookupByEitherReferenceAndAgencyFilter(t *testing.T) {
	f := newTestClient(t, WithAuthToken(testAuthToken))
	var queries []url.Values
	f.mt.RegisterResponder(http.MethodGet, testReports+paths.FPXRequest, func(req *http.Request) (*http.Response, error) {
		queries = append(queries, req.URL.Query())
		return httpmock.NewStringResponse(200, `{"status":"OK","fpxrequest":{"id":1}}`), nil
	})
	f.mt.RegisterResponder(http.MethodGet, testReports+paths.PaymentReport, func(req *http.Request) (*http.Response, error) {
		queries = append(queries, req.URL.Query())
		return httpmock.NewStringResponse(200, reportBody(0, 0, 0)), nil
	})
	ctx := context.Background()
	_, err := f.c.LookupOrder(ctx, "INV-1")
	require.NoError(t, err)
	_, err = f.c.LookupOrderByRefNo(ctx, "INV-1~cart 7")
	require.NoError(t, err)
	_, err = f.c.PaymentReportPage(ctx, ReportQuery{Agency: "OTHER-AGENCY"}, 0)
	require.NoError(t, err)
	require.Len(t, queries, 3)
	require.Equal(t, "INV-1", queries[0].Get("fpx_seller_order_no"))
	require.False(t, queries[0].Has("refno"))
	require.Equal(t, "INV-1~cart 7", queries[1].Get("refno"))
	require.False(t, queries[1].Has("fpx_seller_order_no"))
	require.Equal(t, "OTHER-AGENCY", queries[2].Get("agency"))

	signed := newTestClient(t)
	_, err = signed.c.PaymentReportPage(ctx, ReportQuery{Agency: "OTHER-AGENCY"}, 0)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "agency", ve.Problems[0].Field)
	require.Zero(t, signed.mt.GetTotalCallCount(), "nothing sent")
	_, err = signed.c.LookupOrderByRefNo(ctx, "")
	require.ErrorAs(t, err, &ve)
}

// reportBody is a report page of n rows, numbered from first.
func reportBody(first, n, totalPages int) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id":%d,"seller_order_no":"INV-%d","amount":"10.00"}`, first+i, first+i)
	}
	return fmt.Sprintf(`{"status":"OK","data":[%s],"stats":{"total_pages":%d}}`, strings.Join(rows, ","), totalPages)
}

func TestPaymentReportPageAuth(t *testing.T) {
	q := ReportQuery{Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), ApprovedOnly: true, ItemsPerPage: 50,
		SellerOrderNo: "INV-1", Extra: url.Values{"view": {"default"}}}
	t.Run("bearer", func(t *testing.T) {
		f := newTestClient(t, WithAuthToken(testAuthToken))
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(req *http.Request) (*http.Response, error) {
			require.Equal(t, "Bearer "+testAuthToken, req.Header.Get("Authorization"))
			qv := req.URL.Query()
			require.Equal(t, url.Values{"output": {"json"}, "items": {"50"}, "page": {"2"}, "is_approved": {"1"}, "start": {"2026-11-01"},
				"end": {"2026-11-21"}, "seller_order_no": {"INV-1"}, "view": {"default"}}, qv)
			return httpmock.NewStringResponse(200, reportBody(100, 2, 3)), nil
		})
		p, err := f.c.PaymentReportPage(context.Background(), q, 2)
		require.NoError(t, err)
		require.Len(t, p.Rows, 2)
		require.Equal(t, 3, p.TotalPages)
		require.Equal(t, 2, p.Page)
		var row struct{ ID int }
		require.NoError(t, p.Rows[1].Decode(&row))
		require.Equal(t, 101, row.ID)
	})
	t.Run("api key", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", func(req *http.Request) (*http.Response, error) {
			require.Empty(t, req.Header.Get("Authorization"))
			require.Equal(t, testAgency, req.URL.Query().Get("agency"))
			requireSignedURL(t, req.URL, testNow)
			return httpmock.NewStringResponse(200, reportBody(0, 1, 1)), nil
		})
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
		require.NoError(t, err)
	})
	t.Run("status not OK", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/payment", httpmock.NewStringResponder(200, `{"status":"ERROR","data":[]}`))
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
		require.ErrorIs(t, err, ErrReportStatus)
	})
	t.Run("bad query: nothing sent", func(t *testing.T) {
		f := newTestClient(t)
		for _, bad := range []ReportQuery{
			{Start: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			{ItemsPerPage: -2},
			{MaxPages: -1},
			{Extra: url.Values{"page": {"7"}}},
		} {
			_, err := f.c.PaymentReportPage(context.Background(), bad, 0)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
		}
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, -1)
		require.Error(t, err)
		require.Zero(t, f.mt.GetTotalCallCount())
	})
}

func TestLookupOrder(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{name: "found", status: 200, body: `{"status":"OK","fpxrequest":{"fpx_seller_order_no":"INV-1","fpx_debit_auth_code":"00"}}`, want: nil},
		{name: "404", status: 404, body: `{"status":"NOT_FOUND"}`, want: ErrOrderNotFound},
		{name: "null record", status: 200, body: `{"status":"OK","fpxrequest":null}`, want: ErrOrderNotFound},
		{name: "empty record", status: 200, body: `{"status":"OK","fpxrequest":{}}`, want: ErrOrderNotFound},
		{name: "status not OK", status: 200, body: `{"status":"FAIL"}`, want: ErrReportStatus},
		{name: "401", status: 401, body: `unauthorized`, want: ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestClient(t, WithAuthToken(testAuthToken))
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/fpxrequest", func(req *http.Request) (*http.Response, error) {
				require.Equal(t, url.Values{"fpx_seller_order_no": {"INV-1"}}, req.URL.Query())
				return httpmock.NewStringResponse(tt.status, tt.body), nil
			})
			rec, err := f.c.LookupOrder(context.Background(), "INV-1")
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			var r struct {
				Code FPXCode `json:"fpx_debit_auth_code"`
			}
			require.NoError(t, rec.Decode(&r))
			require.Equal(t, FPXCode("00"), r.Code)
		})
	}
}

// A page size the caller asks for sizes nothing before the answer comes:
// ItemsPerPage of math.MaxInt panicked (makeslice) and 1e9 allocated 16 GB
// for a page of two rows.
func TestPaymentReportPageLargeItems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items int
	}{
		{name: "a billion", items: 1e9},
		{name: "math.MaxInt", items: math.MaxInt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t)
			f.mt.RegisterResponder(http.MethodGet, testReports+paths.PaymentReport, func(req *http.Request) (*http.Response, error) {
				require.Equal(t, strconv.Itoa(tc.items), req.URL.Query().Get("items"))
				return httpmock.NewStringResponse(200, reportBody(0, 2, 1)), nil
			})
			p, err := f.c.PaymentReportPage(context.Background(), ReportQuery{ItemsPerPage: tc.items}, 0)
			require.NoError(t, err)
			require.Len(t, p.Rows, 2)
			require.Equal(t, tc.items, p.Items)
			require.LessOrEqual(t, cap(p.Rows), 1024, "the rows are sized from the answer, not the page size asked for")
		})
	}
}

// data is an array of rows (docs/protocol.md A3): any other value is an
// error, never a page of no rows, which ends a walk as complete (a PHP
// server encodes an array with gaps in its keys as an object); null counts
// as absent, as for total_pages.
func TestParseReportDataShape(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		rows       int
		err        string
	}{
		{name: "an array", data: `[{"id":1},{"id":2}]`, rows: 2},
		{name: "null", data: `null`},
		{name: "an object keyed by index", data: `{"0":{"id":1},"2":{"id":2}}`, err: `data is {"0":{"id":1},"2":{"id":2}}, want an array of rows`},
		{name: "a string", data: `"none"`, err: "want an array of rows"},
		{name: "a number", data: `0`, err: "want an array of rows"},
		{name: "false", data: `false`, err: "want an array of rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p ReportPage
			status, err := parseReport(`{"status":"OK","data":`+tc.data+`,"stats":{"total_pages":1}}`, &p)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "OK", status)
			require.Len(t, p.Rows, tc.rows)
		})
	}
}

// A value of an answer quoted in an error is cut, however long the answer
// made it (a page may be 64 MiB), and an error of stats.total_pages
// matches ErrReportPaging (docs/protocol.md "Payment report").
func TestAnswerValuesQuotedCut(t *testing.T) {
	long := strings.Repeat("Z", 1<<20)
	digits := strings.Repeat("9", 1<<20)
	report := func(f clientFixture) error {
		_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{}, 0)
		return err
	}
	lookup := func(f clientFixture) error {
		_, err := f.c.LookupOrder(context.Background(), "INV-1")
		return err
	}
	history := func(f clientFixture) error {
		_, err := f.c.Transactions(context.Background(), "buyer@example.com")
		return err
	}
	for _, tc := range []struct {
		name, path, body string
		call             func(clientFixture) error
		want             error
		quoted           string
	}{
		{name: "report status", path: paths.PaymentReport, body: `{"status":"` + long + `","data":[]}`, call: report, want: ErrReportStatus, quoted: `"ZZZZ`},
		{name: "total_pages a long number", path: paths.PaymentReport, body: `{"status":"OK","data":[],"stats":{"total_pages":` + digits + `}}`, call: report, want: ErrReportPaging, quoted: "is 9999"},
		{name: "total_pages negative", path: paths.PaymentReport, body: `{"status":"OK","data":[],"stats":{"total_pages":-1}}`, call: report, want: ErrReportPaging, quoted: "is -1, want a whole number of pages"},
		{name: "total_pages a long string", path: paths.PaymentReport, body: `{"status":"OK","data":[],"stats":{"total_pages":"` + long + `"}}`, call: report, want: ErrReportPaging, quoted: `is "ZZZZ`},
		{name: "lookup status", path: "/api/report/v1/fpxrequest", body: `{"status":"` + long + `"}`, call: lookup, want: ErrReportStatus, quoted: `"ZZZZ`},
		{name: "transactions status", path: paths.Transactions, body: `{"status":"` + long + `"}`, call: history, want: ErrReportStatus, quoted: `"ZZZZ`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t, WithAuthToken(testAuthToken))
			f.mt.RegisterResponder(http.MethodGet, testReports+tc.path, httpmock.NewStringResponder(200, tc.body))
			err := tc.call(f)
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.quoted)
			require.Less(t, len(err.Error()), 300, "the value is cut")
		})
	}
}

// A refno lookup that finds nothing says what to pass when the reference
// has no "~": the gateway knows an order by the reference it was created
// with, which a callback's base RefNo is not when the order had extra data.
func TestLookupByRefNoNotFoundSaysWhatToPass(t *testing.T) {
	for _, tc := range []struct {
		ref, body string
		hint      bool
	}{
		{ref: "INV-5", body: `{"status":"OK","fpxrequest":null}`, hint: true},
		{ref: "INV-5~c5", body: `{"status":"OK","fpxrequest":null}`, hint: false},
	} {
		f := newTestClient(t, WithAuthToken(testAuthToken))
		f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/fpxrequest", httpmock.NewStringResponder(200, tc.body))
		_, err := f.c.LookupOrderByRefNo(context.Background(), tc.ref)
		require.ErrorIs(t, err, ErrOrderNotFound)
		require.Equal(t, tc.hint, strings.Contains(err.Error(), "pass Callback.CreatedRefNo"), "%s: %v", tc.ref, err)
	}
	f := newTestClient(t, WithAuthToken(testAuthToken))
	f.mt.RegisterResponder(http.MethodGet, testReports+"/api/report/v1/fpxrequest", httpmock.NewStringResponder(404, `{}`))
	_, err := f.c.LookupOrder(context.Background(), "INV-5")
	require.ErrorIs(t, err, ErrOrderNotFound)
	require.NotContains(t, err.Error(), "CreatedRefNo", "fpx_seller_order_no is not the created refno")
}

// stats.total_pages is a whole number from 0 to a billion, whatever digit
// it starts with; past a billion it is an error matching ErrReportPaging.
func TestParseReportTotalPages(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int
		err   string
	}{
		{value: "0", want: 0},
		{value: "9", want: 9},
		{value: "95", want: 95},
		{value: "1000000000", want: 1e9},
		{value: "1000000001", err: "stats.total_pages is 1000000001, want a whole number of pages"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			var p ReportPage
			_, err := parseReport(`{"status":"OK","data":[],"stats":{"total_pages":`+tc.value+`}}`, &p)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.ErrorIs(t, err, ErrReportPaging)
				return
			}
			require.NoError(t, err)
			require.True(t, p.HasTotalPages)
			require.Equal(t, tc.want, p.TotalPages)
		})
	}
}

// A lookup answer that is not JSON is an error naming the lookup, not a
// record nor "not found".
func TestLookupOrderAnswerNotJSON(t *testing.T) {
	f := newTestClient(t, WithAuthToken(testAuthToken))
	f.mt.RegisterResponder(http.MethodGet, testReports+paths.FPXRequest, httpmock.NewStringResponder(200, `<html>maintenance</html>`))
	rec, err := f.c.LookupOrder(context.Background(), "INV-1")
	require.ErrorContains(t, err, "paygate: order lookup: ")
	require.NotErrorIs(t, err, ErrOrderNotFound)
	require.Nil(t, rec)
}

// A report query the client cannot sign (a filter given two values) or
// that asks for a page size below AllItems is refused before anything is
// sent, and is not retried.
func TestPaymentReportPageRefusedBeforeSending(t *testing.T) {
	f := newTestClient(t)
	_, err := f.c.PaymentReportPage(context.Background(), ReportQuery{Extra: url.Values{"view": {"a", "b"}}}, 0)
	require.ErrorIs(t, err, ErrMultipleValues)
	_, err = f.c.PaymentReportPage(context.Background(), ReportQuery{ItemsPerPage: AllItems - 1}, 0)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "items", ve.Problems[0].Field)
	require.Zero(t, f.mt.GetTotalCallCount(), "nothing sent")
}
