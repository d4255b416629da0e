package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/paygate-go/paygate/zakat/outbox"
)

// envOutboxDSN names the variable with the DSN of the bank's database,
// which holds the outbox (package zakat/outbox). A DSN holds a password,
// so it comes from the environment, never from a flag.
const envOutboxDSN = "PAYGATE_OUTBOX_DSN"

// runOutbox is paygate outbox: the operator's tools for the bank's outbox.
func runOutbox(e env, args []string) int {
	return dispatchSub(e, "outbox", []command{
		{name: "status", run: runOutboxStatus},
		{name: "dead", run: runOutboxDead},
		{name: "retry", run: runOutboxRetry},
		{name: "drop", run: runOutboxDrop},
	}, args)
}

// outboxFlags makes the flag set of an outbox subcommand, with -table.
func outboxFlags(e env, name, args, about string) (*flag.FlagSet, *string) {
	fs := newFlags(e, "outbox "+name, args, about+"\nReads the bank's database from $"+envOutboxDSN+" (PostgreSQL).")
	return fs, fs.String("table", outbox.DefaultTable, "the outbox's table")
}

// openOutbox opens the outbox of $PAYGATE_OUTBOX_DSN and table, for the
// operator's methods only. The DSN is never printed.
func openOutbox(table string) (*outbox.Outbox, func(), error) {
	dsn := os.Getenv(envOutboxDSN)
	if dsn == "" {
		return nil, nil, errors.New(envOutboxDSN + " is not set: the DSN of the bank's database, which holds the outbox")
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a DSN pgx reads", envOutboxDSN)
	}
	o, err := outbox.New(db, nil, outbox.WithTable(table))
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("-table: %w", err)
	}
	return o, func() { db.Close() }, nil
}

// withOutbox parses args, opens the outbox and runs fn on it.
func withOutbox(e env, fs *flag.FlagSet, table *string, args []string, fn func(context.Context, *outbox.Outbox) int) int {
	if st, ok := parse(fs, args); !ok {
		return st
	}
	o, closeDB, err := openOutbox(*table)
	if err != nil {
		return fail(e, "%v", err)
	}
	defer closeDB()
	return fn(e.ctx, o)
}

// runOutboxStatus prints the depth, the oldest age and the dead count.
func runOutboxStatus(e env, args []string) int {
	fs, table := outboxFlags(e, "status", "[-table NAME]", "Prints the transactions queued (depth), the age of the oldest and the dead count.\nExit status: 0 none dead, 1 some dead or the database unreadable, 2 usage.")
	return withOutbox(e, fs, table, args, func(ctx context.Context, o *outbox.Outbox) int {
		s, err := o.Stats(ctx)
		if err != nil {
			return failed(e, "outbox status", err)
		}
		fmt.Fprintf(e.stdout, "queued %d\noldest %v\ndead %d\n", s.Depth, s.OldestAge.Round(time.Second), s.Dead)
		if s.Dead > 0 {
			return exitInvalid
		}
		return exitOK
	})
}

// runOutboxDead lists the dead transactions and their reasons.
func runOutboxDead(e env, args []string) int {
	fs, table := outboxFlags(e, "dead", "[-table NAME] [-limit N]", "Lists the dead transactions, oldest first: orderno, the amount, name and status held\n(to compare with the service's record), attempts, whether one may have reached the\nservice, when it died, and why.")
	limit := fs.Int("limit", 100, "at most N (0: all)")
	return withOutbox(e, fs, table, args, func(ctx context.Context, o *outbox.Outbox) int {
		dead, err := o.Dead(ctx, *limit)
		if err != nil {
			return failed(e, "outbox dead", err)
		}
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "orderno\tamount\tname\tstatus\tattempts\tmaybe_stored\tdied_at\treason")
		for _, d := range dead {
			tx := d.Transaction
			fmt.Fprintf(w, "%s\t%s\t%q\t%s\t%d\t%t\t%s\t%s\n", d.OrderNo, tx.Amount, tx.Name, tx.Status, d.Attempts, d.MaybeStored, d.DiedAt.UTC().Format(time.RFC3339), d.Reason)
		}
		if err := w.Flush(); err != nil {
			return fail(e, "writing: %v", err)
		}
		return exitOK
	})
}

// runOutboxRetry makes dead transactions due again.
func runOutboxRetry(e env, args []string) int {
	fs, table := outboxFlags(e, "retry", "[-table NAME] (-all | ORDERNO...)", "Makes the dead transactions given (or -all of them) due now, after a fix; a transaction\nthat may have reached the service is resent safely (Resend). Prints how many.")
	all := fs.Bool("all", false, "every dead transaction")
	return withOutbox(e, fs, table, args, func(ctx context.Context, o *outbox.Outbox) int {
		var n int
		var err error
		switch {
		case *all && fs.NArg() > 0:
			return usageError(e, fs, "give -all or ORDERNOs, not both")
		case *all:
			n, err = o.RetryAll(ctx)
		case fs.NArg() == 0:
			return usageError(e, fs, "want -all or at least one ORDERNO")
		default:
			n, err = o.Retry(ctx, fs.Args()...)
		}
		if err != nil {
			return failed(e, "outbox retry", err)
		}
		fmt.Fprintf(e.stdout, "retried %d\n", n)
		return exitOK
	})
}

// runOutboxDrop deletes dead transactions.
func runOutboxDrop(e env, args []string) int {
	fs, table := outboxFlags(e, "drop", "[-table NAME] ORDERNO...", "Deletes the dead transactions given, which are then never sent (a transaction not dead is\nleft as it is). Prints how many.")
	return withOutbox(e, fs, table, args, func(ctx context.Context, o *outbox.Outbox) int {
		if fs.NArg() == 0 {
			return usageError(e, fs, "want at least one ORDERNO")
		}
		n, err := o.Drop(ctx, fs.Args()...)
		if err != nil {
			return failed(e, "outbox drop", err)
		}
		fmt.Fprintf(e.stdout, "dropped %d\n", n)
		return exitOK
	})
}
