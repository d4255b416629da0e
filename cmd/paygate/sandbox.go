package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// runSandbox serves the sandbox until interrupted, after printing the
// credentials as PAYGATE_* lines a shell can export; `sandbox order ...`
// acts on a running one (runSandboxOrder).
func runSandbox(e env, args []string) int {
	if len(args) > 0 && args[0] == "order" {
		return runSandboxOrder(e, args[1:])
	}
	fs := newFlags(e, "sandbox", "[-addr 127.0.0.1:0] [flags]", "Runs the in-process sandbox of the whole service on loopback until interrupted, printing its URL and credentials as PAYGATE_* lines\n(with -export, as export lines a shell can eval), then, on stderr, one line per callback attempt, per lookup it answers and per webhook batch it takes.\nWith them exported, paygate sandbox order create|settle makes and decides orders on it.\nFaults for testing a merchant's recovery: -lose-every N, -duplicates N, -late-settlement D;\nfor a bank's outbox: -webhook-drop-after-store RATE, -webhook-repeats 409|422, -webhook-refuse ORDERNOS.")
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on; port 0 takes a free port, printed as PAYGATE_CHECKOUT_URL (e.g. 127.0.0.1:8085 for a fixed one)")
	retry := fs.Duration("retry-interval", 0, "wait between direct-callback attempts (default 30s, as the service)")
	webhookPath := fs.String("webhook-path", paths.Webhook, "the webhook's path, e.g. /api/adb/webhook (default with -brand ADB)")
	export := fs.Bool("export", false, "print the credentials as export KEY='value' lines, for a shell's eval or source")
	quiet := fs.Bool("quiet", false, "print no log line: none per callback attempt, lookup or webhook batch")
	agencies := agenciesFlag(fs)
	faults := addSandboxFaults(fs)
	hookFaults := addWebhookFaults(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	rules, err := agencies()
	if err != nil {
		return fail(e, "sandbox: %v", err)
	}
	opts, err := faults.options()
	if err != nil {
		return fail(e, "sandbox: %v", err)
	}
	hookOpts, err := hookFaults.options()
	if err != nil {
		return fail(e, "sandbox: %v", err)
	}
	opts = append(opts, hookOpts...)
	if !flagSet(fs, "webhook-path") && sameAgencies(rules.Agencies(), zakat.ADBAgencies()) {
		*webhookPath = paths.ADBWebhook // the real brand's codes with its path: WithADBBrand's one switch
	}
	opts = append(opts, gatewaytest.WithAddr(*addr), gatewaytest.WithWebhookPath(*webhookPath), gatewaytest.WithWebhookValidator(rules))
	if !*quiet {
		opts = append(opts, gatewaytest.WithLog(sandboxLog(e.stderr)))
	}
	if *retry > 0 {
		opts = append(opts, gatewaytest.WithRetryInterval(*retry))
	}
	sb, err := gatewaytest.Start(opts...)
	if err != nil {
		return fail(e, "sandbox: %v", err)
	}
	defer sb.Close()
	for _, kv := range [][2]string{
		{"PAYGATE_CHECKOUT_URL", sb.URL}, {"PAYGATE_REPORTS_URL", sb.URL}, {"PAYGATE_WEBHOOK_URL", sb.WebhookURL()},
		{paygate.EnvWebhookAgencies, joinAgencies(rules.Agencies())},
		{"PAYGATE_AGENCY", sb.Agency}, {"PAYGATE_API_KEY", sb.APIKey}, {"PAYGATE_AUTH_TOKEN", sb.AuthToken},
		{"PAYGATE_WEBHOOK_PASSWORD", sb.WebhookPassword},
	} {
		if *export {
			fmt.Fprintf(e.stdout, "export %s=%s\n", kv[0], shellQuote(kv[1]))
		} else {
			fmt.Fprintf(e.stdout, "%s=%s\n", kv[0], kv[1])
		}
	}
	fmt.Fprintln(e.stderr, "sandbox ready (these are sandbox credentials); Ctrl-C to stop")
	<-e.ctx.Done()
	return exitOK
}

// sandboxLog is the sandbox's log: one text line per thing it does, its
// time and message first, without a level (every line is information).
func sandboxLog(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.LevelKey {
			return slog.Attr{}
		}
		return a
	}}))
}

// shellQuote quotes v for a POSIX shell: in single quotes, each single
// quote in v closing the quotes, escaped, and reopening them, so that
// nothing in v is expanded.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// joinAgencies writes agency codes in the form zakat.ParseAgencies reads.
func joinAgencies(codes []zakat.Agency) string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// flagSet reports whether the command line gave the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// sameAgencies reports whether a and b hold the same codes, in any order.
func sameAgencies(a, b []zakat.Agency) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
