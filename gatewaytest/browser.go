package gatewaytest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/paygate-go/paygate"
)

// Checkout is a hosted checkout the sandbox opened for a submitted order.
type Checkout struct {
	// OrderNo is the sandbox's order number.
	OrderNo string
	// RefNo is the order's refNo as received (refNo~extraData).
	RefNo string
	// PageURL is the hosted checkout page, absolute.
	PageURL string
}

// Submit posts a CheckoutForm to the sandbox as the buyer's browser would
// (the auto-submitting page of CheckoutForm.WriteHTML), so that a test needs
// no HTML: the answer is the hosted checkout the sandbox opened. An order
// the sandbox refuses (a bad signature, an expired exp, a field that breaks
// a rule) is an error with the sandbox's status and message.
func (s *Server) Submit(form *paygate.CheckoutForm) (*Checkout, error) {
	if form == nil {
		return nil, errors.New("gatewaytest: Submit: nil form")
	}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.PostForm(form.Action, form.Fields)
	if err != nil {
		return nil, fmt.Errorf("gatewaytest: Submit: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("gatewaytest: Submit: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	page, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, fmt.Errorf("gatewaytest: Submit: Location: %w", err)
	}
	orderNo := strings.TrimPrefix(page.Path, hostedPagePath)
	o, ok := s.order(orderNo)
	if !ok {
		return nil, fmt.Errorf("gatewaytest: Submit: no order %q", orderNo)
	}
	return &Checkout{OrderNo: o.OrderNo, RefNo: o.RefNo, PageURL: page.String()}, nil
}

// BrowserReturn returns what the buyer's browser posts back to the order's
// returnUrl once the order is decided (docs/protocol.md "Payment flow",
// stage 3): the unsigned fields, display only, and the URL. Post them with
// NewReturnRequest or http.PostForm.
func (s *Server) BrowserReturn(orderNo string) (returnURL string, fields url.Values, err error) {
	o, ok := s.order(orderNo)
	switch {
	case !ok:
		return "", nil, fmt.Errorf("gatewaytest: no order %q", orderNo)
	case o.Status == "":
		return "", nil, fmt.Errorf("gatewaytest: order %s is not decided yet (Pay first)", orderNo)
	case o.ReturnURL == "":
		return "", nil, fmt.Errorf("gatewaytest: order %s has no returnUrl (a pay link)", orderNo)
	}
	return o.ReturnURL, s.callbackFields(o), nil
}
