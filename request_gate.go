package paygate

import "context"

// requestGateKey is the context key of a request gate.
type requestGateKey struct{}

// WithRequestGate returns ctx with gate: every request a Client sends under
// it, each retry included, first calls gate(ctx, n), n counting the call's
// attempts from 1, and an error from gate ends the call unsent with that
// error. A caller pacing its requests (watch.Watch's budget) counts them
// here, retries and all.
func WithRequestGate(ctx context.Context, gate func(ctx context.Context, attempt int) error) context.Context {
	return context.WithValue(ctx, requestGateKey{}, gate)
}

// passGate calls ctx's request gate, if any, before attempt n.
func passGate(ctx context.Context, n int) error {
	if gate, ok := ctx.Value(requestGateKey{}).(func(context.Context, int) error); ok {
		return gate(ctx, n)
	}
	return nil
}
