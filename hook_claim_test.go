package paygate

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

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
			h := &CallbackHandler{Keys: []Key{key}, Deduper: d, Fulfil: func(ctx context.Context, cb *Callback) error {
				c, ok := HookClaimFrom(ctx)
				require.True(t, ok, "the hook's ctx carries its claim")
				got = c
				if tt.markCompleted {
					c.Completed()
				}
				return nil
			}}
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
