package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// reconcileSandbox is a sandbox holding a paid order (PAID-1~cart), one
// paid but settling late, so pending (LATE-1~cart), a declined one
// (FAIL-1~cart) and a paid one without extra reference (BARE-1). It returns
// each order's number by reference.
func reconcileSandbox(t *testing.T) (*gatewaytest.Server, map[string]string) {
	t.Helper()
	shop := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(shop.Close)
	sb := useSandbox(t, gatewaytest.WithLateSettlement(time.Hour, func(ref string) bool { return ref == "LATE-1~cart" }))
	client, err := sb.Client()
	require.NoError(t, err)
	for _, o := range []struct {
		ref, extra string
		status     paygate.Status
	}{
		{ref: "PAID-1", extra: "cart", status: paygate.StatusSuccess},
		{ref: "LATE-1", extra: "cart", status: paygate.StatusSuccess},
		{ref: "FAIL-1", extra: "cart", status: paygate.StatusFailed},
		{ref: "BARE-1", extra: "", status: paygate.StatusSuccess},
	} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: o.ref, ExtraData: o.extra, Amount: 2590, Email: "a@example.com", ReturnURL: shop.URL})
		require.NoError(t, err)
		require.NoError(t, sb.Pay(o.ref, o.status))
	}
	orderNos := map[string]string{}
	for _, o := range sb.Orders() {
		orderNos[o.RefNo] = o.OrderNo
	}
	return sb, orderNos
}

// A dry run against the sandbox: each state, in a table and in CSV, with
// nothing fulfilled and no secret printed.
func TestReconcileDryRun(t *testing.T) {
	sb, no := reconcileSandbox(t)
	want := [][]string{
		reconcileColumns,
		{"PAID-1~cart", no["PAID-1~cart"], "success", "25.90", sb.Agency, "00", "fulfil", ""},
		{"LATE-1~cart", no["LATE-1~cart"], "pending", "25.90", sb.Agency, "09", "pending", ""},
		{"FAIL-1~cart", no["FAIL-1~cart"], "failed", "25.90", sb.Agency, "51", "failed", ""},
		{"NOPE-1", "", "", "", "", "", "not found", ""},
		{"BARE-1", no["BARE-1"], "success", "25.90", sb.Agency, "00", "fulfil", ""},
	}
	refs := []string{"PAID-1~cart", "LATE-1~cart", "FAIL-1~cart", "NOPE-1", "BARE-1"}
	file := filepath.Join(t.TempDir(), "refs.txt")
	require.NoError(t, os.WriteFile(file, []byte("FAIL-1~cart\n\nNOPE-1\nPAID-1~cart\n BARE-1 \n"), 0o600))
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{name: "arguments, table", stdin: "", args: append([]string{"reconcile", "-interval", "0"}, refs...)},
		{name: "arguments, csv", stdin: "", args: append([]string{"reconcile", "-interval", "0", "-format", "csv"}, refs...)},
		{name: "stdin and arguments, csv", stdin: "LATE-1~cart\nFAIL-1~cart\r\nNOPE-1\n\nBARE-1\n",
			args: []string{"reconcile", "-format", "csv", "-interval", "1ms", "-f", "-", "PAID-1~cart"}},
		{name: "file, a repeat checked once, table", stdin: "", args: []string{"reconcile", "-interval", "0", "-f", file, "PAID-1~cart", "LATE-1~cart"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.stdin, tc.args...)
			require.Equal(t, exitOK, code, errOut)
			var got [][]string
			if strings.Contains(tc.name, "csv") {
				got, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				require.NoError(t, err, out)
				require.ElementsMatch(t, want, got)
				require.Equal(t, reconcileColumns, got[0], "the header first")
			} else {
				got = tableRows(out)
				require.ElementsMatch(t, want, got, out)
				require.Equal(t, reconcileColumns, got[0], "the header first")
			}
			for _, secret := range []string{sb.AuthToken, sb.APIKey, sb.WebhookPassword} {
				require.NotContains(t, out+errOut, secret)
			}
		})
	}
	// The order of the table follows the input, one row per reference.
	code, out, _ := runCLI(t, "", "reconcile", "-interval", "0", "-f", file, "PAID-1~cart")
	require.Equal(t, exitOK, code)
	var firsts []string
	for _, row := range tableRows(out)[1:] {
		firsts = append(firsts, row[0])
	}
	require.Equal(t, []string{"PAID-1~cart", "FAIL-1~cart", "NOPE-1", "BARE-1"}, firsts)
}

// tableRows reads the table back: columns are two or more spaces apart,
// and "-" is an empty cell.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells := regexp.MustCompile(`  +`).Split(line, -1)
		for i, c := range cells {
			if c == "-" {
				cells[i] = ""
			}
		}
		rows = append(rows, cells)
	}
	return rows
}

// fakeReports is a reports host answering each reference's lookup from
// answers (status code and body; 404 for any other), at most limit
// requests, and calling onRequest with the count so far.
func fakeReports(t *testing.T, answers map[string][2]string, limit int32, onRequest func(n int32)) string {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		if k > limit {
			t.Errorf("fake reports host: request %d past the bound of %d", k, limit)
			http.Error(w, "request bound", http.StatusTeapot)
			return
		}
		if onRequest != nil {
			onRequest(k)
		}
		a, ok := answers[r.URL.Query().Get("refno")]
		if !ok {
			a = [2]string{"404", `{"status":"NOT_FOUND","fpxrequest":null}`}
		}
		w.Header().Set("Content-Type", "application/json")
		code := map[string]int{"200": 200, "400": 400, "404": 404}[a[0]]
		w.WriteHeader(code)
		_, _ = w.Write([]byte(a[1]))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("PAYGATE_REPORTS_URL", srv.URL)
	t.Setenv("PAYGATE_CHECKOUT_URL", srv.URL)
	t.Setenv("PAYGATE_AGENCY", "AG01")
	t.Setenv("PAYGATE_AUTH_TOKEN", "tok-secret-123")
	t.Setenv("PAYGATE_API_KEY", "")
	return srv.URL
}

// Records a reconciliation would not act on are held back with their
// problems; a failed lookup is an error and the exit status says so.
func TestReconcileHoldBackAndErrors(t *testing.T) {
	fakeReports(t, map[string][2]string{
		"GOOD-1":  {"200", `{"status":"OK","fpxrequest":{"seller_order_no":"GOOD-1","order_no":"O1","agency":"AG01","amount":"10.00","status":"success","fpx_debit_auth_code":"00"}}`},
		"AMT-1":   {"200", `{"status":"OK","fpxrequest":{"seller_order_no":"AMT-1","order_no":"O2","agency":"AG01","amount":"ten","status":"success","fpx_debit_auth_code":"00"}}`},
		"OTHER-1": {"200", `{"status":"OK","fpxrequest":{"seller_order_no":"OTHER-1","order_no":"O3","agency":"AG99","amount":"10.00","status":"success","fpx_debit_auth_code":"00"}}`},
		"ODD-1":   {"200", `{"status":"OK","fpxrequest":{"seller_order_no":"ODD-1","order_no":"O4","agency":"AG01","amount":"10.00","status":"SUCCESS","fpx_debit_auth_code":"00"}}`},
		"BAD-1":   {"400", `{"status":"ERROR","error":"bad request"}`},
	}, 20, nil)
	code, out, errOut := runCLI(t, "", "reconcile", "-interval", "0", "-format", "csv", "GOOD-1", "AMT-1", "OTHER-1", "ODD-1", "BAD-1")
	require.Equal(t, exitInvalid, code, "a lookup failed: %s", errOut)
	require.Contains(t, errOut, "1 of 5 lookups failed")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 6, out)
	would := map[string]string{}
	details := map[string]string{}
	for _, r := range rows[1:] {
		would[r[0]], details[r[0]] = r[6], r[7]
	}
	require.Equal(t, map[string]string{"GOOD-1": "fulfil", "AMT-1": "hold back", "OTHER-1": "hold back", "ODD-1": "hold back", "BAD-1": "error"}, would)
	require.Contains(t, details["AMT-1"], "amount")
	require.Contains(t, details["OTHER-1"], "agency")
	require.Contains(t, details["ODD-1"], "status")
	require.Contains(t, details["BAD-1"], "400")
	require.Equal(t, []string{"OTHER-1", "O3", "success", "10.00", "AG99", "00", "hold back"}, rows[3][:7], "the record's agency is shown")
	require.NotContains(t, out+errOut, "tok-secret-123")
}

// The CSV of a dry run puts a ' before every cell a spreadsheet would run
// as a formula, from the service or the operator alike, and leaves plain
// numbers as sent; -csv-raw writes every value exactly as sent. The table
// is for a terminal and is as sent.
func TestReconcileCSVFormulas(t *testing.T) {
	const link = `=HYPERLINK("http://evil","x")`
	fakeReports(t, map[string][2]string{
		"=EVIL-1": {"200", `{"status":"OK","fpxrequest":{"seller_order_no":"=EVIL-1","order_no":"=HYPERLINK(\"http://evil\",\"x\")","agency":"@SUM(A1)","amount":"10.00","status":"success","fpx_debit_auth_code":"-1"}}`},
	}, 3, nil)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "safe by default", args: []string{"-format", "csv"}, want: []string{"'=EVIL-1", "'" + link, "success", "10.00", "'@SUM(A1)", "-1"}},
		{name: "-csv-raw", args: []string{"-format", "csv", "-csv-raw"}, want: []string{"=EVIL-1", link, "success", "10.00", "@SUM(A1)", "-1"}},
		{name: "table", want: []string{"=EVIL-1", link, "success", "10.00", "@SUM(A1)", "-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append(append([]string{"reconcile", "-interval", "0"}, tc.args...), "=EVIL-1")...)
			require.Equal(t, exitOK, code, errOut)
			rows := tableRows(out)
			if len(tc.args) > 0 {
				var err error
				rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
				require.NoError(t, err, out)
			}
			require.Len(t, rows, 2, out)
			require.Equal(t, reconcileColumns, rows[0])
			require.Equal(t, tc.want, rows[1][:6], out)
		})
	}
	_, _, help := runCLI(t, "", "reconcile", "-h")
	require.Contains(t, help, "-csv-raw")
}

// Ctrl-C stops the run between lookups: what was checked is printed, and
// the exit status says the run is incomplete.
func TestReconcileStopsOnInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fakeReports(t, map[string][2]string{
		"A-1": {"200", `{"status":"OK","fpxrequest":{"seller_order_no":"A-1","order_no":"O1","agency":"AG01","amount":"10.00","status":"pending","fpx_debit_auth_code":"09"}}`},
	}, 1, func(n int32) {
		if n == 1 {
			cancel() // the operator's Ctrl-C, during the first lookup's answer
		}
	})
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- dispatch(env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errOut},
			[]string{"reconcile", "-interval", "1h", "-format", "csv", "A-1", "B-1", "C-1"})
	}()
	select {
	case code := <-done:
		require.Equal(t, exitInvalid, code)
	case <-time.After(5 * time.Second):
		t.Fatal("reconcile did not stop within 5s of its context's end (a 1h -interval must not be waited out)")
	}
	require.Contains(t, errOut.String(), "interrupted")
	require.NotContains(t, out.String(), "B-1", "nothing looked up after the interrupt")
}

// Usage and configuration errors are exit status 2 and name what to fix;
// -h says it is a dry run.
func TestReconcileUsage(t *testing.T) {
	fakeReports(t, nil, 0, nil)
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{name: "help", args: []string{"reconcile", "-h"}, code: exitOK, err: "fulfils NOTHING"},
		{name: "no reference", args: []string{"reconcile"}, code: exitUsage, err: "usage: paygate reconcile"},
		{name: "format", args: []string{"reconcile", "-format", "xml", "A"}, code: exitUsage, err: `-format "xml": want table or csv`},
		{name: "interval", args: []string{"reconcile", "-interval", "-1s", "A"}, code: exitUsage, err: "-interval -1s: want zero or more"},
		{name: "missing file", args: []string{"reconcile", "-f", "/nonexistent/refs", "A"}, code: exitUsage, err: "/nonexistent/refs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			require.Equal(t, tc.code, code, errOut)
			require.Contains(t, errOut, tc.err)
		})
	}
	t.Setenv("PAYGATE_AUTH_TOKEN", "")
	code, _, errOut := runCLI(t, "", "reconcile", "A")
	require.Equal(t, exitUsage, code, errOut)
	require.Contains(t, errOut, "PAYGATE_AUTH_TOKEN")
}
