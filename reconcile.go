package paygate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paygate-go/paygate/observe"
)

// DefaultReconcileInterval is the pause between two lookups of Reconcile
// unless CallbackHandler.ReconcileInterval says otherwise: ten lookups a
// second, gentle on the gateway's reports host.
const DefaultReconcileInterval = 100 * time.Millisecond

// reconcileInterval is ReconcileInterval, DefaultReconcileInterval when
// unset, or 0 (no pause) when negative.
func (h *CallbackHandler) reconcileInterval() time.Duration {
	switch {
	case h.ReconcileInterval < 0:
		return 0
	case h.ReconcileInterval == 0:
		return DefaultReconcileInterval
	}
	return h.ReconcileInterval
}

// Reconciliation is what Reconcile or ReconcileReport did: one entry per
// reference or report row, in order, and how many of each outcome.
type Reconciliation struct {
	// Entries holds one entry per reference asked for (Reconcile) or row
	// read (ReconcileReport).
	Entries []ReconcileEntry
	// Counts is the number of entries of each outcome.
	Counts map[Outcome]int
}

// add appends e and counts its outcome.
func (r *Reconciliation) add(e ReconcileEntry) {
	r.Entries = append(r.Entries, e)
	r.Counts[e.Outcome]++
}

// ReconcileEntry is the outcome of one awaited reference or report row.
type ReconcileEntry struct {
	// RefNo is the reference as asked for (Reconcile), or the row's base
	// reference (ReconcileReport).
	RefNo string
	// OrderNo is the gateway's order number, when a record was read.
	OrderNo string
	// Status is the record's status, when a record was read.
	Status Status
	// Amount is the record's amount in sen, when a record was read.
	Amount Amount
	// Outcome is what the callback path made of the record.
	Outcome Outcome
	// PaidOrderNo is the orderNo that fulfilled the refNo, with
	// OutcomeAlreadyFulfilled and OutcomeDoublePayment.
	PaidOrderNo string
	// Stale is set when a pending or failed record came after the refNo's
	// fulfilment (docs/assumptions.md A-stale-status).
	Stale bool
	// Problems says why a record was held back, or what did not parse.
	Problems []FieldError
	// Err is the cause of OutcomeError, OutcomeNotFound or a record that
	// could not be read.
	Err error
}

// Reconcile looks each reference up at the gateway, as the order was
// created (refNo, or refNo~extraData), and runs the callback path on the
// answer: the same Deduper key and hooks, so a callback and a
// reconciliation racing fulfil once when they share the Deduper.
// Callback.Source is SourceLookup. A record that cannot be trusted is held
// back (OutcomeHeldBack; docs/assumptions.md A-lookup, A-reconcile).
// Lookups are paced by ReconcileInterval; the error is ctx's, with the
// entries done so far.
func (h *CallbackHandler) Reconcile(ctx context.Context, c *Client, refNos []string) (rec *Reconciliation, err error) {
	if c == nil {
		return nil, errors.New("paygate: Reconcile needs a Client")
	}
	rec = &Reconciliation{Counts: map[Outcome]int{}}
	ctx, o := h.reconcileStart(ctx, c, SourceLookup)
	if o != nil {
		defer func() { reconciled(ctx, o, rec, err) }()
	}
	for i, ref := range refNos {
		if i > 0 { // paced by ReconcileInterval; a wait ended by ctx is caught next
			_ = sleepCtx(ctx, h.reconcileInterval())
		}
		if err := ctx.Err(); err != nil {
			return rec, err
		}
		rec.add(h.reconcileRef(ctx, c, ref))
	}
	return rec, nil
}

// ReconcileReport walks the payment report for q (Client.Payments: a day
// range, docs/protocol.md "Payment report") and runs each row through the
// callback path as Reconcile does (Callback.Source SourceReport): paid rows
// the merchant has not fulfilled are fulfilled, once; rows already
// fulfilled are counted as such. A row is held back by the rules of
// Reconcile. The error is the report's or ctx's, with the entries done so
// far.
func (h *CallbackHandler) ReconcileReport(ctx context.Context, c *Client, q ReportQuery) (rec *Reconciliation, err error) {
	if c == nil {
		return nil, errors.New("paygate: ReconcileReport needs a Client")
	}
	rec = &Reconciliation{Counts: map[Outcome]int{}}
	ctx, o := h.reconcileStart(ctx, c, SourceReport)
	if o != nil {
		defer func() { reconciled(ctx, o, rec, err) }()
	}
	for row, err := range c.Payments(ctx, q) {
		if err != nil {
			return rec, err
		}
		p, err := row.Payment()
		if err != nil {
			rec.add(ReconcileEntry{Outcome: OutcomeHeldBack, Err: err})
			continue
		}
		rec.add(h.reconcileRecord(ctx, c, &p, SourceReport, ""))
	}
	return rec, ctx.Err()
}

// reconcileRef looks one awaited reference up and runs its record through
// the callback path.
func (h *CallbackHandler) reconcileRef(ctx context.Context, c *Client, ref string) ReconcileEntry {
	r, err := c.LookupOrderByRefNo(ctx, ref)
	switch {
	case errors.Is(err, ErrOrderNotFound):
		if _, extra := SplitRefNo(ref); extra == "" {
			err = fmt.Errorf("%w (if the order was created with extra data, give refNo~extraData)", err)
		}
		return ReconcileEntry{RefNo: ref, Outcome: OutcomeNotFound, Err: err}
	case err != nil:
		return ReconcileEntry{RefNo: ref, Outcome: OutcomeError, Err: err}
	}
	p, err := r.Payment()
	if err != nil {
		return ReconcileEntry{RefNo: ref, Outcome: OutcomeHeldBack, Err: err}
	}
	e := h.reconcileRecord(ctx, c, &p, SourceLookup, ref)
	e.RefNo = ref
	return e
}

// reconcileRecord runs one record of the gateway through the callback
// path, unless a rule of Reconcile holds it back. asked is the reference
// looked up ("" for a report row).
func (h *CallbackHandler) reconcileRecord(ctx context.Context, c *Client, p *PaymentRecord, source Source, asked string) ReconcileEntry {
	e := ReconcileEntry{RefNo: p.RefNo, OrderNo: p.OrderNo, Status: p.Status, Amount: p.Amount, Problems: p.Problems}
	if held := holdBack(p, c.agency, asked); len(held) > 0 {
		e.Outcome, e.Problems = OutcomeHeldBack, append(held, p.Problems...)
		h.logAt(ctx, origin{source: source}, slog.LevelWarn, "gateway record held back: not acted on; review it",
			"refNo", p.RefNo, "orderNo", p.OrderNo, "status", string(p.Status), "problems", fmt.Sprint(e.Problems))
		return e
	}
	v := h.newEvent(p.callback(source), origin{source: source}).run(ctx)
	e.Outcome, e.PaidOrderNo, e.Stale, e.Err = v.outcome, v.paid, v.stale, v.err
	return e
}

// holdBack lists why a record must not be acted on (docs/assumptions.md
// A-reconcile): another reference than the one asked for, another agency
// than the client's, a status nobody can prove, or a success whose amount
// is absent or whose money fields did not parse or contradict each other.
func holdBack(p *PaymentRecord, agency, asked string) []FieldError {
	var held []FieldError
	if base, _ := SplitRefNo(asked); asked != "" && base != p.RefNo {
		held = append(held, newFieldError("refNo", "is not the reference looked up ("+asked+")", p.RefNo))
	}
	if agency != "" && p.Agency != "" && p.Agency != agency {
		held = append(held, newFieldError("agency", "is not the client's agency ("+agency+")", p.Agency))
	}
	switch {
	case !p.Status.Valid():
		return append(held, newFieldError("status", "cannot be proved: the outcome is unconfirmed", string(p.Status)))
	case p.Status != StatusSuccess:
		return held
	case p.Amount <= 0:
		held = append(held, newFieldError("amount", "absent or zero on a success: nothing to check the payment against", p.Amount.String()))
	}
	for _, fe := range p.Problems {
		if !displayOnlyRecordFields[fe.Field] {
			held = append(held, newFieldError(fe.Field, "did not parse or contradicts another field on a success", ""))
			break
		}
	}
	return held
}

// displayOnlyRecordFields are the record fields whose problems do not
// touch money: a success is acted on despite them.
var displayOnlyRecordFields = map[string]bool{
	"fpx_txn_time": true, "fpxTxnTime": true, "created_at": true, "created_date": true,
	"fpx_txn_id": true, "fpx_fpx_txn_id": true, "fpxTxnId": true,
}

// callback is the record as the callback path reads an event: verified
// (the gateway's authenticated answer), from source.
func (p *PaymentRecord) callback(source Source) *Callback {
	cb := &Callback{
		Status: p.Status, OrderNo: p.OrderNo, RefNo: p.RefNo, ExtraData: p.ExtraData,
		Amount: p.Amount, FPXTxnID: p.FPXTxnID, Agency: p.Agency,
		FPX:      FPXDetail{Present: p.HasFPXCode, DebitAuthCode: p.FPXCode, HasDebitAuthCode: p.HasFPXCode},
		Problems: p.Problems, Verified: true, Source: source,
	}
	if !p.Time.IsZero() {
		cb.FPXTxnTime = p.Time.Format(time.RFC3339)
	}
	return cb
}

// reconcileStart tells the Observer of a reconciliation (the handler's,
// else c's) that it starts; nil when none observes it.
func (h *CallbackHandler) reconcileStart(ctx context.Context, c *Client, s Source) (context.Context, observe.Observer) {
	o := h.Observer
	if o == nil {
		o = c.transport.observer
	}
	if o == nil {
		return ctx, nil
	}
	return o.ReconcileStart(ctx, observe.Reconcile{Source: observedSources[s]}), o
}

// reconciled tells o of each entry of rec and of its end with err.
func reconciled(ctx context.Context, o observe.Observer, rec *Reconciliation, err error) {
	for _, e := range rec.Entries {
		o.ReconcileEntry(ctx, observe.ReconcileEntry{Outcome: string(e.Outcome)})
	}
	o.ReconcileEnd(ctx, observe.ReconcileEnd{Entries: len(rec.Entries), Failed: err != nil})
}
