package paygate

import (
	"errors"
	"net/url"

	"github.com/paygate-go/paygate/internal/scrub"
)

// redacted is what every secret prints as.
const redacted = scrub.Marker

// redactURL returns raw fit for an error or a log line (scrub.URL): user
// information dropped, and the values of query parameters that carry a
// credential (signature, a token, a password or a key) replaced by
// [REDACTED]. A string that does not parse as a URL is not repeated at all.
func redactURL(raw string) string { return scrub.URL(raw) }

// secretParam reports whether a query parameter carries a credential
// (scrub.SecretParam).
func secretParam(name string) bool { return scrub.SecretParam(name) }

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
