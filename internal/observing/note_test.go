package observing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/paygate-go/paygate/internal/signing"
	"github.com/paygate-go/paygate/observe"
	"github.com/stretchr/testify/require"
)

// A refusal is told by the reason its error names, else by its status.
func TestNoteRefused(t *testing.T) {
	tests := []struct {
		status int
		err    error
		want   observe.Verification
	}{
		{http.StatusForbidden, signing.ErrSignatureMismatch, observe.VerifyMismatch},
		{http.StatusForbidden, fmt.Errorf("%w: %w", signing.ErrSignatureMismatch, signing.ErrMultipleValues), observe.VerifyMalformed},
		{http.StatusForbidden, signing.ErrSignatureMissing, observe.VerifyUnsigned},
		{http.StatusInternalServerError, fmt.Errorf("%w: no key", signing.ErrInvalidKey), observe.VerifyNoKey},
		{http.StatusMethodNotAllowed, nil, observe.VerifyMethod},
		{http.StatusRequestEntityTooLarge, errors.New("over"), observe.VerifyTooLarge},
		{http.StatusUnsupportedMediaType, errors.New("json"), observe.VerifyMalformed},
		{http.StatusBadRequest, errors.New("no refNo"), observe.VerifyMalformed},
	}
	for _, tt := range tests {
		n := &Note{}
		n.Refused(tt.status, tt.err)
		require.Equal(t, observe.CallbackEnd{Verification: tt.want, Status: tt.status}, n.Ended(), "%d %v", tt.status, tt.err)
	}
}

// A claim is told by what the Deduper answered; a claim lost later
// overrides a new one.
func TestNoteClaimed(t *testing.T) {
	tests := []struct {
		err           error
		done, granted bool
		lost          bool
		want          observe.Claim
	}{
		{err: errors.New("down"), want: observe.ClaimError},
		{done: true, want: observe.ClaimDuplicate},
		{granted: true, want: observe.ClaimNew},
		{want: observe.ClaimInFlight},
		{granted: true, lost: true, want: observe.ClaimLost},
	}
	for _, tt := range tests {
		n := &Note{}
		n.Claimed(tt.err, tt.done, tt.granted)
		n.ClaimLost(tt.lost)
		require.Equal(t, tt.want, n.End.Claim)
	}
}

// Every method of a nil Note is a no-op, so that an unobserved event
// notes nothing.
func TestNilNote(t *testing.T) {
	var n *Note
	n.Refused(http.StatusForbidden, nil)
	n.Claimed(nil, true, false)
	n.Hooked(nil, false, true, n.Now())
	n.ClaimLost(true)
	n.Processed("fulfilled", http.StatusOK)
	require.True(t, n.Now().IsZero())
	require.Nil(t, From(context.Background()))
}

// A hook's outcome; Fulfil's latency alone is noted.
func TestNoteHooked(t *testing.T) {
	n := &Note{}
	n.Hooked(errors.New("down"), false, false, n.Now())
	require.Equal(t, observe.HookFailed, n.End.Hook)
	require.Zero(t, n.End.FulfilLatency)
	n.Hooked(nil, false, true, n.Now().Add(-1))
	require.Equal(t, observe.HookOK, n.End.Hook)
	require.Positive(t, n.End.FulfilLatency)
	ctx := WithNote(context.Background(), n)
	require.Same(t, n, From(ctx))
}

// A call's route is its target's path, without scheme, host or query.
func TestCallRoute(t *testing.T) {
	tests := map[string]string{
		"https://pay.example.my/api/report/v1/payment":        "/api/report/v1/payment",
		"https://pay.example.my/api/echo?exp=1&signature=abc": "/api/echo",
		"http://127.0.0.1:8080":                               "/",
		"https://pay.example.my/#frag":                        "/",
		"/already/a/path":                                     "/already/a/path",
	}
	for target, want := range tests {
		require.Equal(t, observe.Call{Method: "GET", Route: want}, Call("GET", target), target)
	}
}
