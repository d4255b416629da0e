package observe

// Reconcile is a reconciliation: Reconcile (references looked up one by
// one) or ReconcileReport (the payment report walked).
type Reconcile struct {
	// Source is SourceLookup for Reconcile, SourceReport for
	// ReconcileReport.
	Source Source
}

// ReconcileEntry is one settled reference or report row.
type ReconcileEntry struct {
	// Outcome is paygate.Outcome's text ("fulfilled", "not_found",
	// "held_back", ...).
	Outcome string
}

// ReconcileEnd is how a reconciliation ended.
type ReconcileEnd struct {
	// Entries is how many entries it settled.
	Entries int
	// Failed is set when it returned an error (the context's, or the
	// report's).
	Failed bool
}
