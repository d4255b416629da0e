package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/paygate-go/paygate"
)

// newFlags makes a command's flag set that prints its usage to e.stderr.
func newFlags(e env, name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("paygate "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: paygate %s %s\n%s\n", name, args, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; ok false means return status (0 for -h, 2 otherwise).
func parse(fs *flag.FlagSet, args []string) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

// usageError prints what is wrong with a command line (a missing flag or
// argument, named), then the usage, and returns exitUsage.
func usageError(e env, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitUsage
}

// missingFlags returns usageError's status naming the first of flags left
// empty, with its help text, or 0 and false when all are set.
func missingFlags(e env, fs *flag.FlagSet, flags ...string) (int, bool) {
	for _, name := range flags {
		if f := fs.Lookup(name); f != nil && f.Value.String() == "" {
			return usageError(e, fs, "-%s is required: %s", name, strings.TrimSuffix(f.Usage, " (required)")), true
		}
	}
	return 0, false
}

// fail prints a usage, configuration or I/O error and returns exitUsage.
func fail(e env, format string, args ...any) int {
	fmt.Fprintln(e.stderr, "paygate: "+cliText(fmt.Sprintf(format, args...)))
	return exitUsage
}

// failed prints why the operation of command cmd failed and returns
// exitInvalid.
func failed(e env, cmd string, err error) int {
	fmt.Fprintln(e.stderr, "paygate "+cmd+": "+cliText(err.Error()))
	return exitInvalid
}

// cliText rewrites an SDK message for the command line: without the SDK's
// own "paygate: " prefixes (the command prints one), and naming the
// environment variables and flags a user of the tool sets instead of the
// Go options; a variable that a flag overrides is named with the flag.
func cliText(s string) string {
	return strings.NewReplacer(
		"paygate: ", "",
		"WithCheckoutURL", "PAYGATE_CHECKOUT_URL (or -checkout-url)",
		"WithReportsURL", "PAYGATE_REPORTS_URL (or -reports-url)",
		"WithAgency", "PAYGATE_AGENCY (or -agency)",
		paygate.EnvCheckoutURL, "PAYGATE_CHECKOUT_URL (or -checkout-url)",
		paygate.EnvReportsURL, "PAYGATE_REPORTS_URL (or -reports-url)",
		paygate.EnvAgency, "PAYGATE_AGENCY (or -agency)",
		"WithAuthToken", paygate.EnvAuthToken,
		"WithPayURL", paygate.EnvPayURL,
		"WithKey", paygate.EnvAPIKey,
		"WithBatchSize", "-batch",
		"webhook URL", "PAYGATE_WEBHOOK_URL (or -webhook-url)",
		"webhook password", paygate.EnvWebhookPassword,
	).Replace(s)
}

// clientFlags are the Client's settings a command takes as flags; secrets
// come only from the environment.
type clientFlags struct {
	agency, checkoutURL, reportsURL *string
}

// addClientFlags registers -agency, -checkout-url and -reports-url, which
// override PAYGATE_AGENCY, PAYGATE_CHECKOUT_URL and PAYGATE_REPORTS_URL.
func addClientFlags(fs *flag.FlagSet) clientFlags {
	return clientFlags{
		agency:      fs.String("agency", "", "agency identifier (default $PAYGATE_AGENCY)"),
		checkoutURL: fs.String("checkout-url", "", "checkout host (default $PAYGATE_CHECKOUT_URL)"),
		reportsURL:  fs.String("reports-url", "", "reports host (default $PAYGATE_REPORTS_URL)"),
	}
}

// client builds the Client from the environment and the flags, then
// extra.
func (f clientFlags) client(extra ...paygate.Option) (*paygate.Client, error) {
	var opts []paygate.Option
	if *f.agency != "" {
		opts = append(opts, paygate.WithAgency(*f.agency))
	}
	if *f.checkoutURL != "" {
		opts = append(opts, paygate.WithCheckoutURL(*f.checkoutURL))
	}
	if *f.reportsURL != "" {
		opts = append(opts, paygate.WithReportsURL(*f.reportsURL))
	}
	return paygate.NewClientFromEnv(append(opts, extra...)...)
}

// envOr returns the flag value, or the variable's when the flag is empty.
func envOr(flagValue, name string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(name)
}
