package observe

import (
	"context"
	"reflect"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// events are every type an Observer is given.
var events = []any{Call{}, Retry{}, CallEnd{}, Callback{}, CallbackEnd{}, Send{}, SendEnd{}, Reconcile{}, ReconcileEntry{}, ReconcileEnd{}, WatchCheck{}, OutboxRound{}, OutboxStats{}}

// secretName matches a field name that could hold what an event must not.
var secretName = regexp.MustCompile(`(?i)ref|order|amount|mail|key|token|password|signature|secret|url|query|body|header|err`)

// plainStrings are the only fields of type string: both fixed by the
// SDK's configuration, never by a payment.
var plainStrings = map[string]bool{"Call.Method": true, "Call.Route": true, "CallbackEnd.Outcome": true, "ReconcileEntry.Outcome": true, "WatchCheck.Outcome": true}

// No event can carry a reference, an amount or a credential: its fields
// are counts, durations, flags and this package's own words, but for the
// call's method and route and paygate.Outcome's text.
func TestEventsHoldNoSecret(t *testing.T) {
	for _, e := range events {
		typ := reflect.TypeOf(e)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := typ.Name() + "." + f.Name
			require.False(t, secretName.MatchString(f.Name), "%s: a name for what an event must not hold", name)
			switch k := f.Type.Kind(); {
			case k == reflect.String && f.Type.PkgPath() == "":
				require.True(t, plainStrings[name], "%s: a plain string, which could hold anything", name)
			case k == reflect.String:
				require.Equal(t, reflect.TypeOf(Source("")).PkgPath(), f.Type.PkgPath(), "%s: a string type of another package", name)
			default:
				require.Contains(t, []reflect.Kind{reflect.Int, reflect.Int64, reflect.Bool}, k, "%s: %s", name, f.Type)
			}
		}
	}
}

// Base takes every event and returns the context it was given.
func TestBase(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, 1)
	var o Observer = Base{}
	require.Equal(t, ctx, o.CallStart(ctx, Call{}))
	require.Equal(t, ctx, o.CallbackStart(ctx, Callback{}))
	require.Equal(t, ctx, o.SendStart(ctx, Send{}))
	require.Equal(t, ctx, o.ReconcileStart(ctx, Reconcile{}))
	o.CallRetry(ctx, Retry{})
	o.CallEnd(ctx, CallEnd{})
	o.CallbackEnd(ctx, CallbackEnd{})
	o.SendEnd(ctx, SendEnd{})
	o.ReconcileEntry(ctx, ReconcileEntry{})
	o.ReconcileEnd(ctx, ReconcileEnd{})
	o.WatchCheck(ctx, WatchCheck{})
	o.OutboxRound(ctx, OutboxRound{})
	o.OutboxStats(ctx, OutboxStats{})
}
