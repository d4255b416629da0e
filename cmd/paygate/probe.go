package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/paygate-go/paygate/probe"
)

// probeInterval is the least time between the probe's requests (tests
// shorten it).
var probeInterval = probe.DefaultInterval

// runProbe checks the SDK's documented guesses against the service and
// writes the report to a file (docs/calling-the-gateway.md "Before going
// live: paygate probe").
func runProbe(e env, args []string) int {
	fs := newFlags(e, "probe", "[flags]",
		"Checks each assumption of docs/assumptions.md against the service, without moving money: read-only requests, and with -create "+
			"orders at RM 1.00 under references named PROBE-<run>-<n>, never paid. At most 2 requests a second. Writes a report, per "+
			"assumption ID: holds, differs (what it saw) or cannot be checked from here (why). Exit status 1 when any assumption differs.")
	cf := addClientFlags(fs)
	create := fs.Bool("create", false, "also run the checks that create orders (RM 1.00 each, never paid)")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	out := fs.String("o", "", "report file (default paygate-probe-<run>.txt or .json in the current directory; - for standard output)")
	since := fs.String("since", "", "first day of the report range read, YYYY-MM-DD (default 7 days ago)")
	prefix := fs.String("ref-prefix", "PROBE-", "start of every reference the probe creates or looks up")
	email := fs.String("email", "", "buyer e-mail of created orders and of the transaction history read (default probe@example.com)")
	returnURL := fs.String("return-url", "", "returnUrl of created orders (default https://example.com/paygate-probe)")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (probe takes flags only)", fs.Arg(0))
	}
	opts := probe.Options{Create: *create, RefPrefix: *prefix, Email: *email, ReturnURL: *returnURL, Interval: probeInterval, Now: e.clock}
	if *since != "" {
		t, err := time.Parse(time.DateOnly, *since)
		if err != nil {
			return usageError(e, fs, "-since %q: want YYYY-MM-DD", *since)
		}
		opts.Since = t
	}
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	rep, err := probe.Run(e.ctx, client, opts)
	if rep == nil {
		return fail(e, "%v", err)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "paygate probe: stopped: %v; the report names what was checked\n", err)
	}
	path := *out
	if path == "" {
		path = "paygate-probe-" + rep.RunID + map[bool]string{false: ".txt", true: ".json"}[*asJSON]
	}
	if werr := writeProbeReport(e, path, rep, *asJSON); werr != nil {
		return fail(e, "writing the report: %v", werr)
	}
	if path != "-" {
		fmt.Fprintf(e.stdout, "%d holds, %d differs, %d cannot be checked from here; %d requests; report: %s\n",
			rep.Count(probe.Holds), rep.Count(probe.Differs), rep.Count(probe.Unchecked), rep.Requests, path)
	}
	switch {
	case err != nil:
		return exitUsage
	case rep.Differs():
		return exitInvalid
	}
	return exitOK
}

// writeProbeReport writes rep to path ("-": standard output), as text or
// JSON.
func writeProbeReport(e env, path string, rep *probe.Report, asJSON bool) (err error) {
	var w io.Writer = e.stdout
	if path != "-" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		w = f
	}
	if asJSON {
		return rep.WriteJSON(w)
	}
	return rep.WriteText(w)
}
