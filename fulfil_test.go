package paygate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// completionCounter is a Deduper that counts Complete calls.
type completionCounter struct {
	MemoryDeduper
	completes int
}

func (c *completionCounter) Complete(ctx context.Context, key, token, result string) error {
	c.completes++
	return c.MemoryDeduper.Complete(ctx, key, token, result)
}

// Every hook runs under its HookClaim; a hook that says it completed the
// event itself spares the handler's Complete, one that does not gets it.
func TestHookClaim(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	tests := []struct {
		name          string
		markCompleted bool
		wantCompletes int
	}{
		{name: "handler completes", wantCompletes: 1},
		{name: "hook completed in its own transaction", markCompleted: true, wantCompletes: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &completionCounter{}
			var got HookClaim
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Fulfil: FulfilFunc(func(ctx context.Context, cb *Callback) error {
				c, ok := HookClaimFrom(ctx)
				require.True(t, ok, "the hook's ctx carries its claim")
				got = c
				if tt.markCompleted {
					c.Completed()
				}
				return nil
			})}
			h.Logger = slog.New(slog.DiscardHandler)
			rec := serve(h, signedRequest(t, key, callbackFields("R1~x", "O1", StatusSuccess, "00")))
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, "fulfil|R1", got.Key)
			require.Equal(t, "O1", got.Result)
			require.NotEmpty(t, got.Token)
			require.Equal(t, tt.wantCompletes, d.completes)
		})
	}
	_, ok := HookClaimFrom(context.Background())
	require.False(t, ok)
	HookClaim{}.Completed() // outside a handler: nothing to mark, no panic
}

// requestValueKey is a value a middleware put in the request's context.
type requestValueKey struct{}

// A context a hook derives from its own (as a database driver does) still
// carries the claim and the request's values, has the hook's deadline, and
// is cancelled with the hook's, with its cause, when the claim is lost.
func TestHookContextDerived(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	var claim HookClaim
	var claimed bool
	var value any
	var deadline time.Time
	var cause error
	h := &CallbackHandler{Keys: []Key{key}, Deduper: &losingDeduper{renewErr: ErrClaimLost}, Lease: 150 * time.Millisecond,
		HookTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler),
		Fulfil: FulfilFunc(func(ctx context.Context, _ *Callback) error {
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			claim, claimed = HookClaimFrom(child)
			value = child.Value(requestValueKey{})
			deadline, _ = child.Deadline()
			select {
			case <-child.Done():
				cause = context.Cause(child)
				return child.Err()
			case <-time.After(2 * time.Second): // a bound: the first renewal, due in 50 ms, loses the claim
				return errors.New("the derived context was not cancelled within 2 s of the claim's loss")
			}
		})}
	r := signedRequest(t, key, callbackFields("INV-D", "GWD", StatusSuccess, "00"))
	r = r.WithContext(context.WithValue(r.Context(), requestValueKey{}, "from the middleware"))
	require.Equal(t, http.StatusInternalServerError, serve(h, r).Code)
	require.True(t, claimed)
	require.Equal(t, "fulfil|INV-D", claim.Key)
	require.Equal(t, "from the middleware", value)
	require.WithinDuration(t, time.Now().Add(time.Minute), deadline, 10*time.Second)
	require.ErrorIs(t, cause, ErrClaimLost)
}
