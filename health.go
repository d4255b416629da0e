package paygate

import (
	"context"
	"net/http"
	"strings"
)

// maxHealthBody caps the answer Version and Echo keep.
const maxHealthBody = 4 << 10

// Version asks the service for its version: GET {reports_url}/api/version
// (Endpoints.Version), the public PHP client's TestVersion
// (docs/assumptions.md A-health). The answer's shape is not published, so
// its body is returned as text, trimmed, at most 4 KiB. No credential is
// sent. Retried like every GET.
func (c *Client) Version(ctx context.Context) (string, error) {
	return c.healthGET(ctx, c.endpoints.Version)
}

// Echo is a health check: GET {reports_url}/api/echo (Endpoints.Echo), the
// public PHP client's TestEcho (docs/assumptions.md A-health). A 2xx answer
// is health; its body is returned as text, trimmed, at most 4 KiB. No
// credential is sent: an echo may repeat what it receives. Retried like
// every GET. The CLI runs it as `paygate ping`.
func (c *Client) Echo(ctx context.Context) (string, error) {
	return c.healthGET(ctx, c.endpoints.Echo)
}

// healthGET GETs path on the reports host without a credential.
func (c *Client) healthGET(ctx context.Context, path string) (string, error) {
	target, err := c.endpoint(c.reportsURL, "WithReportsURL", path)
	if err != nil {
		return "", err
	}
	resp, err := c.transport.do(ctx, exchange{method: http.MethodGet, target: target, retryable: retryTransient, maxBody: maxHealthBody, attempt: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", userAgent)
		return req, nil
	}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(resp.Body), nil
}
