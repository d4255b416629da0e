package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/skew"
)

// runPing checks that the service answers: its echo (the health check,
// Client.Echo) and, for information, its version (Client.Version). It
// sends no credential.
func runPing(e env, args []string) int {
	fs := newFlags(e, "ping", "[flags]", "Checks that the reports host answers: GET /api/echo (the health check) and /api/version, and shows how far its clock (Date header) is from this machine's. No credential is sent.")
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (ping takes flags only)", fs.Arg(0))
	}
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	start := time.Now()
	echo, err := client.Echo(e.ctx)
	if errors.Is(err, paygate.ErrNoCredential) {
		return fail(e, "%v", err)
	}
	if err != nil {
		return failed(e, "ping", err)
	}
	fmt.Fprintf(e.stdout, "echo: ok in %s: %s\n", time.Since(start).Round(time.Millisecond), oneLine(echo))
	fmt.Fprintf(e.stdout, "clock: %s\n", clockLine(client.ClockOffset()))
	if v, err := client.Version(e.ctx); err != nil {
		fmt.Fprintf(e.stdout, "version: unavailable (%s)\n", cliText(err.Error()))
	} else {
		fmt.Fprintf(e.stdout, "version: %s\n", oneLine(v))
	}
	return exitOK
}

// clockLine describes the service's clock offset as its Date header
// showed it, and what signing does with it (docs/assumptions.md
// A-clock-skew).
func clockLine(offset time.Duration, measured bool) string {
	side, signed := "ahead of", "+"+offset.String()
	if offset < 0 {
		side, signed = "behind", offset.String()
	}
	what := fmt.Sprintf("offset %s: the service's clock is %v %s this machine's (Date header)", signed, offset.Abs(), side)
	switch {
	case !measured:
		return "offset unknown: the answer carried no Date header; signatures are dated on this machine's clock"
	case offset.Abs() < skew.Min:
		return fmt.Sprintf("offset %s: in step with the service (within %v); signatures are dated on this machine's clock", signed, skew.Min)
	case offset.Abs() > skew.Max:
		return what + fmt.Sprintf(", more than the %v the client corrects for: set this machine's clock", skew.Max)
	}
	return what + "; signatures are dated on the service's clock"
}

// oneLine cuts an answer to its first line and 200 bytes, for a terminal.
func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			s = s[:i]
			break
		}
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
