package paygate

// CreateOrder and create-or-find (docs/assumptions.md A-create-or-find):
// the gateway takes no idempotency key, so the order's reference stands in
// for one. A POST that may have reached the gateway but got no answer is
// followed by a lookup of the reference, and sent again only if none is
// found; a re-send refused (4xx) is looked up once more, since the earlier
// POST, in flight at the first lookup, may have landed and taken it.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// CheckoutResult is the gateway's answer to CreateOrder. The protocol does
// not show the response shape (docs/assumptions.md A-checkout-answer), so it
// is kept as received.
type CheckoutResult struct {
	// Found: a POST's answer was lost and the lookup by the order's
	// reference found the order (docs/assumptions.md A-create-or-find);
	// Record is then set and the fields below are zero.
	Found bool
	// Record is the found order, LookupOrderByRefNo's answer; nil unless Found.
	Record *OrderRecord
	// StatusCode is 2xx, or a redirect (3xx), which is not followed.
	StatusCode int
	// Location is the redirect's target (the hosted checkout page) as an
	// absolute URL, resolved against the checkout URL; "" without one.
	Location string
	// Header is the answer's header.
	Header http.Header
	// Body is the answer's body, at most 64 KiB.
	Body []byte
}

// maxCheckoutBody caps the body CreateOrder keeps.
const maxCheckoutBody = 64 << 10

// CreateOrder validates o and POSTs it to {checkout_url}/v2/checkout from
// the server (docs/protocol.md "Create order"), signed when the client has
// an API key (unsigned otherwise, like CheckoutForm). Redirects are not
// followed. The POST is re-signed (fresh exp) on every attempt and repeated
// only when it provably did not reach the gateway or the gateway answered
// 429 or 503. When a POST may have reached the gateway but its answer was
// lost, the order is looked up by its reference before it is sent again
// (create-or-find, WithoutCreateOrFind turns it off): found, the result says
// so (Found); an outcome that stays unknown is an error matching
// ErrCreateUnconfirmed.
func (c *Client) CreateOrder(ctx context.Context, o Order) (*CheckoutResult, error) {
	target, err := c.checkoutTarget()
	if err != nil {
		return nil, err
	}
	form, err := o.validate(c.agency, c.setting("WithAgency"))
	if err != nil {
		return nil, err
	}
	return c.createOrFind(ctx, target, form)
}

// postOrder sends one order (its attempts, by retrySignedPost) and keeps
// the answer.
func (c *Client) postOrder(ctx context.Context, target string, form url.Values) (*CheckoutResult, error) {
	resp, err := c.transport.do(ctx, exchange{
		method: http.MethodPost, target: target,
		attempt:   c.signedPost(target, form),
		retryable: retrySignedPost,
		maxBody:   maxCheckoutBody,
		accept3xx: true,
	})
	if err != nil {
		return nil, err
	}
	location := resp.Header.Get("Location")
	if location != "" {
		if base, err := url.Parse(target); err == nil {
			if u, err := base.Parse(location); err == nil {
				location = u.String()
			}
		}
	}
	return &CheckoutResult{StatusCode: resp.StatusCode, Location: location, Header: resp.Header, Body: []byte(resp.Body)}, nil
}

// maxCreateSends bounds the POSTs (exchanges) of one order whose answers
// are lost: after the last, a lookup that finds nothing proves nothing.
const maxCreateSends = 3

// WithoutCreateOrFind turns create-or-find off: a CreateOrder whose POST
// may have reached the gateway but got no answer returns that error, and
// the caller looks the order up (LookupOrderByRefNo) before creating it
// again. It is on by default: a merchant expects CreateOrder to end with an
// order or a reason, not a question (docs/assumptions.md A-create-or-find).
func WithoutCreateOrFind() Option {
	return clientOption(func(c *Client) error { c.noCreateOrFind = true; return nil })
}

// createOrFind sends the order until an answer or a lookup settles it.
func (c *Client) createOrFind(ctx context.Context, target string, form url.Values) (*CheckoutResult, error) {
	ref := form.Get("refNo")
	for sends := 1; ; sends++ {
		res, err := c.postOrder(ctx, target, form)
		if err == nil || c.noCreateOrFind {
			return res, err
		}
		refusedAgain := sends > 1 && answerStatus(err)/100 == 4
		if !refusedAgain && !mayHaveCreated(err) {
			return nil, err
		}
		rec, lerr := c.LookupOrderByRefNo(ctx, ref)
		switch {
		case lerr == nil:
			return &CheckoutResult{Found: true, Record: rec}, nil
		case !errors.Is(lerr, ErrOrderNotFound):
			return nil, unconfirmed(ref, sends, "looking it up failed ("+lerr.Error()+")", err)
		case refusedAgain:
			return nil, err // no order holds the reference: the refusal stands
		case sends == maxCreateSends:
			return nil, unconfirmed(ref, sends, "the lookup found no order, but a POST may still be in flight", err)
		}
	}
}

// mayHaveCreated reports whether a failed order POST may have been acted
// on: the last attempt's outcome is unknown (outcomeUnknown: no answer
// after sending, or a 5xx), or an earlier one's was.
func mayHaveCreated(err error) bool {
	var ae *attemptsError
	return errors.As(err, &ae) && (ae.earlierUnknown || outcomeUnknown(ae.last))
}

// unconfirmed is the error of a create that create-or-find could not
// settle: it matches ErrCreateUnconfirmed and the last POST's error, names
// the reference, and claims neither that the order exists nor that not.
func unconfirmed(ref string, sends int, why string, err error) error {
	return fmt.Errorf("%w: refNo %q: no answer to %d POST(s); %s; the order may or may not exist: look it up (LookupOrderByRefNo) before creating it again: %w",
		ErrCreateUnconfirmed, ref, sends, why, err)
}
