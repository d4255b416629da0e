package paygate

import (
	"errors"
	"net/url"
	"slices"
	"strings"
)

// redacted is what every secret prints as.
const redacted = "[REDACTED]"

// redactURL returns raw fit for an error or a log line: user information
// dropped, and the values of query parameters that carry a credential
// (signature, a token, a password or a key) replaced by
// [REDACTED]. A string that does not parse as a URL is not repeated at all.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return redactedURL(u)
}

// redactedURL is redactURL for a parsed URL; u is not changed.
func redactedURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(redacted)
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, part := range parts {
			k, _, _ := strings.Cut(part, "=")
			if name, err := url.QueryUnescape(k); err != nil || secretParam(name) {
				parts[i] = k + "=" + redacted
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// secretParam reports whether a query parameter carries a credential: its
// name, in any case, is one of secretParams.
func secretParam(name string) bool {
	return slices.Contains(secretParams(), strings.ToLower(name))
}

// secretParams are the query parameters that carry a credential, in lower
// case.
func secretParams() []string {
	return []string{"signature", "token", "auth_token", "authtoken", "password", "api_key", "apikey", "key"}
}

// redactTransportError rewrites the URL inside a *url.Error (which net/http
// puts in every transport error, query and all) so that the error can be
// returned and printed.
func redactTransportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redactURL(ue.URL)
	}
	return err
}
