package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/paygate-go/paygate"
)

// runReport writes the payment report for a date range, from the
// configuration in PAYGATE_* variables.
func runReport(e env, args []string) int {
	fs := newFlags(e, "report", "-from YYYY-MM-DD -to YYYY-MM-DD [-approved] [-format csv|json]",
		"Writes the payment report (docs/protocol.md endpoint 4) for a date range to standard output, page by page.")
	from := fs.String("from", "", "first day, YYYY-MM-DD")
	to := fs.String("to", "", "last day, YYYY-MM-DD")
	approved := fs.Bool("approved", false, "approved payments only")
	format := fs.String("format", "csv", "csv (columns from the first row) or json (one row per line)")
	items := fs.Int("items", 100, "rows per page")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	q := paygate.ReportQuery{ApprovedOnly: *approved, ItemsPerPage: *items}
	for _, d := range []struct {
		flag, v string
		dst     *time.Time
	}{{"-from", *from, &q.Start}, {"-to", *to, &q.End}} {
		if d.v == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.v)
		if err != nil {
			return fail(e, "%s %q: want YYYY-MM-DD", d.flag, d.v)
		}
		*d.dst = t
	}
	if *format != "csv" && *format != "json" {
		return fail(e, "-format %q: want csv or json", *format)
	}
	client, err := paygate.NewClientFromEnv()
	if err != nil {
		return fail(e, "%v", err)
	}
	w := csv.NewWriter(e.stdout)
	var header []string
	n := 0
	for row, err := range client.Payments(e.ctx, q) {
		if err != nil {
			w.Flush()
			fmt.Fprintln(e.stderr, "paygate report:", err)
			return exitInvalid
		}
		n++
		if e.stderrIsTerminal && n%100 == 0 {
			fmt.Fprintf(e.stderr, "\r%d rows", n)
		}
		if *format == "json" {
			fmt.Fprintln(e.stdout, string(row.Raw()))
			continue
		}
		var m map[string]any
		if err := row.Decode(&m); err != nil {
			return fail(e, "row %d is not a JSON object: %v", n, err)
		}
		if header == nil {
			for k := range m {
				header = append(header, k)
			}
			slices.Sort(header)
			_ = w.Write(header)
		}
		rec := make([]string, len(header))
		for i, k := range header {
			if v, ok := m[k]; ok && v != nil {
				if s, isStr := v.(string); isStr {
					rec[i] = s
				} else {
					b, _ := json.Marshal(v)
					rec[i] = string(b)
				}
			}
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if e.stderrIsTerminal {
		fmt.Fprintf(e.stderr, "\r%d rows\n", n)
	}
	if err := w.Error(); err != nil {
		return fail(e, "writing: %v", err)
	}
	return exitOK
}

// runLookup prints one order's record as JSON.
func runLookup(e env, args []string) int {
	fs := newFlags(e, "lookup", "REFNO", "Looks up one order by the merchant's reference (docs/protocol.md endpoint 5) and prints its record.")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	client, err := paygate.NewClientFromEnv()
	if err != nil {
		return fail(e, "%v", err)
	}
	rec, err := client.LookupOrder(e.ctx, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(e.stderr, "paygate lookup:", err)
		return exitInvalid
	}
	var v any
	if err := rec.Decode(&v); err != nil {
		return fail(e, "%v", err)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(e.stdout, string(out))
	return exitOK
}
