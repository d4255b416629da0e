// Package observing holds the root package's side of the observe hooks:
// what the callback path noted of one event, read into the event an
// Observer is told, and a call's route as an Observer sees it. Nothing
// here runs unless an Observer is set.
package observing

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/signing"
	"github.com/paygate-go/paygate/observe"
)

// Note collects what the callback path made of one event while it runs;
// End is the CallbackEnd it is told as. Every method is a no-op on a nil
// Note, so that the path notes without checking whether it is observed.
type Note struct {
	// End is what the Observer is told at the event's end.
	End observe.CallbackEnd
}

// noteKey is the context key of the *Note of the request being handled.
type noteKey struct{}

// WithNote returns ctx carrying n.
func WithNote(ctx context.Context, n *Note) context.Context {
	return context.WithValue(ctx, noteKey{}, n)
}

// From returns the Note ctx carries, or nil.
func From(ctx context.Context) *Note {
	n, _ := ctx.Value(noteKey{}).(*Note)
	return n
}

// refusedByError are the verification failures an error names, first
// match wins: a repeated field is reported wrapped in a mismatch.
var refusedByError = []struct {
	err error
	v   observe.Verification
}{
	{signing.ErrInvalidKey, observe.VerifyNoKey},
	{signing.ErrSignatureMissing, observe.VerifyUnsigned},
	{signing.ErrMultipleValues, observe.VerifyMalformed},
	{signing.ErrSignatureMismatch, observe.VerifyMismatch},
}

// refusedByStatus are the verification failures of a refusal whose error
// names none, by the status answered; any other is VerifyMalformed.
var refusedByStatus = map[int]observe.Verification{
	http.StatusMethodNotAllowed:      observe.VerifyMethod,
	http.StatusRequestEntityTooLarge: observe.VerifyTooLarge,
}

// Refused notes a request refused with status for err.
func (n *Note) Refused(status int, err error) {
	if n == nil {
		return
	}
	n.End.Status, n.End.Verification = status, observe.VerifyMalformed
	if v, ok := refusedByStatus[status]; ok {
		n.End.Verification = v
	}
	for _, r := range refusedByError {
		if errors.Is(err, r.err) {
			n.End.Verification = r.v
			return
		}
	}
}

// Claimed notes the Deduper's answer to a claim: err when it failed, done
// when the event was completed before, granted when the claim is this
// delivery's.
func (n *Note) Claimed(err error, done, granted bool) {
	if n == nil {
		return
	}
	switch {
	case err != nil:
		n.End.Claim = observe.ClaimError
	case done:
		n.End.Claim = observe.ClaimDuplicate
	case granted:
		n.End.Claim = observe.ClaimNew
	default:
		n.End.Claim = observe.ClaimInFlight
	}
}

// Now is the time a hook starts, on a Note; the zero time on nil.
func (n *Note) Now() time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Now()
}

// Hooked notes a hook that began at began (Now) and returned err; lost
// when err says the claim was lost meanwhile; fulfil when it was Fulfil,
// whose latency is noted.
func (n *Note) Hooked(err error, lost, fulfil bool, began time.Time) {
	if n == nil {
		return
	}
	n.End.Hook = observe.HookOK
	if err != nil {
		n.End.Hook = observe.HookFailed
	}
	if fulfil {
		n.End.FulfilLatency = time.Since(began)
	}
	n.ClaimLost(lost)
}

// Unbounded notes a success fulfilled without a transaction time the
// replay bound reads.
func (n *Note) Unbounded() {
	if n != nil {
		n.End.Unbounded = true
	}
}

// ClaimLost notes, when lost, that the event's claim was lost before its
// completion was recorded.
func (n *Note) ClaimLost(lost bool) {
	if n != nil && lost {
		n.End.Claim = observe.ClaimLost
	}
}

// Processed notes a verified event's outcome and the status answered.
func (n *Note) Processed(outcome string, status int) {
	if n == nil {
		return
	}
	n.End.Verification, n.End.Outcome, n.End.Status = observe.VerifyOK, outcome, status
}

// Ended is the CallbackEnd of a request: a request nothing refused nor
// processed was a browser return, unsigned.
func (n *Note) Ended() observe.CallbackEnd {
	if n.End.Verification == "" {
		n.End.Verification = observe.VerifyUnsigned
	}
	return n.End
}

// Call is the call an Observer is told of: target is the URL called
// without its query, of which the route is the path alone.
func Call(method, target string) observe.Call {
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
		if j := strings.IndexByte(target, '/'); j >= 0 {
			target = target[j:]
		} else {
			target = "/"
		}
	}
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	return observe.Call{Method: method, Route: target}
}
