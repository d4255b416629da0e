package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/paygate-go/paygate"
)

// replayAbout is the help text of paygate replay.
const replayAbout = `Rebuilds one order's direct callback (docs/protocol.md A2) from the gateway's
record of it (the order lookup, endpoint 5), signs it with PAYGATE_API_KEY and
POSTs it to -to, a handler of the merchant's; prints the handler's answer. A
handler that has already taken the callback answers it as a duplicate (2xx)
and fulfils nothing again. REF is the reference the order was created with,
refNo~extraData when it had extra data (the seller_order_no of paygate report).
The post is time-limited and a redirect is not followed. Nothing secret is
printed. Exit status: 0 the handler answered 2xx, 1 it did not (or the order
was not found, or is not one to call back), 2 usage or configuration.`

// runReplay is paygate replay: one order's callback, rebuilt and posted
// to the merchant's handler.
func runReplay(e env, args []string) int {
	fs := newFlags(e, "replay", "-to URL [flags] REF (or REF -to URL)", replayAbout)
	target := fs.String("to", "", "the handler's URL, such as http://localhost:8080/paygate/callback (required)")
	timeout := fs.Duration("timeout", defaultForwardTimeout, "time limit of the post")
	cf := addClientFlags(fs)
	ref, st := replayArgs(e, fs, args)
	if ref == "" {
		return st
	}
	if *timeout <= 0 {
		return fail(e, "-timeout %v: want more than zero", *timeout)
	}
	to, warning, err := forwardTarget("-to", *target)
	if err != nil {
		return fail(e, "%v", err)
	}
	key, ok := keyFromEnv(e)
	if !ok {
		return exitUsage
	}
	client, err := cf.client()
	if err != nil {
		return fail(e, "%v", err)
	}
	if warning != "" {
		fmt.Fprintln(e.stderr, "paygate replay: warning: "+warning)
	}
	p, st := replayRecord(e, client, ref, envOr(*cf.agency, paygate.EnvAgency))
	if st != exitOK {
		return st
	}
	ans, err := newForwarder(key, to, *timeout).post(e.ctx, callbackForm(p))
	if err != nil {
		return failed(e, "replay", err)
	}
	fmt.Fprintf(e.stdout, "replayed %s: %v %q\n", describe(&p), ans, ans.body)
	if !ans.ok() {
		return exitInvalid
	}
	return exitOK
}

// replayArgs parses replay's command line, the flags before or after
// REF; "" with the exit status when it is not whole.
func replayArgs(e env, fs *flag.FlagSet, args []string) (string, int) {
	if st, ok := parse(fs, args); !ok {
		return "", st
	}
	ref := fs.Arg(0)
	if fs.NArg() > 1 { // REF -to URL: the flags after the reference
		if st, ok := parse(fs, fs.Args()[1:]); !ok {
			return "", st
		}
		if fs.NArg() != 0 {
			return "", usageError(e, fs, "want one REF, got %q too", fs.Arg(0))
		}
	}
	if ref == "" {
		return "", usageError(e, fs, "want one REF: the reference the order was created with")
	}
	if st, missing := missingFlags(e, fs, "to"); missing {
		return "", st
	}
	return ref, exitOK
}

// replayRecord looks up the order created as ref and returns its record
// when it is one to call back: found, the reference asked for, and
// passing recordRules (agency: the client's).
func replayRecord(e env, client *paygate.Client, ref, agency string) (paygate.PaymentRecord, int) {
	rec, err := client.LookupOrderByRefNo(e.ctx, ref)
	switch {
	case errors.Is(err, paygate.ErrNoCredential):
		return paygate.PaymentRecord{}, fail(e, "%v", err)
	case errors.Is(err, paygate.ErrOrderNotFound) && !strings.Contains(ref, "~"):
		return paygate.PaymentRecord{}, failed(e, "replay", fmt.Errorf("%s: no such order; if it was created with extra data, give refNo~extraData (the seller_order_no of paygate report)", ref))
	case errors.Is(err, paygate.ErrOrderNotFound):
		return paygate.PaymentRecord{}, failed(e, "replay", fmt.Errorf("%s: no such order", ref))
	case err != nil:
		return paygate.PaymentRecord{}, failed(e, "replay", fmt.Errorf("%s: %w", ref, err))
	}
	p, err := rec.Payment()
	if err != nil {
		return p, failed(e, "replay", fmt.Errorf("%s: the record does not read: %w", ref, err))
	}
	if base, _ := paygate.SplitRefNo(ref); base != p.RefNo {
		return p, failed(e, "replay", fmt.Errorf("%s: the gateway answered another order's record (%s); nothing sent", ref, fullRef(&p)))
	}
	if rule, ok := holdReason(&p, agency); !ok {
		return p, failed(e, "replay", fmt.Errorf("%s: %s; nothing sent (paygate lookup %s shows the record)", describe(&p), rule.reason, ref))
	}
	return p, exitOK
}
