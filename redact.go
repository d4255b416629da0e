package paygate

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/internal/scrub"
)

// redacted is what every secret prints as.
const redacted = scrub.Marker

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
	if c.Host == "" {
		// User information may sit where the host should be, after a
		// mistyped "//" (https:user:pw@host, https:///user:pw@host).
		c.Opaque = redactBeforeAt(c.Opaque)
		c.Path, c.RawPath = redactBeforeAt(c.Path), ""
	}
	c.RawQuery = redactParams(c.RawQuery)
	c.Fragment, c.RawFragment = redactParams(c.Fragment), ""
	return c.String()
}

// redactBeforeAt redacts what comes before the last '@' of s (after its
// leading slashes): user information in a URL without a host.
func redactBeforeAt(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return s
	}
	slashes := at - len(strings.TrimLeft(s[:at], "/"))
	return s[:slashes] + redacted + s[at:]
}

// redactParams redacts the value of every secret parameter (secretParam)
// of a query or fragment, and of any whose name does not unescape; pairs
// end at '&' or ';' (url.ParseQuery refuses the ';', a server may not).
func redactParams(q string) string {
	if q == "" { // no query or fragment: most URLs
		return ""
	}
	var b strings.Builder
	for q != "" {
		part, sep := q, ""
		if i := strings.IndexAny(q, "&;"); i >= 0 {
			part, sep = q[:i], q[i:i+1]
		}
		q = q[len(part)+len(sep):]
		k, _, _ := strings.Cut(part, "=")
		if name, err := url.QueryUnescape(k); err != nil || secretParam(name) {
			part = k + "=" + redacted
		}
		b.WriteString(part)
		b.WriteString(sep)
	}
	return b.String()
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
