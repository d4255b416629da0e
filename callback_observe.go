package paygate

// The callback path told to the handler's Observer (CallbackHandler.Observer):
// serveObserved wraps ServeHTTP in a callback's start and end and puts an
// observing.Note in the request's context, which the refusals and the event
// (run) fill; a reconciled record gets a start, a note and an end of its own
// in run. A reconciliation is told by reconcileStart and reconciled.

import (
	"context"
	"net/http"

	"github.com/paygate-go/paygate/internal/observing"
	"github.com/paygate-go/paygate/observe"
)

// serveObserved runs serve, telling the Observer of the callback's start
// and end.
func (h *CallbackHandler) serveObserved(w http.ResponseWriter, r *http.Request) {
	ctx := h.Observer.CallbackStart(r.Context(), observe.Callback{Source: observe.SourceCallback})
	n := &observing.Note{}
	if r.Method != http.MethodPost {
		n.Refused(http.StatusMethodNotAllowed, nil)
	}
	h.serve(w, r.WithContext(observing.WithNote(ctx, n)))
	h.Observer.CallbackEnd(ctx, n.Ended())
}

// note is the Note of the request r, or nil when nothing observes it.
func (h *CallbackHandler) note(r *http.Request) *observing.Note {
	if h.Observer == nil {
		return nil
	}
	return observing.From(r.Context())
}

// observedSources names an event's Source to an Observer.
var observedSources = [...]observe.Source{SourceCallback: observe.SourceCallback, SourceLookup: observe.SourceLookup, SourceReport: observe.SourceReport}

// run is process, noted for the handler's Observer when it has one: in the
// request's Note for a callback, in a start, note and end of its own for a
// reconciled record.
func (e event) run(ctx context.Context) verdict {
	if e.h.Observer == nil {
		return e.process(ctx)
	}
	own := e.o.r == nil // a reconciled record, even one reconciled within a callback's hook
	if own {
		e.n = &observing.Note{}
		ctx = e.h.Observer.CallbackStart(ctx, observe.Callback{Source: observedSources[e.cb.Source]})
	} else {
		e.n = observing.From(ctx)
	}
	v := e.process(ctx)
	e.n.Processed(string(v.outcome), v.code)
	if own {
		e.n.End.Status = 0
		e.h.Observer.CallbackEnd(ctx, e.n.End)
	}
	return v
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
