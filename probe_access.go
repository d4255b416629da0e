package paygate

// The bridge package probe uses (internal/probeaccess): a Client's
// configuration without its credentials, one raw attempt through its
// transport, and a copy of it whose round trips are paced.

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/probeaccess"
	"github.com/paygate-go/paygate/internal/scrub"
	"github.com/paygate-go/paygate/internal/signing"
)

func init() {
	probeaccess.Describe = func(v any) (probeaccess.Info, bool) {
		c, ok := v.(*Client)
		if !ok || c == nil {
			return probeaccess.Info{}, false
		}
		return c.probeInfo(), true
	}
	probeaccess.Do = func(ctx context.Context, v any, r probeaccess.Request) (*probeaccess.Answer, error) {
		c, ok := v.(*Client)
		if !ok || c == nil {
			return nil, errors.New("paygate: probe: not a *paygate.Client")
		}
		return c.probeDo(ctx, r)
	}
	probeaccess.Wrapped = func(v any, wrap func(http.RoundTripper) http.RoundTripper) any {
		c, ok := v.(*Client)
		if !ok || c == nil {
			return nil
		}
		cp := *c
		hc := *c.transport.client
		rt := hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		hc.Transport = wrap(rt)
		cp.transport.client = &hc // CheckRedirect (noRedirects) is kept
		return &cp
	}
}

// probeInfo is the Client's configuration, credentials left out.
func (c *Client) probeInfo() probeaccess.Info {
	in := probeaccess.Info{Agency: c.agency, HasKey: c.key.valid(), HasToken: c.authToken.s != nil,
		Report: c.endpoints.PaymentReport, Lookup: c.endpoints.FPXRequest, Transactions: c.endpoints.Transactions,
		BankList: c.endpoints.BankList, Version: c.endpoints.Version, Echo: c.endpoints.Echo}
	if c.reportsURL != nil {
		in.ReportsURL = c.reportsURL.String()
	}
	in.CheckoutTarget, _ = c.checkoutTarget()
	in.PayBase, _ = c.payHost(c.endpoints.Pay)
	return in
}

// probeMaxBody is where a successful answer's body is cut.
const probeMaxBody = 1 << 20

// probeDo sends one attempt of r and returns the answer, whatever its
// status: an error only when no answer came (or r cannot be built).
func (c *Client) probeDo(ctx context.Context, r probeaccess.Request) (*probeaccess.Answer, error) {
	target, err := c.probeTarget(r)
	if err != nil {
		return nil, err
	}
	method := cmp.Or(r.Method, http.MethodGet)
	if (r.Auth == probeaccess.AuthSigned && !c.key.valid()) || (r.Auth == probeaccess.AuthBearer && c.authToken.s == nil) {
		return nil, ErrNoCredential
	}
	resp, err := c.transport.do(ctx, exchange{method: method, target: target, maxBody: probeMaxBody, cutBody: true,
		retryable: func(int, error) bool { return false },
		attempt:   func(ctx context.Context) (*http.Request, error) { return c.probeRequest(ctx, method, target, r) }})
	var apiErr *APIError
	switch {
	case err == nil:
		return probeAnswer(resp), nil
	case errors.As(err, &apiErr):
		h := http.Header{}
		if apiErr.Location != "" {
			h.Set("Location", apiErr.Location)
		}
		return &probeaccess.Answer{Status: apiErr.StatusCode, Header: h, Body: apiErr.Body}, nil
	}
	return nil, err
}

// probeAnswer is a successful answer scrubbed of the request's credentials,
// as an error answer is (its header values, its body): the probe may quote
// any of them. A body cut at the size limit loses the bytes a credential
// straddling the cut could leave.
func probeAnswer(resp *response) *probeaccess.Answer {
	secrets := requestSecrets(resp.request)
	h := resp.Header.Clone()
	for _, vs := range h {
		for i, v := range vs {
			vs[i] = scrub.Replace(v, secrets)
		}
	}
	body := resp.Body
	if len(body) >= probeMaxBody {
		body = body[:max(len(body)-scrub.Longest(secrets), 0)]
	}
	return &probeaccess.Answer{Status: resp.StatusCode, Header: h, Body: []byte(scrub.Replace(body, secrets))}
}

// probeTarget is r's URL without its query.
func (c *Client) probeTarget(r probeaccess.Request) (string, error) {
	switch r.Host {
	case probeaccess.Checkout:
		if r.Path == "" {
			return c.checkoutTarget()
		}
		if c.checkoutURL == nil {
			return "", c.unset("WithCheckoutURL")
		}
		return c.checkoutURL.Scheme + "://" + c.checkoutURL.Host + r.Path, nil
	case probeaccess.Pay:
		return c.payHost(r.Path)
	}
	return c.endpoint(c.reportsURL, "WithReportsURL", r.Path)
}

// probeRequest builds one attempt of r to target.
func (c *Client) probeRequest(ctx context.Context, method, target string, r probeaccess.Request) (*http.Request, error) {
	vals := url.Values{}
	for k, v := range r.Query {
		vals[k] = v
	}
	now := r.SignAt
	if now.IsZero() {
		now = c.signNow()
	}
	var req *http.Request
	var err error
	if method == http.MethodPost {
		req, err = c.probePost(ctx, target, vals, now, r)
	} else {
		req, err = c.probeGet(ctx, method, target, vals, now, r)
	}
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	if r.Auth == probeaccess.AuthBearer {
		req.Header.Set("Authorization", "Bearer "+c.authToken.reveal())
	}
	return req, nil
}

// probePost is a form POST of vals to target, signed (over the query, or
// the path and query) when r asks for it.
func (c *Client) probePost(ctx context.Context, target string, vals url.Values, now time.Time, r probeaccess.Request) (*http.Request, error) {
	body := vals.Encode()
	if r.Auth == probeaccess.AuthSigned {
		prefix := ""
		if r.SignPath {
			u, err := url.Parse(target)
			if err != nil {
				return nil, err
			}
			prefix = u.EscapedPath() + "?"
		}
		signed, err := signing.SignForm(c.key.k, prefix, vals, now)
		if err != nil {
			return nil, err
		}
		if r.Tamper != nil {
			signed.Set("signature", r.Tamper(signed.Get("signature")))
		}
		body = signed.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req, nil
}

// probeGet is a GET of target with the query vals, signed with agency
// added when r asks for it.
func (c *Client) probeGet(ctx context.Context, method, target string, vals url.Values, now time.Time, r probeaccess.Request) (*http.Request, error) {
	raw := target
	signed := r.Auth == probeaccess.AuthSigned
	if signed && c.agency != "" && vals.Get("agency") == "" {
		vals.Set("agency", c.agency)
	}
	if len(vals) > 0 {
		raw += "?" + vals.Encode()
	}
	if signed {
		var err error
		if raw, err = signing.SignURL(c.key.k, raw, now); err != nil {
			return nil, err
		}
		if r.Tamper != nil {
			// SignURL appends the signature last (docs/protocol.md "Signature algorithm").
			i := strings.LastIndex(raw, "signature=") + len("signature=")
			raw = raw[:i] + url.QueryEscape(r.Tamper(raw[i:]))
		}
	}
	return http.NewRequestWithContext(ctx, method, raw, nil)
}
