package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

func TestReportAndLookup(t *testing.T) {
	sb := useSandbox(t)
	client, err := sb.Client()
	require.NoError(t, err)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer shop.Close()
	for _, ref := range []string{"A-1", "A-2", "A-3"} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 1000, Email: "a@b.co", ReturnURL: shop.URL})
		require.NoError(t, err)
	}
	require.NoError(t, sb.Pay("A-1", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("A-2", paygate.StatusFailed))
	sb.Settle()
	today := time.Now().In(time.FixedZone("MYT", 8*3600)).Format(time.DateOnly)

	code, out, errOut := runCLI(t, "", "report", "-from", today, "-to", today, "-items", "2")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[0], "agency,amount,created_at,fpx_debit_auth_code"), lines[0])
	require.Contains(t, out, "A-2,failed")
	require.Equal(t, "paygate report: "+reportSpan(mustDay(t, today), mustDay(t, today))+"\n", errOut,
		"the span only: no progress line when stderr is not a terminal")

	code, out, _ = runCLI(t, "", "report", "-from", today, "-to", today, "-approved", "-format", "json")
	require.Equal(t, exitOK, code)
	require.Equal(t, 1, strings.Count(out, "\n"))
	require.Contains(t, out, `"seller_order_no":"A-1"`)

	for _, args := range [][]string{{"report", "-from", "22/11/2026", "-to", today}, {"report", "-from", today, "-to", today, "-format", "xml"}, {"report"}, {"report", "-from", today}} {
		code, _, _ := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code)
	}

	code, out, _ = runCLI(t, "", "lookup", "A-1")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, `"status": "success"`)
	code, _, errOut = runCLI(t, "", "lookup", "NOPE")
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errOut, "order not found")
	code, _, _ = runCLI(t, "", "lookup")
	require.Equal(t, exitUsage, code)

	t.Setenv("PAYGATE_PASSWORD", "old")
	code, _, errOut = runCLI(t, "", "report", "-from", today, "-to", today)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "deprecated")
}

// The CSV report keeps every value as the service sent it and every column
// any row has: a 19-digit id, a number with a trailing zero, a column that
// first appears on the second page, a string with a comma and a quote.
func TestReportCSVKeepsData(t *testing.T) {
	pages := []string{
		`{"status":"OK","stats":{"total_pages":2},"data":[{"id":2611220346460000017,"amount":10.50,"ref":"INV-1"},{"id":2611220346460000018,"amount":1e2,"ref":"a,\"b\""}]}`,
		`{"status":"OK","stats":{"total_pages":2},"data":[{"id":2611220346460000019,"amount":7.00,"ref":"INV-3","refund":null,"bank":"MB2U0227"}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		_, _ = io.WriteString(w, pages[n])
	}))
	t.Cleanup(srv.Close)
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	code, out, errOut := runCLI(t, "", "report", "-from", "2026-11-01", "-to", "2026-11-30", "-items", "2")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "amount,bank,id,ref,refund\n"+
		"10.50,,2611220346460000017,INV-1,\n"+
		"1e2,,2611220346460000018,\"a,\"\"b\"\"\",\n"+
		"7.00,MB2U0227,2611220346460000019,INV-3,\n", out)
}

// The CSV report puts a ' before every cell a spreadsheet would run as a
// formula, header included, and leaves plain numbers as sent; -csv-raw
// writes every value exactly as sent.
func TestReportCSVFormulas(t *testing.T) {
	page := `{"status":"OK","stats":{"total_pages":1},"data":[` +
		`{"buyer_name":"=HYPERLINK(\"http://evil\",\"x\")","amount":-5.00,"phone":"+60123456789","note":"@SUM(A1:A9)","=k":"-2+3"},` +
		`{"buyer_name":"Siti","amount":10.50,"phone":"-","note":"\tx","=k":"-1e2"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "safe by default", want: "'=k,amount,buyer_name,note,phone\n" +
			"'-2+3,-5.00,\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",'@SUM(A1:A9),+60123456789\n" +
			"'-1e2,10.50,Siti,'\tx,'-\n"},
		{name: "-csv-raw", args: []string{"-csv-raw"}, want: "=k,amount,buyer_name,note,phone\n" +
			"-2+3,-5.00,\"=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",@SUM(A1:A9),+60123456789\n" +
			"-1e2,10.50,Siti,\"\tx\",-\n"}, // encoding/csv quotes a cell that begins with a TAB
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"report", "-from", "2026-11-01", "-to", "2026-11-30"}, tc.args...)...)
			require.Equal(t, exitOK, code, errOut)
			require.Equal(t, tc.want, out)
		})
	}
	_, _, help := runCLI(t, "", "report", "-h")
	require.Contains(t, help, "-csv-raw")
}

// A report whose stats.total_pages under-reports is written whole, with a
// warning, and the command succeeds: every row came.
func TestReportPastTotalPages(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls++; calls > 5 {
			t.Errorf("request %d: the walk does not stop", calls)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		rows := []string{}
		if page < 2 {
			rows = []string{`{"seller_order_no":"A-` + strconv.Itoa(2*page) + `"}`, `{"seller_order_no":"A-` + strconv.Itoa(2*page+1) + `"}`}
		}
		_, _ = io.WriteString(w, `{"status":"OK","data":[`+strings.Join(rows, ",")+`],"stats":{"total_pages":1}}`)
	}))
	defer srv.Close()
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	code, out, errOut := runCLI(t, "", "report", "-from", "2026-11-01", "-to", "2026-11-02", "-items", "2")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "seller_order_no\nA-0\nA-1\nA-2\nA-3\n", out)
	require.Contains(t, errOut, "warning: ")
	require.Contains(t, errOut, "stats.total_pages said 1")
	require.Equal(t, 3, calls)
}

// lookup looks up by refNo unless -by seller says otherwise, as the
// top-level help says; both name the default the same way.
func TestLookupByRefNoByDefault(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"OK","fpxrequest":{"fpx_seller_order_no":"S-1","status":"success"}}`))
	}))
	defer srv.Close()
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_CHECKOUT_URL", "")
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	for _, tc := range []struct {
		args  []string
		query string
	}{
		{args: []string{"lookup", "INV-1~cart 7"}, query: "refno=INV-1~cart+7"},
		{args: []string{"lookup", "-by", "refno", "INV-1"}, query: "refno=INV-1"},
		{args: []string{"lookup", "-by", "seller", "S-1"}, query: "fpx_seller_order_no=S-1"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, `"status": "success"`)
		mu.Lock()
		require.Equal(t, tc.query, queries[len(queries)-1], "%v", tc.args)
		mu.Unlock()
	}
	_, _, help := runCLI(t, "", "-h")
	require.Contains(t, help, "lookup     one order by the refNo it was created with")
	_, _, help = runCLI(t, "", "lookup", "-h")
	require.Contains(t, help, `(default "refno")`)
}

// mustDay is the start of the Malaysian day YYYY-MM-DD.
func mustDay(t *testing.T, day string) time.Time {
	t.Helper()
	d, err := time.ParseInLocation(time.DateOnly, day, paygate.MalaysiaTime())
	require.NoError(t, err)
	return d
}

// runCLIAt is runCLI with the clock stopped at now.
func runCLIAt(t *testing.T, now time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := dispatch(env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errOut,
		now: func() time.Time { return now }}, args)
	return code, out.String(), errOut.String()
}

// The report's days are Malaysian: -from and -to take today and yesterday
// by the Malaysian date, the command says which UTC span it asks for, and
// an empty answer while the UTC and Malaysian dates differ says why it may
// be empty (the newcomer at 16:28 UTC who asked for the UTC date).
func TestReportMalaysianDays(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	rows := `{"seller_order_no":"A-1","created_at":"2026-11-25T16:28:33Z"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		asked = append(asked, q.Get("start")+".."+q.Get("end"))
		mu.Unlock()
		data := ""
		if q.Get("start") <= "2026-11-26" && q.Get("end") >= "2026-11-26" {
			data = rows
		}
		_, _ = io.WriteString(w, `{"status":"OK","stats":{"total_pages":1},"data":[`+data+`]}`)
	}))
	defer srv.Close()
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_AUTH_TOKEN", "token")
	evening := time.Date(2026, 11, 25, 16, 28, 33, 0, time.UTC) // 2026-11-26 00:28 in Malaysia
	morning := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)    // 2026-11-25 11:00 in Malaysia
	const warning = "warning: no rows. It is 2026-11-26 in Malaysia but 2026-11-25 in UTC"
	for _, tc := range []struct {
		name       string
		now        time.Time
		from, to   string
		asked      string
		rows       int
		span, warn string
	}{
		{name: "today in the evening UTC", now: evening, from: "today", to: "today", asked: "2026-11-26..2026-11-26", rows: 1,
			span: "Malaysian days (UTC+8) 2026-11-26 to 2026-11-26: from 2026-11-25 16:00 to 2026-11-26 16:00 UTC"},
		{name: "yesterday in the evening UTC", now: evening, from: "yesterday", to: "yesterday", asked: "2026-11-25..2026-11-25",
			span: "from 2026-11-24 16:00 to 2026-11-25 16:00 UTC", warn: warning},
		{name: "the UTC date in the evening UTC", now: evening, from: "2026-11-25", to: "2026-11-25", asked: "2026-11-25..2026-11-25",
			warn: warning},
		{name: "yesterday to today", now: evening, from: "yesterday", to: "today", asked: "2026-11-25..2026-11-26", rows: 1},
		{name: "today in the morning UTC", now: morning, from: "today", to: "today", asked: "2026-11-25..2026-11-25",
			span: "Malaysian days (UTC+8) 2026-11-25 to 2026-11-25"},
		{name: "yesterday in the morning UTC", now: morning, from: "yesterday", to: "today", asked: "2026-11-24..2026-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLIAt(t, tc.now, "report", "-from", tc.from, "-to", tc.to, "-format", "json")
			require.Equal(t, exitOK, code, errOut)
			require.Equal(t, tc.rows, strings.Count(out, "\n"), out)
			mu.Lock()
			require.Equal(t, tc.asked, asked[len(asked)-1])
			mu.Unlock()
			require.Contains(t, errOut, "paygate report: Malaysian days (UTC+8) ")
			require.Contains(t, errOut, tc.span)
			if tc.warn == "" {
				require.NotContains(t, errOut, "warning")
			} else {
				require.Contains(t, errOut, tc.warn)
				require.Contains(t, errOut, "-to today")
			}
		})
	}
	for _, day := range []string{"tomorrow", "Today", "2026-11-31"} {
		code, _, errOut := runCLIAt(t, evening, "report", "-from", day, "-to", "today")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, "want YYYY-MM-DD, today or yesterday (a Malaysian day)")
	}
	_, _, help := runCLI(t, "", "report", "-h")
	for _, want := range []string{"Malaysian calendar days (UTC+8)", "today or yesterday", "A-report-dates"} {
		require.Contains(t, help, want)
	}
}

// FuzzReportDay: whatever -from or -to holds, reportDay either refuses it
// or returns the start of a Malaysian day, which is the value's own date
// when the value is a date and today's or yesterday's Malaysian date for
// the words.
func FuzzReportDay(f *testing.F) {
	for _, s := range []string{"2026-11-25", "today", "yesterday", "2026-02-29", "2026-11-25T00:00", " today", "0000-01-01", ""} {
		f.Add(s, int64(1795710513)) // 2026-11-25T16:28:33Z
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		now := time.Unix(unix%(1<<36), 0)
		d, ok := reportDay(v, now)
		if !ok {
			return
		}
		myt := d.In(paygate.MalaysiaTime())
		require.Zero(t, myt.Hour()+myt.Minute()+myt.Second()+myt.Nanosecond(), "the start of a day")
		today := now.In(paygate.MalaysiaTime()).Format(time.DateOnly)
		want := map[string]string{"today": today, "yesterday": now.In(paygate.MalaysiaTime()).AddDate(0, 0, -1).Format(time.DateOnly)}[v]
		if want == "" {
			want = v
		}
		require.Equal(t, want, myt.Format(time.DateOnly))
	})
}
