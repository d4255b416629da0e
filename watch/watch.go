package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
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
	// Budget is the fleet's rate of requests to the gateway, each retry of
	// the Client counted (WithRequestGate); zero means DefaultPerSecond and
	// DefaultBurst. Every replica must give the same.
	Budget Budget
	// Lease is how long a replica's hold on the order it checks lasts
	// unrenewed; 0 means DefaultLease. The replica renews it every Lease/3
	// while the lookup and its hooks run, so an order whose replica died
	// is checked again within about Lease (plus Poll); keep it far above
	// one round trip to the Store.
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
// settled otherwise. Orders settled by a callback need no Forget: with
// the watch as CallbackHandler.Settler they leave at once (Settled), and
// without it at the watch's next lookup.
func (w *Watch) Forget(ctx context.Context, refNo string) error {
	if err := w.check(); err != nil {
		return err
	}
	return w.Store.Remove(ctx, refNo)
}

// Settled implements paygate.Settler: with the watch as the handler's
// Settler, an order its callback settled (fulfilled, paid twice, failed)
// leaves the watch then and costs no lookup. pgstore's FulfilTx and
// FulfilPgx remove it in the fulfilment's own transaction when the Store
// is a WatchStore on the Deduper's *sql.DB.
func (w *Watch) Settled(ctx context.Context, cb *paygate.Callback) error {
	if w.Store == nil {
		return errors.New("watch: Watch.Store is nil")
	}
	return w.Store.Remove(ctx, cb.CreatedRefNo())
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
	due, err := w.Store.Take(ctx, now, 1, w.lease())
	if err != nil || len(due) == 0 {
		return false, err
	}
	o := due[0]
	granted, err := w.Store.Spend(ctx, now, w.budget(), 1)
	if err != nil || granted == 0 {
		return false, errors.Join(err, w.backToQueue(ctx, o))
	}
	return w.checkOrder(ctx, o, p)
}

// backToQueue puts o back, due now, its lookups unchanged: over budget (or
// no budget to be had).
func (w *Watch) backToQueue(ctx context.Context, o Order) error {
	o.Next = w.now()
	return notLost(w.Store.Reschedule(ctx, o))
}

// errOverBudget ends a lookup whose retry the fleet's budget cannot pay.
var errOverBudget = errors.New("watch: the fleet's request budget is spent")

// giveUpGrace is how long past MaxAge an order whose last lookup failed
// (OutcomeError) or met a callback in flight is looked up again before it
// is given up: a gateway outage at the maximum age does not give up a
// paid order.
const giveUpGrace = 24 * time.Hour

// transient lists the outcomes that prove nothing about the order.
var transient = map[paygate.Outcome]bool{paygate.OutcomeError: true, paygate.OutcomeInFlight: true}

// lookUp looks o up through the callback path, holding o meanwhile
// (keepHeld) and paying each retry of the Client from the budget, its
// first attempt being paid by stepOne. lost: o passed to another replica.
func (w *Watch) lookUp(ctx context.Context, o Order) (last paygate.ReconcileEntry, lost bool, err error) {
	lctx, stop := w.keepHeld(ctx, o)
	defer stop()
	lctx = paygate.WithRequestGate(lctx, func(ctx context.Context, attempt int) error {
		if attempt == 1 {
			return nil
		}
		granted, err := w.Store.Spend(ctx, w.now(), w.budget(), 1)
		if err == nil && granted == 0 {
			err = errOverBudget
		}
		return err
	})
	rec, err := w.Handler.Reconcile(lctx, w.Client, []string{o.RefNo})
	switch {
	case ctx.Err() != nil:
		return last, false, ctx.Err() // the hold lapses and another pass takes o
	case errors.Is(context.Cause(lctx), ErrLost):
		// Before err == nil: a lookup cut short by the lost hold ends in an
		// entry (OutcomeError), not an error, and what it saw is the new
		// holder's to act on, never this replica's (no give-up from it).
		return last, true, nil
	case err == nil:
		return rec.Entries[0], false, nil
	}
	return last, false, err
}

// keepHeld renews the hold on o every Lease/3 until stop, and cancels the
// returned context once a renewal finds o lost. A failed renewal is tried
// again at the next tick.
func (w *Watch) keepHeld(ctx context.Context, o Order) (held context.Context, stop func()) {
	lease := w.lease()
	held, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-held.Done():
				return
			case <-t.C:
				if err := w.Store.Hold(held, o, w.now().Add(lease)); errors.Is(err, ErrLost) {
					cancel(ErrLost)
					return
				}
			}
		}
	})
	return held, func() { close(done); wg.Wait(); cancel(nil) }
}

// checkOrder looks o up and acts on what the callback path made of it;
// more is false when the budget could not pay a retry.
func (w *Watch) checkOrder(ctx context.Context, o Order, p *Pass) (more bool, err error) {
	p.Checked++
	last, lost, err := w.lookUp(ctx, o)
	switch {
	case err != nil:
		return false, err
	case lost: // another replica checks it now
		return true, nil
	case last.Outcome == paygate.OutcomeError && errors.Is(last.Err, errOverBudget):
		return false, w.backToQueue(ctx, o)
	}
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
		return true, notLost(w.Store.Finish(ctx, o))
	case seen.GivenUp:
		if err := w.giveUp(ctx, o, last); err != nil {
			// Not handed over: kept, and given up again at the next pass.
			o.Next = now
			return true, errors.Join(err, notLost(w.Store.Reschedule(ctx, o)))
		}
		p.GivenUp++
		return true, notLost(w.Store.Finish(ctx, o))
	}
	p.Rescheduled++
	o.Next = now.Add(wait(w.Schedule, o.Checks))
	if o.Next.After(end) {
		o.Next = end
	}
	return true, notLost(w.Store.Reschedule(ctx, o))
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

func (w *Watch) lease() time.Duration { return orDefault(w.Lease, DefaultLease) }

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
