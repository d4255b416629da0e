package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"time"

	"github.com/paygate-go/paygate"
)

// listenAbout is the help text of paygate listen.
const listenAbout = `Forwards the merchant's payments to a handler of their own, as signed
callbacks, so that a developer runs their real handler against real payments.
Every -interval it reads the payment report (docs/protocol.md endpoint 4) from
the -since day (a Malaysian day) to today and, for each order that is new or
whose status changed since it last forwarded it, POSTs the direct callback the
gateway sends (docs/protocol.md A2), signed with PAYGATE_API_KEY, to
-forward-to. It prints one line per change: the reference, the order number,
the status and the handler's answer; never a key, token or signature.

A change is forwarded once: it counts as forwarded only when the handler
answers 2xx; any other answer, a redirect (never followed) or no answer is
tried again at the next poll, never dropped. With -state FILE what was
forwarded is kept across runs: a change made while listen was stopped is
forwarded when it starts again, and nothing is forwarded twice. Without
-since and without a state file, the first poll only notes the orders already
in the report (a baseline) and forwards the changes after it; -since today
forwards today's too (a handler answers a callback it has already taken as a
duplicate). Orders not yet paid are not forwarded, and a record the SDK's
Reconcile would hold back (an unprovable status, another agency, a success
without an amount) is reported, not forwarded.

Ctrl-C stops; the changes left undelivered are listed. Exit status: 0 stopped
(with -once: every change forwarded), 1 with -once a change not forwarded or
the report failed, 2 usage or configuration.`

// defaultListenInterval is the pause between two polls of paygate listen.
const defaultListenInterval = 5 * time.Second

// runListen is paygate listen: the merchant's payments forwarded to a
// handler as signed callbacks.
func runListen(e env, args []string) int {
	fs := newFlags(e, "listen", "-forward-to URL [-since DAY] [-interval D] [-state FILE] [-once] [flags]", listenAbout)
	target := fs.String("forward-to", "", "the handler's URL, such as http://localhost:8080/paygate/callback (required)")
	since := fs.String("since", "", "forward every change from this Malaysian day: YYYY-MM-DD, today or yesterday (default: changes after the first poll)")
	interval := fs.Duration("interval", defaultListenInterval, "pause between two polls")
	statePath := fs.String("state", "", "keep what was forwarded in FILE, across runs")
	once := fs.Bool("once", false, "poll once, forward, and exit")
	timeout := fs.Duration("timeout", defaultForwardTimeout, "time limit of one post to the handler")
	cf := addClientFlags(fs)
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if st, missing := missingFlags(e, fs, "forward-to"); missing {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(e, fs, "unexpected argument %q (flags come before arguments)", fs.Arg(0))
	}
	if *interval <= 0 || *timeout <= 0 {
		return fail(e, "-interval %v, -timeout %v: want more than zero", *interval, *timeout)
	}
	l, st := newListener(e, listenConfig{target: *target, since: *since, statePath: *statePath, timeout: *timeout, client: cf})
	if l == nil {
		return st
	}
	fmt.Fprintf(e.stderr, "paygate listen: forwarding the payment report from Malaysian day %s to %s every %v; Ctrl-C stops\n",
		l.start.Format(time.DateOnly), redacted(l.fwd.target), *interval)
	for {
		res := l.poll(e.ctx)
		if errors.Is(res.err, paygate.ErrNoCredential) {
			return fail(e, "%v", res.err)
		}
		if *once {
			return l.finish(res)
		}
		if !pause(e.ctx, *interval) {
			return l.finish(pollResult{})
		}
	}
}

// listenConfig is paygate listen's command line.
type listenConfig struct {
	target, since, statePath string
	timeout                  time.Duration
	client                   clientFlags
}

// listener is paygate listen's state between polls.
type listener struct {
	client    *paygate.Client
	fwd       forwarder
	agency    string
	start     time.Time
	now       func() time.Time
	state     *listenState
	statePath string
	// baseline: the next poll notes the orders it finds, forwarding none.
	baseline bool
	// attempts counts the failed posts of each change not yet forwarded;
	// held the status each held-back order was reported with.
	attempts   map[orderID]int
	held       map[orderID]paygate.Status
	unreadable int
	out, log   io.Writer
}

// newListener checks the configuration and loads the state; nil with the
// exit status when something is wrong.
func newListener(e env, c listenConfig) (*listener, int) {
	target, warning, err := forwardTarget("-forward-to", c.target)
	if err != nil {
		return nil, fail(e, "%v", err)
	}
	start, ok := reportDay(cmpOr(c.since, "today"), e.clock())
	if !ok {
		return nil, fail(e, "-since %q: want YYYY-MM-DD, today or yesterday (a Malaysian day)", c.since)
	}
	key, ok := keyFromEnv(e)
	if !ok {
		return nil, exitUsage
	}
	client, err := c.client.client()
	if err != nil {
		return nil, fail(e, "%v", err)
	}
	st, found := newListenState(), false
	if c.statePath != "" {
		if st, found, err = loadState(c.statePath); err != nil {
			return nil, fail(e, "%v", err)
		}
	}
	if warning != "" {
		fmt.Fprintln(e.stderr, "paygate listen: warning: "+warning)
	}
	return &listener{
		client: client, fwd: newForwarder(key, target, c.timeout), agency: envOr(*c.client.agency, paygate.EnvAgency),
		start: start, now: e.clock, state: st, statePath: c.statePath, baseline: c.since == "" && !found,
		attempts: map[orderID]int{}, held: map[orderID]paygate.Status{}, out: e.stdout, log: e.stderr,
	}, exitOK
}

// cmpOr is s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// redacted is a URL with any password in it replaced.
func redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unreadable URL)"
	}
	return u.Redacted()
}

// pollResult counts what one poll did.
type pollResult struct {
	forwarded, failed, noted int
	// err is the report's, when it could not be read to its end.
	err error
}

// poll reads the report once and forwards each change; it saves the state
// when it changed.
func (l *listener) poll(ctx context.Context) pollResult {
	var res pollResult
	q := paygate.ReportQuery{Start: l.start, End: l.today()}
	unreadable := 0
	for row, err := range l.client.Payments(ctx, q) {
		if errors.Is(err, paygate.ErrReportPastTotalPages) {
			continue // every row came: the server's page count was wrong
		}
		if err != nil {
			res.err = err
			break
		}
		p, err := row.Payment()
		if err != nil {
			unreadable++
			continue
		}
		l.handle(ctx, &p, &res)
	}
	l.report(res, unreadable)
	if res.forwarded+res.noted > 0 && l.statePath != "" {
		if err := l.state.save(l.statePath); err != nil {
			fmt.Fprintf(l.log, "paygate listen: saving -state: %v\n", err)
		}
	}
	return res
}

// today is the start of today's Malaysian day, the report's last day;
// never before the first.
func (l *listener) today() time.Time {
	t, _ := reportDay("today", l.now())
	if t.Before(l.start) {
		return l.start
	}
	return t
}

// report prints what a poll found besides the changes: the baseline, a
// report that failed, rows without a reference.
func (l *listener) report(res pollResult, unreadable int) {
	if l.baseline && res.err == nil {
		fmt.Fprintf(l.log, "paygate listen: baseline: %d orders already in the report, not forwarded (-since DAY forwards them)\n", res.noted)
		l.baseline = false
	}
	if res.err != nil && !errors.Is(res.err, paygate.ErrNoCredential) {
		fmt.Fprintf(l.log, "paygate listen: the report failed, read again at the next poll: %s\n", cliText(res.err.Error()))
	}
	if unreadable != l.unreadable {
		fmt.Fprintf(l.log, "paygate listen: warning: %d report rows without a reference the SDK reads, skipped\n", unreadable)
		l.unreadable = unreadable
	}
}

// handle forwards record p when it is a change: new, or another status
// than the one last forwarded, as a callback rebuilt from the record and
// signed only when Reconcile would act on it (docs/assumptions.md A-listen).
func (l *listener) handle(ctx context.Context, p *paygate.PaymentRecord, res *pollResult) {
	id := orderID{ref: fullRef(p), orderNo: p.OrderNo}
	if last, ok := l.state.forwarded[id]; ok && last == p.Status {
		return
	}
	if rule, ok := holdReason(p, l.agency); !ok {
		if prev, seen := l.held[id]; !rule.quiet && (!seen || prev != p.Status) {
			fmt.Fprintf(l.out, "held back %s: %s; not forwarded (paygate lookup %s shows the record)\n", describe(p), rule.reason, id.ref)
			l.held[id] = p.Status
		}
		return
	}
	if l.baseline {
		l.state.forwarded[id] = p.Status
		res.noted++
		return
	}
	if ctx.Err() != nil {
		return // stopping: no new post
	}
	// A post under way is finished (within -timeout) even when listen is
	// stopped meanwhile, so that a callback the handler took is known as
	// forwarded.
	ans, err := l.fwd.post(context.WithoutCancel(ctx), callbackForm(*p))
	if err == nil && ans.ok() {
		fmt.Fprintf(l.out, "forwarded %s: %v\n", describe(p), ans)
		l.state.forwarded[id] = p.Status
		delete(l.attempts, id)
		res.forwarded++
		return
	}
	l.attempts[id]++
	why := ans.String()
	if err != nil {
		why = cliText(err.Error())
	}
	fmt.Fprintf(l.out, "not forwarded %s: %s (attempt %d; again at the next poll)\n", describe(p), why, l.attempts[id])
	res.failed++
}

// describe names a record in a line: reference, order number, status.
func describe(p *paygate.PaymentRecord) string {
	return fmt.Sprintf("%s %s %s", fullRef(p), cmpOr(p.OrderNo, "-"), cmpOr(string(p.Status), "(no status)"))
}

// finish prints why listen stops and returns its exit status: with a
// poll's result (-once), 1 when something was not forwarded or the report
// failed. The changes left undelivered are named, so that none is lost.
func (l *listener) finish(res pollResult) int {
	left := make([]string, 0, len(l.attempts))
	for id := range l.attempts {
		left = append(left, id.ref)
	}
	slices.Sort(left)
	if len(left) > 0 {
		hint := "paygate replay REF delivers one"
		if l.statePath != "" {
			hint = "the next run with this -state forwards them"
		}
		fmt.Fprintf(l.log, "paygate listen: %d changes not delivered (%s): %v\n", len(left), hint, left)
	}
	if res.failed > 0 || res.err != nil {
		return exitInvalid
	}
	return exitOK
}
