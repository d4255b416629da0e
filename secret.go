package paygate

// What keeps secrets out of everything the SDK prints or keeps: the secret
// type, which prints as [REDACTED] under every verb; URLs and transport
// errors redacted before they are shown; and the credentials a request
// carried, found and replaced in an error answer's body before it is kept
// (internal/scrub does the finding and replacing). The Key prints the
// same way (key.go).

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/internal/scrub"
)

// secret holds a credential the SDK sends (AuthToken, webhook password). Like
// Key, it prints as [REDACTED] under every fmt verb, in slog and when
// marshalled (JSON, text), so that no error, log line or %v of an SDK value
// can carry it (docs/protocol.md "Authentication").
type secret struct {
	s *string
}

// newSecret wraps v; the empty string gives the zero secret.
func newSecret(v string) secret {
	if v == "" {
		return secret{}
	}
	return secret{&v}
}

// reveal returns the credential, for the one place that puts it on the wire.
func (s secret) reveal() string {
	if s.s == nil {
		return ""
	}
	return *s.s
}

// String returns [REDACTED].
func (secret) String() string { return redacted }

// GoString returns [REDACTED], for %#v.
func (secret) GoString() string { return redacted }

// Format prints [REDACTED] whatever the verb.
func (secret) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue makes slog print [REDACTED].
func (secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns [REDACTED], so that JSON, XML and any text encoder
// write that instead of an empty object.
func (secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// redacted is what every secret prints as.
const redacted = scrub.Marker

// redactTransportError rewrites the URL inside a *url.Error (which net/http
// puts in every transport error, query and all) so that the error can be
// returned and printed.
func redactTransportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = scrub.URL(ue.URL)
	}
	return err
}

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
		if scrub.SecretParam(name) {
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
