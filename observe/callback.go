package observe

import "time"

// Source is what brought an event to the callback path.
type Source string

// The sources of a callback event.
const (
	// SourceCallback: the gateway's callback, to a CallbackHandler.
	SourceCallback Source = "callback"
	// SourceLookup: an order looked up by Reconcile.
	SourceLookup Source = "lookup"
	// SourceReport: a row of the payment report, by ReconcileReport.
	SourceReport Source = "report"
)

// Callback is an event entering the callback path.
type Callback struct {
	// Source is what brought it.
	Source Source
}

// CallbackEnd is what the callback path made of an event.
type CallbackEnd struct {
	// Verification is how its signature fared (VerifyOK for a record read
	// back from the gateway, which is authenticated by the call).
	Verification Verification
	// Claim is what the Deduper answered to the claim of the event's last
	// action; ClaimNone when no claim was taken.
	Claim Claim
	// Hook is how the hook that ran (Fulfil, OnStatus, OnDoublePayment)
	// ended; HookNone when none ran.
	Hook Hook
	// Outcome is paygate.Outcome's text ("fulfilled", "already_fulfilled",
	// "in_flight", ...); "" for a request refused before its signature was
	// verified or a browser return.
	Outcome string
	// Status is the HTTP status the handler answered; 0 for a
	// reconciliation.
	Status int
	// FulfilLatency is how long Fulfil ran, when it ran.
	FulfilLatency time.Duration
	// Unbounded: a success fulfilled without a fpxTxnTime the replay bound
	// (CallbackHandler.MaxTxnAge) reads; its replays rest on the
	// Deduper's record alone.
	Unbounded bool
}

// Verification is how a callback's signature and shape fared.
type Verification string

// The verification outcomes; every one but VerifyOK is a failure reason.
const (
	// VerifyOK: the signature verified under one of the handler's keys.
	VerifyOK Verification = "ok"
	// VerifyUnsigned: no signature: the buyer's browser return.
	VerifyUnsigned Verification = "unsigned"
	// VerifyMismatch: a signature that verifies under no key.
	VerifyMismatch Verification = "mismatch"
	// VerifyMalformed: a body that is no callback (not a form, a field
	// repeated, a verified callback without the fields to route it by).
	VerifyMalformed Verification = "malformed"
	// VerifyTooLarge: a body over the handler's BodyLimit.
	VerifyTooLarge Verification = "too_large"
	// VerifyMethod: a request that is not a POST.
	VerifyMethod Verification = "method"
	// VerifyNoKey: the handler has no valid key (misconfigured).
	VerifyNoKey Verification = "no_key"
)

// Claim is what a Deduper answered to the claim of an event.
type Claim string

// The claim outcomes.
const (
	// ClaimNone: no claim was taken (a refused request, a record held
	// back, a status without OnStatus).
	ClaimNone Claim = ""
	// ClaimNew: the claim was granted: this delivery acts on the event.
	ClaimNew Claim = "new"
	// ClaimDuplicate: the event was completed before.
	ClaimDuplicate Claim = "duplicate"
	// ClaimInFlight: another delivery holds the claim.
	ClaimInFlight Claim = "in_flight"
	// ClaimLost: the claim was granted but lost before the event's
	// completion was recorded (its lease lapsed and another took it).
	ClaimLost Claim = "lost"
	// ClaimError: the Deduper could not be reached.
	ClaimError Claim = "error"
)

// Hook is how a hook of the handler ended.
type Hook string

// The hook outcomes.
const (
	// HookNone: no hook ran.
	HookNone Hook = ""
	// HookOK: the hook returned nil.
	HookOK Hook = "ok"
	// HookFailed: the hook returned an error or panicked.
	HookFailed Hook = "failed"
)
