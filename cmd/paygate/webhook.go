package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/paygate-go/paygate"
)

// runWebhook dispatches the webhook subcommands.
func runWebhook(e env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprintln(e.stderr, "usage: paygate webhook validate FILE...\n       paygate webhook send [-batch N] FILE")
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
	fmt.Fprintf(e.stderr, "paygate webhook: unknown subcommand %q\n", args[0])
	return exitUsage
}

// runWebhookValidate checks batch files with paygate.ValidateBatchJSON. It
// prints one line per file, `FILE: ok` or `FILE: N problems`, each problem
// then indented on its own line (pointer, rule, value). FILE "-" is standard
// input.
func runWebhookValidate(e env, args []string) int {
	fs := flag.NewFlagSet("paygate webhook validate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: paygate webhook validate FILE...")
		fmt.Fprintln(e.stderr, "Checks each webhook batch (docs/protocol.md B1-B3) and prints FILE: ok or FILE: N problems.")
		fmt.Fprintln(e.stderr, "Exit status: 0 all valid, 1 any invalid, 2 usage or I/O error. FILE - reads standard input.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	status := exitOK
	for _, name := range fs.Args() {
		body, err := readInput(e, name)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
			status = exitUsage
			continue
		}
		_, err = paygate.ValidateBatchJSON(body)
		var ve *paygate.ValidationError
		switch {
		case err == nil:
			fmt.Fprintf(e.stdout, "%s: ok\n", name)
			continue
		case !errors.As(err, &ve):
			fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
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
	fs := newFlags(e, "webhook send", "[-batch N] FILE", "Validates a webhook batch and posts it (docs/protocol.md endpoint 7); exit 0 only if every transaction was accepted.")
	batchSize := fs.Int("batch", paygate.DefaultBatchSize, "transactions per request")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	target, password := envOr("", "PAYGATE_WEBHOOK_URL"), envOr("", "PAYGATE_WEBHOOK_PASSWORD")
	if target == "" || password == "" {
		return fail(e, "PAYGATE_WEBHOOK_URL and PAYGATE_WEBHOOK_PASSWORD must be set")
	}
	body, err := readInput(e, fs.Arg(0))
	if err != nil {
		return fail(e, "%s: %v", fs.Arg(0), err)
	}
	batch, err := paygate.ValidateBatchJSON(body)
	if err != nil {
		fmt.Fprintf(e.stdout, "%s: not sent: %v\n", fs.Arg(0), err)
		return exitInvalid
	}
	sender, err := paygate.NewWebhookSender(target, password, paygate.WithBatchSize(*batchSize))
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
		fmt.Fprintln(e.stderr, "paygate webhook send:", err)
		return exitInvalid
	}
	return exitOK
}
