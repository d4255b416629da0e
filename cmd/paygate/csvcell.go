package main

import (
	"encoding/csv"
	"flag"
	"io"
	"strings"
)

// formulaStart lists the first bytes that make a spreadsheet (Excel,
// LibreOffice Calc, Google Sheets) read a CSV cell as a formula, which
// can fetch a URL or run a command when a finance user opens the file
// (OWASP "CSV Injection"): =, +, -, @, TAB and CR.
const formulaStart = "=+-@\t\r"

// spreadsheetSafe returns cell as a spreadsheet shows it without running
// it: a cell that begins with a byte of formulaStart gets a leading '
// (which spreadsheets read as "text follows"), unless it is a plain number
// (-5.00, +60123456789: plainNumber), which a spreadsheet reads as a
// number, with no function or reference in it to run, and which finance
// sums as such. Every other cell is as sent.
func spreadsheetSafe(cell string) string {
	if cell == "" || strings.IndexByte(formulaStart, cell[0]) < 0 || plainNumber(cell) {
		return cell
	}
	return "'" + cell
}

// plainNumber reports whether s is a plain decimal number,
// ^[+-]?[0-9]+(\.[0-9]+)?$: an optional sign, digits, and an optional
// fraction of at least one digit (no exponent, no space).
func plainNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	return allDigits(whole) && (!dot || allDigits(frac))
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// csvWriter is a csv.Writer whose cells are spreadsheetSafe, unless raw
// (-csv-raw: every value exactly as sent).
type csvWriter struct {
	*csv.Writer
	raw bool
	rec []string // the safe cells of the record being written, reused
}

// newCSVWriter writes CSV to w, spreadsheetSafe unless raw.
func newCSVWriter(w io.Writer, raw bool) *csvWriter {
	return &csvWriter{Writer: csv.NewWriter(w), raw: raw}
}

// Write writes one record (a header too: its names come from the service
// as well).
func (w *csvWriter) Write(rec []string) error {
	if w.raw {
		return w.Writer.Write(rec)
	}
	w.rec = w.rec[:0]
	for _, c := range rec {
		w.rec = append(w.rec, spreadsheetSafe(c))
	}
	return w.Writer.Write(w.rec)
}

// csvRawFlag adds -csv-raw to fs, the switch that turns spreadsheetSafe
// off.
func csvRawFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("csv-raw", false, "write CSV cells exactly as sent; by default a cell a spreadsheet would run as a formula "+
		"(one that begins with =, +, -, @, TAB or CR and is not a plain number such as -5.00 or +60123456789) gets a leading '")
}
