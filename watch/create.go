package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/paygate-go/paygate"
)

// CreateOrder is the one call that creates an order under the watch: it
// awaits o (AwaitOrder), then creates it with the watch's Client. A create
// that failed for sure (Refused: o invalid and never sent, or a refusal
// the gateway proves) is forgotten again and its error returned; any other
// error leaves o awaited, since the order may exist: the watch looks it up
// and settles it, or gives it up at MaxAge (docs/assumptions.md
// A-watch-create).
func (w *Watch) CreateOrder(ctx context.Context, o paygate.Order) (*paygate.CheckoutResult, error) {
	if err := w.AwaitOrder(ctx, o); err != nil {
		return nil, err
	}
	res, err := w.Client.CreateOrder(ctx, o)
	if err == nil || !Refused(err) {
		return res, err
	}
	if ferr := w.Forget(context.WithoutCancel(ctx), createdRef(o)); ferr != nil {
		return nil, fmt.Errorf("%w (and it is still awaited, to be given up at MaxAge: %w)", err, ferr)
	}
	return nil, err
}

// createdRef is the reference o is created with.
func createdRef(o paygate.Order) string {
	if o.ExtraData != "" {
		return o.RefNo + "~" + o.ExtraData
	}
	return o.RefNo
}

// Refused reports whether err, from Client.CreateOrder, proves that no
// order was created: the order was refused before it was sent (a
// *paygate.ValidationError, a missing setting), or the gateway answered a
// 4xx that create-or-find let stand, other than 408, 409, 425 and 429,
// which do not prove the order unstored (docs/assumptions.md
// A-watch-create). A create whose outcome is unknown
// (paygate.ErrCreateUnconfirmed, a 5xx, a lost answer) is not refused.
func Refused(err error) bool {
	var ve *paygate.ValidationError
	var ae *paygate.APIError
	switch {
	case err == nil, errors.Is(err, paygate.ErrCreateUnconfirmed):
		return false
	case errors.As(err, &ve), errors.Is(err, paygate.ErrNoCredential), errors.Is(err, paygate.ErrInvalidAmount):
		return true
	case errors.As(err, &ae):
		return ae.StatusCode/100 == 4 && !notProof[ae.StatusCode]
	}
	return false
}

// notProof lists the 4xx answers that do not prove an order unstored: a
// timeout, a conflict (the reference may be taken by this very order), too
// early, too many requests.
var notProof = map[int]bool{
	http.StatusRequestTimeout: true, http.StatusConflict: true,
	http.StatusTooEarly: true, http.StatusTooManyRequests: true,
}
