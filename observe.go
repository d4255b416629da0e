package paygate

// A call told to the transport's Observer (WithObserver): do hands an
// observed exchange to observed, which tells its start and end around run;
// run tells each retry. Without an Observer, do is run and each hook a nil
// check.

import (
	"context"
	"errors"

	"github.com/paygate-go/paygate/internal/observing"
	"github.com/paygate-go/paygate/observe"
)

// WithObserver tells o of every call a Client or a WebhookSender makes,
// of its retries and their waits, and of each WebhookSender.Send (package
// observe says what an event holds: never a reference, an amount or a
// credential). A CallbackHandler takes its own (its Observer field); its
// Reconcile uses the Client's when it has none.
func WithObserver(o observe.Observer) TransportOption {
	return func(t *transport) error {
		if o == nil {
			return errors.New("paygate: WithObserver: nil observer")
		}
		t.observer = o
		return nil
	}
}

// observed runs x as run does, telling the Observer of its start and end.
func (t *transport) observed(ctx context.Context, x exchange) (*response, error) {
	ctx = t.observer.CallStart(ctx, observing.Call(x.method, x.target))
	resp, err := t.run(ctx, x)
	end := observe.CallEnd{Class: callClass(ctx, err)}
	var ae *attemptsError
	switch {
	case resp != nil:
		end.Attempts, end.Status = resp.Attempts, resp.StatusCode
	case errors.As(err, &ae):
		end.Attempts, end.Status = ae.attempts, answerStatus(ae.last)
	}
	t.observer.CallEnd(ctx, end)
	return resp, err
}

// callClass is how a call that ended with err failed.
func callClass(ctx context.Context, err error) observe.ErrorClass {
	var te *transportError
	switch {
	case err == nil:
		return observe.ClassOK
	case answerStatus(err) != 0:
		return observe.ClassAnswer
	case ctx.Err() != nil:
		return observe.ClassContext
	case errors.As(err, &te):
		return observe.ClassTransport
	}
	return observe.ClassRequest
}
