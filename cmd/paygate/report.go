package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// runReport writes the payment report for a date range, from the
// configuration in PAYGATE_* variables.
func runReport(e env, args []string) int {
	fs := newFlags(e, "report", "-from DAY -to DAY [-approved] [-format csv|json] [-csv-raw] [flags]",
		"Writes the payment report (docs/protocol.md endpoint 4) for a date range to standard output, page by page.\n"+
			"The days are Malaysian calendar days (UTC+8), as the service reads them (docs/assumptions.md A-report-dates):\n"+
			"a day runs from 16:00 UTC the day before to 16:00 UTC, so a payment at 16:28 UTC on the 25th is on the 26th.\n"+
			"DAY is YYYY-MM-DD, today or yesterday (in Malaysia). The UTC span asked for is printed on standard error.")
	from := fs.String("from", "", "first day, YYYY-MM-DD, today or yesterday; a Malaysian day (required)")
	to := fs.String("to", "", "last day, YYYY-MM-DD, today or yesterday; a Malaysian day (required)")
	approved := fs.Bool("approved", false, "approved payments only")
	format := fs.String("format", "csv", "csv (every row's fields as columns, values as sent but for -csv-raw) or json (one row per line)")
	raw := csvRawFlag(fs)
	items := fs.Int("items", 100, "rows per page (-1: every row in one answer)")
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if st, missing := missingFlags(e, fs, "from", "to"); missing {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (flags come before arguments)", fs.Arg(0))
	}
	now := e.clock()
	q := paygate.ReportQuery{ApprovedOnly: *approved, ItemsPerPage: *items}
	for _, d := range []struct {
		flag, v string
		dst     *time.Time
	}{{"-from", *from, &q.Start}, {"-to", *to, &q.End}} {
		t, ok := reportDay(d.v, now)
		if !ok {
			return fail(e, "%s %q: want YYYY-MM-DD, today or yesterday (a Malaysian day)", d.flag, d.v)
		}
		*d.dst = t
	}
	write, ok := map[string]func(iter.Seq2[paygate.ReportRow, error]) int{
		"csv":  func(rows iter.Seq2[paygate.ReportRow, error]) int { return writeCSV(e, rows, *raw) },
		"json": func(rows iter.Seq2[paygate.ReportRow, error]) int { return writeJSON(e, rows) },
	}[*format]
	if !ok {
		return fail(e, "-format %q: want csv or json", *format)
	}
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	fmt.Fprintln(e.stderr, "paygate report: "+reportSpan(q.Start, q.End))
	n := 0
	st := write(counted(client.Payments(e.ctx, q), &n))
	if w := emptyWindowWarning(now); st == exitOK && n == 0 && w != "" {
		fmt.Fprintln(e.stderr, "paygate report: warning: "+w)
	}
	return st
}

// reportDays are the words -from and -to take for a day, each the offset
// in days from today's Malaysian date.
var reportDays = map[string]int{"today": 0, "yesterday": -1}

// reportDay reads a -from or -to value, YYYY-MM-DD or a word of
// reportDays, as the start of that Malaysian calendar day; now is the
// clock the words are read by.
func reportDay(v string, now time.Time) (time.Time, bool) {
	myt := paygate.MalaysiaTime()
	if off, ok := reportDays[v]; ok {
		y, m, d := now.In(myt).Date()
		return time.Date(y, m, d+off, 0, 0, 0, 0, myt), true
	}
	t, err := time.ParseInLocation(time.DateOnly, v, myt)
	return t, err == nil
}

// reportSpan says which Malaysian days first to last (each the start of
// its day) cover, and the UTC instants they run between.
func reportSpan(first, last time.Time) string {
	const utc = "2006-01-02 15:04"
	return fmt.Sprintf("Malaysian days (UTC+8) %s to %s: from %s to %s UTC",
		first.Format(time.DateOnly), last.Format(time.DateOnly),
		first.UTC().Format(utc), last.AddDate(0, 0, 1).UTC().Format(utc))
}

// emptyWindowWarning is what a report that returned no rows says when now
// falls where the UTC and the Malaysian dates differ (16:00 to 24:00 UTC),
// the hours in which a UTC date asked for is not today's Malaysian date;
// "" otherwise.
func emptyWindowWarning(now time.Time) string {
	utc, myt := now.UTC().Format(time.DateOnly), now.In(paygate.MalaysiaTime()).Format(time.DateOnly)
	if utc == myt {
		return ""
	}
	return fmt.Sprintf("no rows. It is %s in Malaysia but %s in UTC: the report's days are Malaysian, so a payment made "+
		"after 16:00 UTC (created_at %sT16:00:00Z or later) is on %s; -to today asks for the Malaysian date", myt, utc, utc, myt)
}

// counted yields rows and counts those without an error into *n.
func counted(rows iter.Seq2[paygate.ReportRow, error], n *int) iter.Seq2[paygate.ReportRow, error] {
	return func(yield func(paygate.ReportRow, error) bool) {
		for row, err := range rows {
			if err == nil {
				*n++
			}
			if !yield(row, err) {
				return
			}
		}
	}
}

// writeJSON writes the rows as JSON lines, each as the service sent it.
func writeJSON(e env, rows iter.Seq2[paygate.ReportRow, error]) int {
	return writeRows(e, rows, func(row paygate.ReportRow) error {
		_, err := fmt.Fprintln(e.stdout, string(row.Raw()))
		return err
	})
}

// writeRows feeds every row to write, with a progress line on a terminal.
// A report error is exit 1; a write error exit 2. A report whose rows all
// came but whose stats.total_pages was wrong (paygate.ErrReportPastTotalPages)
// is written whole, with a warning on stderr.
func writeRows(e env, rows iter.Seq2[paygate.ReportRow, error], write func(paygate.ReportRow) error) int {
	n := 0
	for row, err := range rows {
		switch {
		case errors.Is(err, paygate.ErrNoCredential):
			return fail(e, "%v", err) // configuration: exit 2
		case errors.Is(err, paygate.ErrReportPastTotalPages):
			fmt.Fprintln(e.stderr, "paygate report: warning: "+cliText(err.Error()))
			continue // the last thing the walk yields
		case err != nil:
			return failed(e, "report", err)
		}
		if err := write(row); err != nil {
			return fail(e, "writing: %v", err)
		}
		if n++; e.stderrIsTerminal && n%100 == 0 {
			fmt.Fprintf(e.stderr, "\r%d rows", n)
		}
	}
	if e.stderrIsTerminal {
		fmt.Fprintf(e.stderr, "\r%d rows\n", n)
	}
	return exitOK
}

// writeCSV writes the rows as CSV whose header is the union of every row's
// fields, sorted, and whose values are the JSON values byte for byte: a
// string's text, any other value (a number such as 10.50 or
// 2611220346460000017, true, an object) as it was sent, null as empty;
// unless raw, a cell a spreadsheet would run as a formula gets a leading '
// (spreadsheetSafe). The rows are spooled to a temporary file while the
// header is collected, so memory stays at one page whatever the report's
// size.
func writeCSV(e env, rows iter.Seq2[paygate.ReportRow, error], raw bool) int {
	spool, err := os.CreateTemp("", "paygate-report-*.jsonl")
	if err != nil {
		return fail(e, "spooling the report: %v", err)
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	out := bufio.NewWriter(spool)
	columns := map[string]bool{}
	n := 0
	st := writeRows(e, rows, func(row paygate.ReportRow) error {
		n++
		var m map[string]json.RawMessage
		if err := row.Decode(&m); err != nil {
			return fmt.Errorf("row %d is not a JSON object: %w", n, err)
		}
		for k := range m {
			columns[k] = true
		}
		_, err := out.Write(append(row.Raw(), '\n'))
		return err
	})
	if st != exitOK {
		return st
	}
	if err := out.Flush(); err != nil {
		return fail(e, "spooling the report: %v", err)
	}
	header := slices.Sorted(maps.Keys(columns))
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return fail(e, "spooling the report: %v", err)
	}
	w := newCSVWriter(e.stdout, raw)
	if len(header) > 0 {
		_ = w.Write(header)
	}
	in := bufio.NewScanner(spool)
	in.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for in.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			return fail(e, "reading the spool: %v", err)
		}
		rec := make([]string, len(header))
		for i, k := range header {
			rec[i] = csvValue(m[k])
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := errors.Join(in.Err(), w.Error()); err != nil {
		return fail(e, "writing: %v", err)
	}
	return exitOK
}

// csvValue is a JSON value as a CSV cell: a string's text, null or absent
// as empty, anything else as sent.
func csvValue(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// runLookup prints one order's record as JSON.
func runLookup(e env, args []string) int {
	fs := newFlags(e, "lookup", "[-by refno|seller] [flags] REFERENCE", "Looks up one order (docs/protocol.md endpoint 5) and prints its record. By default REFERENCE is the refNo the order was created with (refNo~extra), what a merchant reconciling a payment holds; -by seller looks up the gateway's fpx_seller_order_no.")
	by := fs.String("by", "refno", "refno: by the refNo the order was created with (refNo~extra); seller: by fpx_seller_order_no")
	watchTable := fs.String("watch-table", pgstore.DefaultWatchTable, "the pending watch's table read with $"+envDedupeDSN+": a base refNo it awaits as refNo~extra is looked up so")
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if *by != "seller" && *by != "refno" {
		return fail(e, "-by %q: want seller or refno", *by)
	}
	if fs.NArg() != 1 {
		return usageError(e, fs, "want one REFERENCE, got %d arguments", fs.NArg())
	}
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	lookup, refs := client.LookupOrder, fs.Args()
	if *by == "refno" {
		lookup = client.LookupOrderByRefNo
		if refs, err = createdRefs(e.ctx, refs, *watchTable); err != nil {
			return fail(e, "%v", err)
		}
	}
	rec, err := lookup(e.ctx, refs[0])
	if errors.Is(err, paygate.ErrNoCredential) {
		return fail(e, "%v", err)
	}
	if err != nil {
		return failed(e, "lookup", err)
	}
	var v any
	if err := rec.Decode(&v); err != nil {
		return fail(e, "%v", err)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(e.stdout, string(out))
	return exitOK
}
