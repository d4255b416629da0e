package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/observe"
)

// ErrLost is Reschedule's answer when the caller's hold on an order has
// passed to another replica, or the order is no longer awaited.
var ErrLost = errors.New("watch: the order is held by another replica or no longer awaited")

// Watch looks up the orders a merchant awaits until their outcome is known.
// Handler, Client and Store are required; every other field has a default.
// Every replica of a fleet runs its own Watch on one shared Store. Set the
// fields before the first call and do not change them after.
type Watch struct {
	// Handler is the callback path each looked-up record runs through
	// (CallbackHandler.Reconcile). With the in-memory Deduper it must be
	// the very handler that serves the callbacks.
	Handler *paygate.CallbackHandler
	// Client looks the orders up.
	Client *paygate.Client
	// Store keeps the awaited orders and the fleet's budget: a MemoryStore
	// for one process, a database's for a fleet.
	Store Store
	// Schedule is the wait before each lookup, the first counted from the
	// order's creation, each next from the lookup before; the last wait
	// repeats. Empty means the default (docs/assumptions.md
	// A-watch-schedule): 5, 10, 15 and 30 minutes, then 1, 2, 4, 8, 16 and
	// 24 hours.
	Schedule []time.Duration
	// MaxAge is how long an order is awaited; 0 means DefaultMaxAge. Its
	// last lookup is at Created+MaxAge (or at the first pass after it); an
	// order still unsettled then is passed to OnGiveUp.
	MaxAge time.Duration
	// Budget is the fleet's lookup rate; zero means DefaultPerSecond and
	// DefaultBurst. Every replica must give the same.
	Budget Budget
	// Lease is how long a replica holds the order it checks; 0 means
	// DefaultLease. An order whose replica dies is checked again after it.
	// Keep it above the longest lookup (the Client's attempts and waits)
	// and hook (Fulfil): a lease that lapses mid-lookup lets a second
	// replica look the order up too (the Deduper still fulfils once).
	Lease time.Duration
	// Poll is Run's pause between passes; 0 means DefaultPoll.
	Poll time.Duration
	// OnGiveUp is told of every order given up at MaxAge, with the outcome
	// of its last lookup: the merchant must settle it by hand (refund,
	// cancel, ask the gateway). The order leaves the watch only once it
	// returns nil; an error keeps it, to be given up again at the next
	// pass, so a crash or a failed write loses nothing (OnGiveUp may then
	// be told twice). An order whose last lookup failed or met a callback
	// in flight is looked up again for a day past MaxAge first. Optional:
	// the order is logged at error level either way.
	OnGiveUp func(ctx context.Context, o Order, last paygate.ReconcileEntry) error
	// Logger receives one line per order given up or failing to look up;
	// nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock (default time.Now); a test gives a
	// gatewaytest.TestClock's Now.
	Now func() time.Time
	// Observer is told of every lookup: the order's age, its lookups so
	// far and the outcome (observe.WatchCheck; the OpenTelemetry module
	// makes metrics of them). Optional.
	Observer observe.Observer
}

// settled lists the outcomes that end the watch over an order: its
// outcome is known and the callback path has acted on it. Any other
// outcome (pending, not found, unknown status, held back, in flight, an
// error) is looked up again.
var settled = map[paygate.Outcome]bool{
	paygate.OutcomeFulfilled:        true,
	paygate.OutcomeAlreadyFulfilled: true,
	paygate.OutcomeDoublePayment:    true,
	paygate.OutcomeFailed:           true,
}

// Await starts awaiting the order created (or about to be created) with
// refNo, the reference as created (refNo~extraData when it has extra
// data; Callback.CreatedRefNo gives it back). Await before creating the
// order, so that a crash between the two loses nothing: an order never
// created is looked up, found missing, and given up at MaxAge. Awaiting a
// reference already awaited changes nothing.
func (w *Watch) Await(ctx context.Context, refNo string) error {
	if refNo == "" {
		return errors.New("watch: Await: refNo is empty")
	}
	if err := w.check(); err != nil {
		return err
	}
	now := w.now()
	o := Order{RefNo: refNo, Created: now, Next: now.Add(wait(w.Schedule, 0))}
	if err := w.Store.Add(ctx, o); err != nil {
		return fmt.Errorf("watch: Await: %w", err)
	}
	return nil
}

// AwaitOrder awaits o by the reference it is created with: o.RefNo, then
// "~" and o.ExtraData when it has extra data.
func (w *Watch) AwaitOrder(ctx context.Context, o paygate.Order) error {
	ref := o.RefNo
	if o.ExtraData != "" {
		ref += "~" + o.ExtraData
	}
	return w.Await(ctx, ref)
}

// Forget stops awaiting refNo (as created), for an order the merchant
// settled otherwise. Orders settled by a callback need no Forget: the
// watch's next lookup finds them fulfilled and removes them.
func (w *Watch) Forget(ctx context.Context, refNo string) error {
	if err := w.check(); err != nil {
		return err
	}
	return w.Store.Remove(ctx, refNo)
}

// CreatedRefNo returns the reference an awaited order was created with,
// given the reference a callback carries (Callback.RefNo, the base, or
// the whole refNo~extraData): the one the gateway's lookups take. It is
// ref itself when s awaits ref as given or knows no other form, and an
// error naming what to pass when several awaited orders share the base.
func CreatedRefNo(ctx context.Context, s Store, ref string) (string, error) {
	found, err := s.Find(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("watch: finding %q: %w", ref, err)
	}
	var forms []string
	for _, o := range found {
		if o.RefNo == ref {
			return ref, nil
		}
		forms = append(forms, o.RefNo)
	}
	switch len(forms) {
	case 0:
		return ref, nil
	case 1:
		return forms[0], nil
	}
	return "", fmt.Errorf("watch: %d awaited orders have the reference %q (%s): pass the one to look up as created", len(forms), ref, strings.Join(forms, ", "))
}

// Reconcile is CallbackHandler.Reconcile on the watch's handler and
// client, for references as callbacks carry them: each is first turned
// into the reference as created (CreatedRefNo on Store), so the base reference a
// ledger keeps is enough for an awaited order. A reference the watch
// cannot resolve is reported as OutcomeError with why, after the others.
func (w *Watch) Reconcile(ctx context.Context, refNos []string) (*paygate.Reconciliation, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	created := make([]string, 0, len(refNos))
	rec := &paygate.Reconciliation{Counts: map[paygate.Outcome]int{}}
	var unresolved []paygate.ReconcileEntry
	for _, ref := range refNos {
		c, err := CreatedRefNo(ctx, w.Store, ref)
		if err != nil {
			unresolved = append(unresolved, paygate.ReconcileEntry{RefNo: ref, Outcome: paygate.OutcomeError, Err: err})
			continue
		}
		created = append(created, c)
	}
	looked, err := w.Handler.Reconcile(ctx, w.Client, created)
	if looked != nil {
		rec = looked
	}
	for _, e := range unresolved {
		rec.Entries = append(rec.Entries, e)
		rec.Counts[e.Outcome]++
	}
	return rec, err
}

// List returns up to limit awaited orders, the earliest due first.
func (w *Watch) List(ctx context.Context, limit int) ([]Order, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	return w.Store.List(ctx, limit)
}

// Run checks due orders until ctx ends, pausing Poll between passes, and
// returns ctx's error. A pass that fails (the Store unreachable) is logged
// and tried again at the next one.
func (w *Watch) Run(ctx context.Context) error {
	if err := w.check(); err != nil {
		return err
	}
	t := time.NewTicker(orDefault(w.Poll, DefaultPoll))
	defer t.Stop()
	for {
		if _, err := w.Step(ctx); err != nil && ctx.Err() == nil {
			w.logger().Error("watch: pass failed; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Pass counts what one Step did.
type Pass struct {
	// Checked counts the lookups; Settled, Rescheduled and GivenUp what
	// came of them.
	Checked, Settled, Rescheduled, GivenUp int
}

// Step checks the orders due now, one at a time, as many as the budget
// allows, and returns what it did. Run calls it; a test calls it after
// moving its clock. Each order is taken just before its lookup, so its
// lease covers one lookup and its hooks, never a queue of others.
func (w *Watch) Step(ctx context.Context) (Pass, error) {
	var p Pass
	if err := w.check(); err != nil {
		return p, err
	}
	for more := true; more && ctx.Err() == nil; {
		var err error
		if more, err = w.stepOne(ctx, &p); err != nil {
			return p, err
		}
	}
	return p, ctx.Err()
}

// stepOne takes the earliest due order and, within the budget, checks it;
// more is false when nothing is due or the budget is spent.
func (w *Watch) stepOne(ctx context.Context, p *Pass) (more bool, err error) {
	now := w.now()
	due, err := w.Store.Take(ctx, now, 1, orDefault(w.Lease, DefaultLease))
	if err != nil || len(due) == 0 {
		return false, err
	}
	o := due[0]
	granted, err := w.Store.Spend(ctx, now, w.budget(), 1)
	if err != nil || granted == 0 {
		// Over budget (or no budget to be had): back to the queue, due now.
		o.Next = now
		return false, errors.Join(err, notLost(w.Store.Reschedule(ctx, o)))
	}
	return true, w.checkOrder(ctx, o, p)
}

// giveUpGrace is how long past MaxAge an order whose last lookup failed
// (OutcomeError) or met a callback in flight is looked up again before it
// is given up: a gateway outage at the maximum age does not give up a
// paid order.
const giveUpGrace = 24 * time.Hour

// transient lists the outcomes that prove nothing about the order.
var transient = map[paygate.Outcome]bool{paygate.OutcomeError: true, paygate.OutcomeInFlight: true}

// checkOrder looks o up and acts on what the callback path made of it.
func (w *Watch) checkOrder(ctx context.Context, o Order, p *Pass) error {
	p.Checked++
	rec, err := w.Handler.Reconcile(ctx, w.Client, []string{o.RefNo})
	if err != nil {
		return err // ctx ended: the lease lapses and another pass takes o
	}
	last := rec.Entries[0]
	now := w.now()
	end := o.Created.Add(orDefault(w.MaxAge, DefaultMaxAge))
	if transient[last.Outcome] {
		end = end.Add(giveUpGrace)
	}
	seen := observe.WatchCheck{Outcome: string(last.Outcome), Age: now.Sub(o.Created), Checks: o.Checks + 1,
		Settled: settled[last.Outcome], GivenUp: !settled[last.Outcome] && !now.Before(end)}
	if w.Observer != nil {
		w.Observer.WatchCheck(ctx, seen)
	}
	o.Checks++
	switch {
	case seen.Settled:
		p.Settled++
		return notLost(w.Store.Finish(ctx, o))
	case seen.GivenUp:
		if err := w.giveUp(ctx, o, last); err != nil {
			// Not handed over: kept, and given up again at the next pass.
			o.Next = now
			return errors.Join(err, notLost(w.Store.Reschedule(ctx, o)))
		}
		p.GivenUp++
		return notLost(w.Store.Finish(ctx, o))
	}
	p.Rescheduled++
	o.Next = now.Add(wait(w.Schedule, o.Checks))
	if o.Next.After(end) {
		o.Next = end
	}
	return notLost(w.Store.Reschedule(ctx, o))
}

// notLost is err, but nil for ErrLost: the order passed to another
// replica (its lease lapsed), which now checks it.
func notLost(err error) error {
	if errors.Is(err, ErrLost) {
		return nil
	}
	return err
}

// giveUp logs o and hands it to OnGiveUp.
func (w *Watch) giveUp(ctx context.Context, o Order, last paygate.ReconcileEntry) error {
	w.logger().ErrorContext(ctx, "watch: order given up at its maximum age; settle it by hand",
		"refNo", o.RefNo, "created", o.Created, "checks", o.Checks, "outcome", string(last.Outcome))
	if w.OnGiveUp == nil {
		return nil
	}
	return w.OnGiveUp(ctx, o, last)
}

// check says which required field is missing.
func (w *Watch) check() error {
	switch {
	case w.Handler == nil:
		return errors.New("watch: Watch.Handler is nil; set the CallbackHandler that serves the callbacks")
	case w.Client == nil:
		return errors.New("watch: Watch.Client is nil; set the Client that looks orders up")
	case w.Store == nil:
		return errors.New("watch: Watch.Store is nil; set a MemoryStore (one process) or a shared store (a fleet)")
	case w.Budget != (Budget{}) && (w.Budget.Burst < 1 || !(w.Budget.PerSecond > 0)):
		return errors.New("watch: Watch.Budget needs Burst of at least 1 and PerSecond above 0 (or both zero for the default)")
	case w.MaxAge < 0 || w.Lease < 0 || w.Poll < 0:
		return errors.New("watch: Watch.MaxAge, Lease and Poll must not be negative (0: the default)")
	case slices.ContainsFunc(w.Schedule, func(d time.Duration) bool { return d <= 0 }):
		return errors.New("watch: Watch.Schedule's waits must be positive")
	}
	return nil
}

func (w *Watch) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Watch) budget() Budget {
	if w.Budget == (Budget{}) {
		return Budget{PerSecond: DefaultPerSecond, Burst: DefaultBurst}
	}
	return w.Budget
}

func (w *Watch) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// orDefault is d, or def when d is 0.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
