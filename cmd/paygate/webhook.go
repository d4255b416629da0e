package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/paygate-go/paygate"
)

// runWebhook dispatches the webhook subcommands.
func runWebhook(e env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		runWebhookValidate(e, []string{"-h"})
		fmt.Fprintln(e.stderr)
		runWebhookSend(e, []string{"-h"})
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	switch args[0] {
	case "validate":
		return runWebhookValidate(e, args[1:])
	case "send":
		return runWebhookSend(e, args[1:])
	}
	return fail(e, "webhook: unknown subcommand %q (want validate or send)", args[0])
}

// agenciesFlag adds -agencies, the webhook's agency codes (default
// $PAYGATE_WEBHOOK_AGENCIES, else the document's; docs/assumptions.md
// A-webhook-brand), and returns a reader of the validator it sets.
func agenciesFlag(fs *flag.FlagSet) func() (paygate.WebhookValidator, error) {
	list := fs.String("agencies", "", "comma-separated agency codes, e.g. ADBLZS,ADBPPZ,ADB (default $"+paygate.EnvWebhookAgencies+", else BANKLZS,BANKPPZ,BANK)")
	return func() (paygate.WebhookValidator, error) {
		v, err := paygate.ParseAgencies(envOr(*list, paygate.EnvWebhookAgencies))
		if err != nil {
			return v, fmt.Errorf("-agencies or %s: %w", paygate.EnvWebhookAgencies, err)
		}
		return v, nil
	}
}

// runWebhookValidate checks batch files with WebhookValidator.ValidateBatchReader,
// streaming, so a file of any size fits in a few tens of megabytes. It
// prints one line per file, `FILE: ok` or `FILE: N problems`, each problem
// then indented on its own line (pointer, rule, value). FILE "-" is
// standard input.
func runWebhookValidate(e env, args []string) int {
	fs := newFlags(e, "webhook validate", "[-agencies LIST] FILE...", "Checks each webhook batch (docs/protocol.md B1-B3) and prints FILE: ok or FILE: N problems.\nExit status: 0 all valid, 1 any invalid, 2 usage or I/O error. FILE - reads standard input.")
	agencies := agenciesFlag(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	rules, err := agencies()
	if err != nil {
		return fail(e, "%v", err)
	}
	// What stays live is the orderno set, pointer-free memory the collector
	// marks at almost no cost; the rest is windows of the file already read.
	// Collecting them at 10 % growth instead of 100 % keeps a 500 MB file
	// under 64 MB (BENCHMARKS.md), for about the same time.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	status := exitOK
	for _, name := range fs.Args() {
		var ve *paygate.ValidationError
		switch err := validateFile(e, name, rules); {
		case err == nil:
			fmt.Fprintf(e.stdout, "%s: ok\n", name)
			continue
		case !errors.As(err, &ve):
			fail(e, "%s: %v", name, err)
			status = exitUsage
			continue
		}
		noun := "problems"
		if len(ve.Problems) == 1 {
			noun = "problem"
		}
		fmt.Fprintf(e.stdout, "%s: %d %s\n", name, len(ve.Problems), noun)
		for _, p := range ve.Problems {
			fmt.Fprintf(e.stdout, "  %s\n", p.Error())
		}
		if status == exitOK {
			status = exitInvalid
		}
	}
	return status
}

// validateFile streams one named file (or standard input for "-") through
// rules.ValidateBatchReader.
func validateFile(e env, name string, rules paygate.WebhookValidator) error {
	r := e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	_, err := rules.ValidateBatchReader(r)
	return err
}

// readInput reads a named file, or standard input for "-".
func readInput(e env, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(name)
}

// runWebhookSend validates a batch file and sends it to PAYGATE_WEBHOOK_URL
// with PAYGATE_WEBHOOK_PASSWORD, then prints what became of each orderno.
func runWebhookSend(e env, args []string) int {
	fs := newFlags(e, "webhook send", "[-batch N] [-webhook-url URL] [-agencies LIST] FILE", "Validates a webhook batch and posts it (docs/protocol.md endpoint 7) with $PAYGATE_WEBHOOK_PASSWORD; exit 0 only if every transaction was accepted.")
	batchSize := fs.Int("batch", paygate.DefaultBatchSize, "transactions per request")
	webhookURL := fs.String("webhook-url", "", "the webhook endpoint's URL, used as given (https://pay.tulus.my/api/adb/webhook), or a bare host for /api/bank/webhook (default $PAYGATE_WEBHOOK_URL)")
	agencies := agenciesFlag(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	target, password := envOr(*webhookURL, paygate.EnvWebhookURL), os.Getenv(paygate.EnvWebhookPassword)
	switch {
	case target == "":
		return fail(e, "%s (or -webhook-url) is not set", paygate.EnvWebhookURL)
	case password == "":
		return fail(e, "%s is not set", paygate.EnvWebhookPassword)
	}
	rules, err := agencies()
	if err != nil {
		return fail(e, "%v", err)
	}
	body, err := readInput(e, fs.Arg(0))
	if err != nil {
		return fail(e, "%s: %v", fs.Arg(0), err)
	}
	batch, err := rules.ValidateBatchJSON(body)
	if err != nil {
		fmt.Fprintf(e.stdout, "%s: not sent: %v\n", fs.Arg(0), err)
		return exitInvalid
	}
	sender, err := paygate.NewWebhookSender(target, password, paygate.WithBatchSize(*batchSize), paygate.WithWebhookValidator(rules))
	if err != nil {
		return fail(e, "%v", err)
	}
	report, err := sender.Send(e.ctx, batch.Transactions)
	if report != nil {
		fmt.Fprintf(e.stdout, "%s: %d accepted, %d rejected, %d unconfirmed; %d batches in %d HTTP requests (retries included)\n",
			fs.Arg(0), len(report.Accepted), len(report.Rejected), len(report.Unconfirmed), len(report.Requests), report.Attempts())
		for _, id := range report.Rejected {
			fmt.Fprintf(e.stdout, "  rejected %s\n", id)
		}
		for _, rr := range report.Requests {
			if rr.Err == nil || len(rr.OrderNos) == 0 {
				continue
			}
			fmt.Fprintf(e.stdout, "  batch from %s (%d transactions): %v\n", rr.OrderNos[0], len(rr.OrderNos), rr.Err)
		}
		for _, id := range report.Unconfirmed {
			fmt.Fprintf(e.stdout, "  unconfirmed %s (safe to send again)\n", id)
		}
	}
	if err != nil {
		return failed(e, "webhook send", err)
	}
	return exitOK
}
