package paygate

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/internal/scrub"
)

// The rule for an error answer's body (docs/protocol.md "Errors": codes and
// bodies are not published, so an APIError keeps the body raw): a gateway's
// or proxy's error page may echo the request, so before the body is kept,
// every credential the request carried is replaced by [REDACTED]. What
// counts as a credential of a request (requestSecrets):
//
//   - the value of every header other than Accept, Accept-Encoding,
//     Content-Length, Content-Type and User-Agent, whole and without its
//     scheme word: the Bearer AuthToken (Authorization), the webhook
//     password (X-API-Password), and any header a caller's RoundTripper
//     adds before the request is built (none do today);
//   - the values of the URL's query parameters and of a form body's fields
//     that secretParam names (signature, token, password, key...): the
//     signature of a signed GET or POST. The other signed fields (agency,
//     amount, exp...) stay: without the signature they authorise nothing;
//   - the URL's user information: user, password, and the Basic
//     credential they make.
//
// Each is looked for as sent, URL-encoded (query and path escaping),
// JSON-escaped (with and without HTML escaping) and HTML-escaped, in ASCII
// upper or lower case (so an upper-case hex signature, or %2f for %2F, is
// found too). The API key itself never travels: only the signatures made
// with it, which are scrubbed. The values of a successful answer that an
// error quotes (a report's status, a total_pages that is not a number) are
// scrubbed the same way (response.scrub), before any cut.

// requestSecrets lists the credentials req carries, each in every form a
// server could echo it in (scrub.Forms). It reads a form
// body again through req.GetBody; a body it cannot read again adds nothing.
func requestSecrets(req *http.Request) []string {
	var raw []string
	for name, values := range req.Header {
		if plainHeader[http.CanonicalHeaderKey(name)] {
			continue
		}
		for _, v := range values {
			raw = append(raw, v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				raw = append(raw, strings.TrimSpace(cred))
			}
		}
	}
	if u := req.URL.User; u != nil {
		pw, _ := u.Password()
		raw = append(raw, u.Username(), pw, u.String(),
			base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	raw = appendSecretValues(raw, req.URL.Query())
	raw = appendSecretValues(raw, formBody(req))
	var forms []string
	for _, s := range raw {
		forms = append(forms, scrub.Forms(s)...)
	}
	slices.Sort(forms)
	return slices.Compact(forms)
}

// plainHeader are the request headers that never carry a credential.
var plainHeader = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Content-Length": true,
	"Content-Type": true, "User-Agent": true, "X-Request-Id": true,
}

// appendSecretValues appends the values of vals' credential parameters
// (secretParam).
func appendSecretValues(raw []string, vals url.Values) []string {
	for name, vs := range vals {
		if secretParam(name) {
			raw = append(raw, vs...)
		}
	}
	return raw
}

// maxScrubbedForm caps the form body formBody reads: the longest request
// body the SDK sends is a checkout form of at most 255-character fields.
const maxScrubbedForm = 64 << 10

// formBody is req's body parsed as a form when it is one and can be read
// again (GetBody), else nil.
func formBody(req *http.Request) url.Values {
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" || req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxScrubbedForm))
	if err != nil {
		return nil
	}
	vals, _ := url.ParseQuery(string(b)) // what parses is what a server could echo
	return vals
}

// scrub is s, a value of a successful answer about to be quoted in an
// error (a report's status, say), with the request's credentials replaced
// by [REDACTED], as an error answer's body is.
func (r *response) scrub(s string) string {
	return scrub.Replace(s, requestSecrets(r.request))
}

// quotedValueError is a value of an answer that breaks a rule, quoted in
// its error cut at 40 bytes. The value is kept whole (up to 4 KiB), so that
// a caller can scrub it (response.scrub) before the cut could halve a
// credential.
type quotedValueError struct {
	field, value, want string
	kind               error // what it matches (errors.Is), or nil
}

// newQuotedValueError keeps up to maxErrorBody bytes of value, copied.
func newQuotedValueError(field, value, want string) *quotedValueError {
	if len(value) > maxErrorBody {
		value = value[:maxErrorBody]
	}
	return &quotedValueError{field: field, value: strings.Clone(value), want: want}
}

// Error says `field is value, want ...`, the value cut at 40 bytes.
func (e *quotedValueError) Error() string {
	return fmt.Sprintf("%s is %.40s, want %s", e.field, e.value, e.want)
}

// Unwrap is the sentinel the error matches, if any.
func (e *quotedValueError) Unwrap() error { return e.kind }
