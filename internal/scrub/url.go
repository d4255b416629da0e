package scrub

// A URL fit for an error or a log line.

import (
	"net/url"
	"slices"
	"strings"
)

// URL returns raw fit for an error or a log line: user information
// dropped, and the values of query parameters that carry a credential
// (SecretParam) replaced by Marker. A string that does not parse as a URL
// is not repeated at all.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return redactedURL(u)
}

// redactedURL is URL for a parsed URL; u is not changed.
func redactedURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(Marker)
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
	return s[:slashes] + Marker + s[at:]
}

// redactParams redacts the value of every secret parameter (SecretParam)
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
		if name, err := url.QueryUnescape(k); err != nil || SecretParam(name) {
			part = k + "=" + Marker
		}
		b.WriteString(part)
		b.WriteString(sep)
	}
	return b.String()
}

// SecretParam reports whether a query parameter carries a credential: its
// name, in any case, is one of secretParams.
func SecretParam(name string) bool {
	return slices.Contains(secretParams(), strings.ToLower(name))
}

// secretParams are the query parameters that carry a credential, in lower
// case.
func secretParams() []string {
	return []string{"signature", "token", "auth_token", "authtoken", "password", "api_key", "apikey", "key"}
}
