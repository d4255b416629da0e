package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/agencybrand"
	"github.com/paygate-go/paygate/zakat"
)

// runWebhook dispatches the webhook subcommands.
func runWebhook(e env, args []string) int {
	return dispatchSub(e, "webhook", []command{
		{name: "validate", run: runWebhookValidate},
		{name: "send", run: runWebhookSend},
	}, args)
}

// agenciesFlag adds -agencies, the webhook's agency codes (default
// $PAYGATE_WEBHOOK_AGENCIES, else the document's; docs/assumptions.md
// A-webhook-brand), and -brand, a brand's three codes instead
// (zakat.BrandAgencies), and returns a reader of the validator they set.
func agenciesFlag(fs *flag.FlagSet) func() (zakat.Validator, error) {
	list := fs.String("agencies", "", "comma-separated agency codes, e.g. ADBLZS,ADBPPZ,ADB (default $"+paygate.EnvWebhookAgencies+", else BANKLZS,BANKPPZ,BANK)")
	brand := fs.String("brand", "", "instead of -agencies, a brand's codes: NAME+LZS, NAME+PPZ and NAME\n(-brand ADB: ADBLZS,ADBPPZ,ADB, the real service's; -brand BANK: the document's)")
	return func() (zakat.Validator, error) {
		from, codes := "-agencies or "+paygate.EnvWebhookAgencies, zakat.ParseAgencies(envOr(*list, paygate.EnvWebhookAgencies))
		if *brand != "" {
			if *list != "" {
				return zakat.Validator{}, errors.New("give -agencies or -brand, not both")
			}
			from, codes = "-brand", zakat.BrandAgencies(*brand)
		}
		v, err := zakat.NewValidator(codes...)
		if err != nil {
			return v, fmt.Errorf("%s: %w", from, err)
		}
		return v, nil
	}
}

// cliBrandFix names the CLI's switch of the agency codes, for a batch of
// the other brand's (agencybrand).
const cliBrandFix = "set it with -brand ADB for the real service, or -brand BANK (the default) for the document's"

// runWebhookValidate checks batch files with zakat.Validator.ValidateBatchReader,
// streaming, so a file of any size fits in a few tens of megabytes. It
// prints one line per file, `FILE: ok` or `FILE: N problems`, each problem
// then indented on its own line (pointer, rule, value). FILE "-" is
// standard input.
func runWebhookValidate(e env, args []string) int {
	fs := newFlags(e, "webhook validate", "[-agencies LIST | -brand NAME] FILE...", "Checks each webhook batch (docs/protocol.md B1-B3), of any size, and prints FILE: ok or FILE: N problems.\nPast about 150,000 transactions it keeps their ordernos in a temporary file ($TMPDIR), removed when it ends.\nExit status: 0 all valid, 1 any invalid, 2 usage or I/O error. FILE - reads standard input.")
	agencies := agenciesFlag(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() == 0 {
		return usageError(e, fs, "want at least one FILE (or - for standard input)")
	}
	rules, err := agencies()
	if err != nil {
		return fail(e, "%v", err)
	}
	// What stays live is the orderno set, pointer-free memory the collector
	// marks at almost no cost (at most about 8 MiB: past it the set spills
	// to a temporary file); the rest is windows of the file already read.
	// Collecting them at 10 % growth instead of 100 % keeps a 1 GB file of
	// 2,000,000 transactions under 64 MB (TestWebhookValidateBigBatch), for
	// about the same time. On a machine so busy that the collector's own
	// workers fall behind, the soft limit makes the reading goroutine
	// assist it before the heap passes 40 MiB.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(40 << 20))
	status := exitOK
	for _, name := range fs.Args() {
		var ve *zakat.ValidationError
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
		problems := ve.Problems
		if m, ok := agencybrand.Find(rules, problems); ok { // one line, not one per transaction
			fmt.Fprintf(e.stdout, "  %s\n", m.Sentence(cliBrandFix))
			problems = m.Rest
		}
		for _, p := range problems {
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
func validateFile(e env, name string, rules zakat.Validator) error {
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

// maxSendFile bounds the file webhook send reads whole (it decodes the
// transactions it sends): about 30,000 transactions. Larger files are
// refused, naming the cure; webhook validate streams any size.
const maxSendFile = 16 << 20

// readInput reads a named file, or standard input for "-", up to
// maxSendFile bytes.
func readInput(e env, name string) ([]byte, error) {
	r := e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	body, err := io.ReadAll(io.LimitReader(r, maxSendFile+1))
	if err == nil && len(body) > maxSendFile {
		err = fmt.Errorf("larger than %d MiB: split it into smaller batches (webhook validate checks a file of any size)", maxSendFile>>20)
	}
	return body, err
}

// runWebhookSend validates a batch file and sends its valid transactions
// to PAYGATE_WEBHOOK_URL with PAYGATE_WEBHOOK_PASSWORD, as
// WebhookSender.Send does with a slice: the invalid ones are listed, not
// sent, and do not hold back the rest, unless -all-or-nothing. Then it
// prints what became of each orderno.
func runWebhookSend(e env, args []string) int {
	fs := newFlags(e, "webhook send", "[-batch N] [-timeout D] [-all-or-nothing] [-webhook-url URL] [-agencies LIST | -brand NAME] FILE",
		"Validates a webhook batch and posts its valid transactions (docs/protocol.md endpoint 7) with $PAYGATE_WEBHOOK_PASSWORD, listing the invalid ones, which are not sent.\n"+
			"Exit status: 0 every transaction accepted; 1 any transaction invalid, rejected, unconfirmed or not sent, or the file not sent; 2 usage, configuration or I/O error. FILE - reads standard input (at most 16 MiB).")
	batchSize := fs.Int("batch", paygate.DefaultBatchSize, "transactions per request")
	timeout := fs.Duration("timeout", paygate.DefaultSendTimeout, fmt.Sprintf("the longest the whole send may take, every request, attempt and wait included\n"+
		"(paygate.WithSendTimeout, whose default, %v, is this flag's). When it passes, the request under way\n"+
		"is listed as unconfirmed (not sent if none of it reached the service) and the batches not yet sent\n"+
		"as not sent: both safe to send again", paygate.DefaultSendTimeout))
	allOrNothing := fs.Bool("all-or-nothing", false, "send nothing when any transaction is invalid")
	webhookURL := fs.String("webhook-url", "", "the webhook endpoint's URL, used as given (https://pay.tulus.my/api/adb/webhook), or a bare host for /api/bank/webhook (default $PAYGATE_WEBHOOK_URL)")
	agencies := agenciesFlag(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 1 {
		return usageError(e, fs, "want one FILE (or - for standard input), got %d arguments", fs.NArg())
	}
	name := fs.Arg(0)
	sender, rules, err := webhookSender(*webhookURL, agencies, paygate.WithBatchSize(*batchSize), paygate.WithSendTimeout(*timeout))
	if err != nil {
		return fail(e, "%v", err)
	}
	body, err := readInput(e, name)
	if err != nil {
		return fail(e, "%s: %v", name, err)
	}
	txs, invalid, err := validTransactions(body, rules)
	if err != nil {
		fmt.Fprintf(e.stdout, "%s: not sent: %s\n", name, cliText(err.Error()))
		return exitInvalid
	}
	if len(invalid) > 0 && *allOrNothing {
		fmt.Fprintf(e.stdout, "%s: not sent (-all-or-nothing): %d invalid\n", name, len(invalid))
		printInvalid(e, invalid)
		return exitInvalid
	}
	report, err := sender.Send(e.ctx, txs) // the report is never nil
	printSendReport(e, name, report, invalid)
	if err != nil {
		return failed(e, "webhook send", err)
	}
	if len(invalid) > 0 {
		return exitInvalid
	}
	return exitOK
}

// webhookSender is the sender of paygate webhook send: to -webhook-url or
// PAYGATE_WEBHOOK_URL with PAYGATE_WEBHOOK_PASSWORD, checked by the
// -agencies rules, which it returns too, and opts.
func webhookSender(webhookURL string, agencies func() (zakat.Validator, error), opts ...paygate.SenderOption) (*paygate.WebhookSender, zakat.Validator, error) {
	target, password := envOr(webhookURL, paygate.EnvWebhookURL), os.Getenv(paygate.EnvWebhookPassword)
	switch {
	case target == "":
		return nil, zakat.Validator{}, fmt.Errorf("%s (or -webhook-url) is not set", paygate.EnvWebhookURL)
	case password == "":
		return nil, zakat.Validator{}, fmt.Errorf("%s is not set", paygate.EnvWebhookPassword)
	}
	rules, err := agencies()
	if err != nil {
		return nil, rules, err
	}
	sender, err := paygate.NewWebhookSender(target, password, append(opts, paygate.WithWebhookValidator(rules))...)
	return sender, rules, err
}

// printSendReport prints what became of each orderno of file name: the
// counts, the invalid ones (not sent), the rejected, each failed batch, the
// unconfirmed and the not sent.
func printSendReport(e env, name string, report *zakat.SendReport, invalid []zakat.InvalidTransaction) {
	fmt.Fprintf(e.stdout, "%s: %d accepted, %d rejected, %d unconfirmed, %d not sent, %d invalid (not sent); %d batches in %d HTTP requests (retries included)\n",
		name, len(report.Accepted), len(report.Rejected), len(report.Unconfirmed), len(report.NotSent), len(invalid), len(report.Requests), report.Attempts())
	printInvalid(e, invalid)
	for _, o := range report.Outcomes() {
		var ref *zakat.Refusal
		switch {
		case o.Status != zakat.SendRejected:
		case errors.As(o.Err, &ref): // the one a refusal pointed at, in one sentence
			fmt.Fprintf(e.stdout, "  rejected %s: %s\n", o.OrderNo, cliText(ref.Error()))
		default:
			fmt.Fprintf(e.stdout, "  rejected %s\n", o.OrderNo)
		}
	}
	for _, rr := range report.Requests {
		if rr.Err == nil || len(rr.OrderNos) == 0 {
			continue
		}
		fmt.Fprintf(e.stdout, "  batch from %s (%d transactions): %s\n", rr.OrderNos[0], len(rr.OrderNos), cliText(rr.Err.Error()))
	}
	for _, id := range report.Unconfirmed {
		fmt.Fprintf(e.stdout, "  unconfirmed %s (safe to send again)\n", id)
	}
	for _, id := range report.NotSent {
		fmt.Fprintf(e.stdout, "  not sent %s (safe to send again)\n", id)
	}
}

// validTransactions reads a batch and splits it as WebhookSender.Send
// splits a slice: the valid transactions, typed, and the problems of each
// invalid one (by its index in the file). A problem of the batch itself
// (not JSON, no transactions array, a repeated key) is an error: no
// transaction is then known to be what the file means.
func validTransactions(body []byte, rules zakat.Validator) ([]zakat.Transaction, []zakat.InvalidTransaction, error) {
	batch, err := rules.ValidateBatchJSON(body)
	if err == nil {
		return batch.Transactions, nil, nil
	}
	var ve *zakat.ValidationError
	if !errors.As(err, &ve) {
		return nil, nil, err
	}
	byIndex := map[int][]zakat.FieldError{}
	var order []int
	for _, p := range ve.Problems {
		i, ok := transactionIndex(p.Field)
		if !ok {
			return nil, nil, err // a problem of the batch, not of one transaction
		}
		if _, seen := byIndex[i]; !seen {
			order = append(order, i)
		}
		byIndex[i] = append(byIndex[i], p)
	}
	var top map[string]json.RawMessage
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(top["transactions"], &raws); err != nil {
		return nil, nil, err
	}
	slices.Sort(order)
	invalid := make([]zakat.InvalidTransaction, 0, len(order))
	var valid bytes.Buffer
	valid.WriteString(`{"transactions":[`)
	n := 0
	for i, raw := range raws {
		if problems, bad := byIndex[i]; bad {
			var no struct {
				OrderNo any `json:"orderno"`
			}
			_ = json.Unmarshal(raw, &no) // for the listing only
			s, _ := no.OrderNo.(string)
			invalid = append(invalid, zakat.InvalidTransaction{Index: i, OrderNo: s, Problems: problems})
			continue
		}
		if n > 0 {
			valid.WriteByte(',')
		}
		valid.Write(raw)
		n++
	}
	valid.WriteString("]}")
	batch, err = rules.ValidateBatchJSON(valid.Bytes())
	if err != nil { // each was valid in the file; cannot happen
		return nil, nil, fmt.Errorf("the valid transactions, checked again: %w", err)
	}
	return batch.Transactions, invalid, nil
}

// transactionIndex reads N from a pointer /transactions/N/... (or
// /transactions/N).
func transactionIndex(pointer string) (int, bool) {
	rest, ok := strings.CutPrefix(pointer, "/transactions/")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(num)
	return i, err == nil && i >= 0 && strconv.Itoa(i) == num
}

// printInvalid lists the invalid transactions, one problem a line.
func printInvalid(e env, invalid []zakat.InvalidTransaction) {
	for _, tx := range invalid {
		fmt.Fprintf(e.stdout, "  invalid /transactions/%d (orderno %q), not sent:\n", tx.Index, tx.OrderNo)
		for _, p := range tx.Problems {
			fmt.Fprintf(e.stdout, "    %s\n", p.Error())
		}
	}
}
