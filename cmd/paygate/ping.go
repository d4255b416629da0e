package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/paygate-go/paygate"
)

// runPing checks that the service answers: its echo (the health check,
// Client.Echo) and, for information, its version (Client.Version). It
// sends no credential.
func runPing(e env, args []string) int {
	fs := newFlags(e, "ping", "[flags]", "Checks that the reports host answers: GET /api/echo (the health check) and /api/version. No credential is sent.")
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
	if v, err := client.Version(e.ctx); err != nil {
		fmt.Fprintf(e.stdout, "version: unavailable (%s)\n", cliText(err.Error()))
	} else {
		fmt.Fprintf(e.stdout, "version: %s\n", oneLine(v))
	}
	return exitOK
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
