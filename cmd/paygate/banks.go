package main

import (
	"errors"
	"strconv"

	"github.com/paygate-go/paygate"
)

// runBanks prints the FPX bank list of a channel (Client.Banks) as CSV:
// code, name, status, online.
func runBanks(e env, args []string) int {
	fs := newFlags(e, "banks", "[-b2b] [flags]",
		"Prints the FPX banks of the retail channel (B2C), or with -b2b the corporate one, as CSV: code, name, status, online.\n"+
			"GET /api/v1/fpx/banklist/{b2c|b2b} on the reports host, with PAYGATE_AUTH_TOKEN or else PAYGATE_API_KEY and PAYGATE_AGENCY.\n"+
			"The endpoint is not in the protocol document (docs/assumptions.md A-banklist).")
	b2b := fs.Bool("b2b", false, "the corporate channel (FPX B2B) instead of the retail one")
	raw := csvRawFlag(fs)
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (banks takes flags only)", fs.Arg(0))
	}
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	channel := paygate.BankChannelB2C
	if *b2b {
		channel = paygate.BankChannelB2B
	}
	banks, err := client.Banks(e.ctx, channel)
	if errors.Is(err, paygate.ErrNoCredential) {
		return fail(e, "%v", err)
	}
	if err != nil {
		return failed(e, "banks", err)
	}
	w := newCSVWriter(e.stdout, *raw)
	_ = w.Write([]string{"code", "name", "status", "online"})
	for _, b := range banks {
		_ = w.Write([]string{b.Code, b.Name, b.Status, strconv.FormatBool(b.Online)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fail(e, "writing: %v", err)
	}
	return exitOK
}
