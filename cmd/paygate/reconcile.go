package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/pgstore"
)

// reconcileAbout is the help text of paygate reconcile.
const reconcileAbout = `A dry run of a reconciliation, for an operator: for each awaited reference
(as the order was created: refNo, or refNo~extraData), looks the order up at
the gateway and prints its state and what CallbackHandler.Reconcile WOULD do
with it: fulfil (a success it can vouch for), hold back (with the problems),
pending, failed, not found, unknown status or error. It fulfils NOTHING and
records nothing: it runs Reconcile's own checks with hooks that only note the
verdict, one reference at a time, each as if nothing had been fulfilled yet;
with PAYGATE_DEDUPE_DSN (the merchant's pgstore database, PostgreSQL; its
table -dedupe-table) it reads, never writes, that record, and says already
fulfilled, double payment or in flight where the record says so.

References come from the arguments and from -f (a file, or - for stdin; one a
line, blank lines skipped); each is looked up once, in order. Lookups are
paced by -interval; Ctrl-C stops and prints what was checked. The table is
written at the end; CSV row by row, with a leading ' before any cell a
spreadsheet would run as a formula (-csv-raw: values exactly as sent). Exit status: 0 every lookup answered, 1 a
lookup failed (or the run was interrupted), 2 usage or configuration.`

// reconcileColumns are the columns of paygate reconcile, table and CSV.
var reconcileColumns = []string{"refNo", "orderNo", "status", "amount", "agency", "fpx_code", "would", "detail"}

// wouldDo names, for each outcome of the callback path, what a
// reconciliation would do with the order.
var wouldDo = map[paygate.Outcome]string{
	paygate.OutcomeFulfilled:        "fulfil",
	paygate.OutcomeAlreadyFulfilled: "already fulfilled",
	paygate.OutcomeDoublePayment:    "double payment",
	paygate.OutcomeHeldBack:         "hold back",
	paygate.OutcomePending:          "pending",
	paygate.OutcomeFailed:           "failed",
	paygate.OutcomeUnknownStatus:    "unknown status",
	paygate.OutcomeNotFound:         "not found",
	paygate.OutcomeInFlight:         "in flight",
	paygate.OutcomeError:            "error",
}

// runReconcile is paygate reconcile: the gateway's state of each awaited
// order and the reconciliation's verdict, without fulfilling anything.
func runReconcile(e env, args []string) int {
	fs := newFlags(e, "reconcile", "[-format table|csv] [-csv-raw] [-f FILE] [-interval D] [flags] [REFNO...]", reconcileAbout)
	format := fs.String("format", "table", "table or csv")
	raw := csvRawFlag(fs)
	file := fs.String("f", "", "read references from FILE, one a line (- for stdin)")
	interval := fs.Duration("interval", paygate.DefaultReconcileInterval, "pause between two lookups")
	table := fs.String("dedupe-table", pgstore.DefaultTable, "the pgstore table read with $"+envDedupeDSN)
	watchTable := fs.String("watch-table", pgstore.DefaultWatchTable, "the pending watch's table read with $"+envDedupeDSN+": a base REFNO it awaits as REFNO~extra is looked up so")
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if *format != "table" && *format != "csv" {
		return fail(e, "-format %q: want table or csv", *format)
	}
	if *interval < 0 {
		return fail(e, "-interval %v: want zero or more", *interval)
	}
	refs, err := readRefs(e, fs.Args(), *file)
	if err != nil {
		return fail(e, "%v", err)
	}
	if len(refs) == 0 {
		return usageError(e, fs, "want at least one REFNO (as arguments, or one a line with -f FILE)")
	}
	tap := &recordTap{next: http.DefaultTransport}
	client, err := cf.client(paygate.WithHTTPClient(&http.Client{Transport: tap}))
	if err != nil {
		return fail(e, "%v", err)
	}
	record, closeRecord, err := openRecord(e.ctx, *table)
	if err != nil {
		return fail(e, "%v", err)
	}
	defer closeRecord()
	if refs, err = createdRefs(e.ctx, refs, *watchTable); err != nil {
		return fail(e, "%v", err)
	}
	run := dryRunner{client: client, tap: tap, record: record}
	out := newReconcileWriter(e.stdout, *format, *raw)
	checked, errored, err := run.all(e.ctx, refs, *interval, out)
	if err != nil {
		return fail(e, "%v", err)
	}
	if err := out.flush(); err != nil {
		return fail(e, "writing: %v", err)
	}
	switch {
	case checked < len(refs):
		fmt.Fprintf(e.stderr, "paygate reconcile: interrupted: %d of %d references checked\n", checked, len(refs))
		return exitInvalid
	case errored > 0:
		fmt.Fprintf(e.stderr, "paygate reconcile: %d of %d lookups failed\n", errored, len(refs))
		return exitInvalid
	}
	return exitOK
}

// dryRunner is what a dry run reads: the gateway (through client, whose
// answers tap keeps) and, when given, the merchant's record (a Deduper
// that records nothing; nil: none, each reference judged as if nothing
// had been fulfilled yet).
type dryRunner struct {
	client *paygate.Client
	tap    *recordTap
	record paygate.Deduper
}

// all dry-runs each reference in turn, paced by interval, and writes its
// row; it counts the references checked and the lookups that failed. It
// stops early when ctx ends (the reference in flight is not counted) and
// at a missing credential or setting, which it returns.
func (d dryRunner) all(ctx context.Context, refs []string, interval time.Duration, out *reconcileWriter) (checked, errored int, err error) {
	for i, ref := range refs {
		if i > 0 && !pause(ctx, interval) {
			break
		}
		row, outcome, err := d.one(ctx, ref)
		if ctx.Err() != nil {
			break // interrupted mid-lookup: that reference was not checked
		}
		if errors.Is(err, paygate.ErrNoCredential) {
			return checked, errored, err
		}
		if outcome == paygate.OutcomeError {
			errored++
		}
		checked++
		out.write(row)
	}
	return checked, errored, nil
}

// readRefs gathers the references of the arguments and of file (- for
// stdin), in order, each once.
func readRefs(e env, args []string, file string) ([]string, error) {
	refs := append([]string(nil), args...)
	if file != "" {
		var r io.Reader = e.stdin
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				refs = append(refs, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("-f %s: %w", file, err)
		}
	}
	seen := make(map[string]bool, len(refs))
	out := refs[:0]
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// pause waits d, or until ctx ends; it reports whether to go on.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// one runs CallbackHandler.Reconcile on one reference with a fresh
// handler whose hooks only return (nothing of the merchant's is touched;
// its Deduper is the read-only record, or without one a fresh in-memory
// record of this reference), and returns the row to print: the record the
// lookup answered (kept by tap: one request per reference) and the
// verdict, with the outcome. err is the lookup's, if any.
func (d dryRunner) one(ctx context.Context, ref string) ([]string, paygate.Outcome, error) {
	noop := func(context.Context, *paygate.Callback) error { return nil }
	h := &paygate.CallbackHandler{
		Fulfil:          paygate.FulfilFunc(noop),
		OnStatus:        noop,
		OnDoublePayment: func(context.Context, *paygate.Callback, string) error { return nil },
		Logger:          slog.New(slog.DiscardHandler), // the verdict and problems are in the row
		Deduper:         d.record,
	}
	tap := d.tap
	tap.reset()
	rec, err := h.Reconcile(ctx, d.client, []string{ref})
	if err != nil || len(rec.Entries) != 1 {
		return []string{ref, "", "", "", "", "", wouldDo[paygate.OutcomeError], cliText(fmt.Sprint(err))}, paygate.OutcomeError, err
	}
	entry := rec.Entries[0]
	row := []string{ref, entry.OrderNo, string(entry.Status), "", "", "", wouldDo[entry.Outcome], detail(entry)}
	if entry.Amount != 0 {
		row[3] = entry.Amount.String()
	}
	if row[6] == "" {
		row[6] = string(entry.Outcome)
	}
	if p, ok := tap.record(); ok {
		row[4], row[5] = p.Agency, string(p.FPXCode)
		if row[1] == "" {
			row[1] = p.OrderNo
		}
	}
	return row, entry.Outcome, entry.Err
}

// detail says why an entry was held back or failed: its problems and its
// error, in words.
func detail(entry paygate.ReconcileEntry) string {
	var parts []string
	for _, p := range entry.Problems {
		parts = append(parts, p.Error())
	}
	if entry.Err != nil && entry.Outcome != paygate.OutcomeNotFound {
		parts = append(parts, entry.Err.Error())
	}
	if entry.Stale {
		parts = append(parts, "stale: the reference was already fulfilled")
	}
	return cliText(strings.Join(parts, "; "))
}

// recordTapLimit caps the answer a recordTap keeps; a larger one is passed
// on whole but not kept.
const recordTapLimit = 1 << 20

// recordTap is the CLI Client's transport: it passes every request on and
// keeps the last 2xx answer's body, so that the dry run shows the record
// Reconcile judged (agency, FPX code) without a second lookup.
type recordTap struct {
	next http.RoundTripper
	mu   sync.Mutex
	body []byte
}

// RoundTrip sends r and keeps a copy of a 2xx answer's body up to
// recordTapLimit.
func (t *recordTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, recordTapLimit+1))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if len(head) <= recordTapLimit {
		t.mu.Lock()
		t.body = head
		t.mu.Unlock()
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return resp, nil
}

// reset forgets the kept answer.
func (t *recordTap) reset() {
	t.mu.Lock()
	t.body = nil
	t.mu.Unlock()
}

// record is the kept answer's fpxrequest record, typed; ok is false when
// there is none or it does not decode.
func (t *recordTap) record() (paygate.PaymentRecord, bool) {
	t.mu.Lock()
	body := t.body
	t.mu.Unlock()
	var a struct {
		FPXRequest json.RawMessage `json:"fpxrequest"`
	}
	if body == nil || json.Unmarshal(body, &a) != nil || len(a.FPXRequest) == 0 {
		return paygate.PaymentRecord{}, false
	}
	p, err := (&paygate.OrderRecord{Raw: a.FPXRequest}).Payment()
	return p, err == nil
}

// reconcileWriter writes the rows as an aligned table (at flush) or as CSV
// (row by row).
type reconcileWriter struct {
	csv   *csvWriter
	table *tabwriter.Writer
	err   error
}

// newReconcileWriter writes the header in format to w; raw: CSV cells as
// sent, not spreadsheetSafe.
func newReconcileWriter(w io.Writer, format string, raw bool) *reconcileWriter {
	rw := &reconcileWriter{}
	if format == "csv" {
		rw.csv = newCSVWriter(w, raw)
	} else {
		rw.table = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	}
	rw.write(reconcileColumns)
	return rw
}

// write adds one row; CSV is flushed at once, so that an interrupted run
// has written every row checked.
func (rw *reconcileWriter) write(row []string) {
	if rw.err != nil {
		return
	}
	if rw.csv != nil {
		if rw.err = rw.csv.Write(row); rw.err == nil {
			rw.csv.Flush()
			rw.err = rw.csv.Error()
		}
		return
	}
	cells := make([]string, len(row))
	for i, c := range row {
		cells[i] = strings.Map(func(r rune) rune { // one line per row: no tab or newline inside a cell
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, c)
		if cells[i] == "" {
			cells[i] = "-"
		}
	}
	_, rw.err = fmt.Fprintln(rw.table, strings.Join(cells, "\t"))
}

// flush writes the table out and returns the first write error.
func (rw *reconcileWriter) flush() error {
	if rw.table != nil && rw.err == nil {
		rw.err = rw.table.Flush()
	}
	return rw.err
}
