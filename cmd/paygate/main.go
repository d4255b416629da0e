package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/paygate-go/paygate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, stderrIsTerminal: isTerminal(os.Stderr), now: time.Now}
	os.Exit(dispatch(e, os.Args[1:]))
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Exit statuses.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

// env is what a command reads and writes, so that tests can run it.
type env struct {
	ctx              context.Context
	stdin            io.Reader
	stdout, stderr   io.Writer
	stderrIsTerminal bool
	// now is the clock (report's today and yesterday); nil is time.Now.
	now func() time.Time
}

// clock returns the time now by e's clock.
func (e env) clock() time.Time {
	if e.now == nil {
		return time.Now()
	}
	return e.now()
}

// command is one subcommand.
type command struct {
	name, summary string
	run           func(e env, args []string) int
}

// commands lists the top-level commands and their subcommands.
func commands() []command {
	return []command{
		{"sandbox", "run the sandbox on 127.0.0.1 and print its credentials; sandbox order create|settle acts on it", runSandbox},
		{"sign", "sign a URL (-url) or a form (-form); -explain prints the message", runSign},
		{"verify", "verify a callback body; -explain prints the candidate messages", runVerify},
		{"callback", "callback send: post a signed test callback to a local URL", runCallback},
		{"report", "the payment report for a date range, as CSV or JSON lines", runReport},
		{"lookup", "one order by the refNo it was created with (-by seller: by fpx_seller_order_no)", runLookup},
		{"listen", "forward the merchant's payments to a local handler as signed callbacks", runListen},
		{"replay", "rebuild one order's signed callback and post it to a local handler", runReplay},
		{"reconcile", "dry run: each awaited order's gateway state and what Reconcile would do", runReconcile},
		{"awaited", "the orders the pending watch awaits, with their next lookup (reads " + envDedupeDSN + ")", runAwaited},
		{"ping", "check that the service answers (its echo and version)", runPing},
		{"probe", "check the SDK's assumptions against the service, moving no money (-create: unpaid RM 1.00 orders)", runProbe},
		{"banks", "the FPX bank list (-b2b: the corporate channel), as CSV", runBanks},
		{"webhook", "bank webhook batches: validate, send", runWebhook},
		{"outbox", "the bank's outbox: status, dead, retry, drop (reads " + envOutboxDSN + ")", runOutbox},
		{"version", "print the SDK's version", runVersion},
	}
}

// dispatch runs the command args name and returns the exit status.
func dispatch(e env, args []string) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if c, ok := find(commands(), args[0]); ok {
		return c.run(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "paygate: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

// dispatchSub runs the subcommand args names among subs, the subcommands
// of group. Without one, or with -h, it prints each subcommand's usage
// (exit 2, or 0 for -h); an unknown one is a usage error naming those
// there are.
func dispatchSub(e env, group string, subs []command, args []string) int {
	if len(args) == 0 || isHelp(args[0]) {
		for i, c := range subs {
			if i > 0 {
				fmt.Fprintln(e.stderr)
			}
			c.run(e, []string{"-h"})
		}
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if c, ok := find(subs, args[0]); ok {
		return c.run(e, args[1:])
	}
	names := make([]string, len(subs))
	for i, c := range subs {
		names[i] = c.name
	}
	return fail(e, "%s: unknown subcommand %q (want %s)", group, args[0], strings.Join(names, " or "))
}

// find returns the command of cmds called name.
func find(cmds []command, name string) (command, bool) {
	i := slices.IndexFunc(cmds, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return cmds[i], true
}

// isHelp reports whether arg asks for help: -h, -help or --help.
func isHelp(arg string) bool {
	return slices.Contains([]string{"-h", "-help", "--help"}, arg)
}

// usage prints the command list.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: paygate <command> [subcommand] [flags] [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nconfiguration: flags and PAYGATE_* variables; secrets only from the environment")
	fmt.Fprintln(w, "exit status: 0 ok, 1 the operation failed, 2 usage, configuration or I/O error; -h on any command")
}

// runVersion prints the SDK's version.
func runVersion(e env, args []string) int {
	fs := newFlags(e, "version", "", "Prints the version of the paygate SDK this tool was built with.")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(e.stdout, "paygate", paygate.Version)
	return exitOK
}
