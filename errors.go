package paygate

import (
	"errors"
	"fmt"
	"time"

	"github.com/paygate-go/paygate/internal/fielderr"
	"github.com/paygate-go/paygate/internal/sen"
	"github.com/paygate-go/paygate/internal/signing"
	"github.com/paygate-go/paygate/internal/skew"
)

// Sentinel errors. Callers branch on them with errors.Is; the SDK wraps them
// with context but never replaces them.
var (
	// ErrSignatureMissing: the callback carries no `signature` field (docs/protocol.md
	// "Authentication" step 8: a missing signature means invalid).
	ErrSignatureMissing = signing.ErrSignatureMissing
	// ErrSignatureMismatch: the callback signature is not the HMAC of its
	// fields under any of the configured keys, or is not 16 hex characters.
	ErrSignatureMismatch = signing.ErrSignatureMismatch
	// ErrInvalidKey: an API key that is not a UUID (32 hex digits, dashes
	// optional). The message says what is wrong without echoing the key.
	ErrInvalidKey = signing.ErrInvalidKey
	// ErrSignatureExpired: an outbound signature whose exp has passed (docs/protocol.md
	// "Authentication": valid for 60 s through exp).
	ErrSignatureExpired = signing.ErrSignatureExpired
	// ErrMultipleValues: a signed field set holds a key with several values;
	// the gateway's fields are single-valued, so such a set cannot be signed
	// or verified unambiguously (docs/assumptions.md A-multiple-values).
	ErrMultipleValues = signing.ErrMultipleValues
	// ErrInvalidAmount: a money amount that breaks the rules of Amount.
	ErrInvalidAmount = sen.ErrInvalid
	// ErrUnauthorized matches (errors.Is) an *APIError whose status is 401 or 403:
	// a missing, wrong or expired credential or signature.
	ErrUnauthorized = errors.New("paygate: unauthorized")
	// ErrDeprecatedAuth: the older token / username+password authentication is
	// deprecated and must not be used (docs/protocol.md "Authentication" and "Versioning"). The
	// SDK refuses it wherever it could be configured.
	ErrDeprecatedAuth = errors.New("paygate: the token / username+password authentication is deprecated; use an AuthToken (WithAuthToken) or an API key (WithKey)")
	// ErrNoCredential: a call needs a credential (API key, AuthToken) or a
	// setting (agency, service URL) the client was not given. Nothing was sent.
	ErrNoCredential = errors.New("paygate: missing credential or setting")
	// ErrOrderNotFound: LookupOrder found no order for the reference.
	ErrOrderNotFound = errors.New("paygate: order not found")
	// ErrCreateUnconfirmed: CreateOrder sent the order, got no answer, and
	// could not settle by a lookup of its reference whether the gateway
	// holds it (the lookup failed, or found nothing after the last send,
	// docs/assumptions.md A-create-or-find). The order may exist or not:
	// look it up before creating it again.
	ErrCreateUnconfirmed = errors.New("paygate: order creation unconfirmed")
	// ErrReportStatus: a report answer whose status is not OK (docs/protocol.md A3).
	ErrReportStatus = errors.New("paygate: report status not OK")
	// ErrRedirect matches (errors.Is) an *APIError for a 3xx answer to a
	// credentialed request. Such requests never follow a redirect: the
	// credential (signature, Bearer token, webhook password) and the body would
	// go to wherever the redirect points. APIError.Location names the host it
	// pointed to.
	ErrRedirect = errors.New("paygate: the service answered with a redirect, which is not followed")
	// ErrReportPaging matches (errors.Is) a payment report that cannot be
	// walked to its end truthfully: a page that repeats an earlier one (a server
	// that ignores page, or pages that cycle, would otherwise be read for
	// ever), a short page before the last page stats.total_pages announced (the
	// report would be cut short silently), a stats.total_pages that is not a
	// whole number (a count the walk cannot check), or more pages than
	// ReportQuery.MaxPages.
	ErrReportPaging = errors.New("paygate: payment report paging is inconsistent")
	// ErrReportPastTotalPages matches (errors.Is) the error that ends a walk
	// which read every row by the protocol's rule (it ended on a short page)
	// but found rows on pages at or past the stats.total_pages the server
	// announced: the rows were all yielded, and the server's count is wrong
	// (docs/assumptions.md A-report-paging). It matches ErrReportPaging too.
	ErrReportPastTotalPages = fmt.Errorf("%w: rows past stats.total_pages", ErrReportPaging)
	// ErrClaimLost is returned by Renew, Complete or Release when the token no
	// longer holds the key (its lease ran out and another delivery took it).
	ErrClaimLost = errors.New("paygate: dedupe claim lost (lease expired)")
	// ErrStoreUnavailable is wrapped by a TxFulfiller's error when its
	// store could not be reached before fn ran, so nothing was written:
	// the handler answers 503 with Retry-After, as for a Deduper outage.
	ErrStoreUnavailable = errors.New("paygate: the Deduper's store is unavailable")
)

// FieldError is one problem with one field: which field (a form field name or,
// for JSON bodies, a JSON pointer such as /transactions/3/amount), which rule
// it breaks, and the offending value (truncated; never a secret).
type FieldError struct {
	// Field is a form field name or a JSON pointer; "" for the whole body.
	Field string
	// Rule is the rule the field breaks, in words.
	Rule string
	// Value is the offending value, cut at 64 bytes; "" when absent.
	Value string
}

// Error formats the problem as `field: rule (value "v")`.
func (e FieldError) Error() string { return fielderr.Text(e.Field, e.Rule, e.Value) }

// maxErrorValue caps how much of an offending value an error repeats.
const maxErrorValue = fielderr.MaxValue

// newFieldError builds a FieldError, truncating the value to maxErrorValue bytes.
func newFieldError(field, rule, value string) FieldError {
	return FieldError{Field: field, Rule: rule, Value: fielderr.Clip(value)}
}

// ValidationError lists every problem found in one input, so that a caller can
// fix them all at once (docs/protocol.md "Errors": bad input is rejected before anything
// is signed or sent). Retrieve it with errors.As.
type ValidationError struct {
	// Problems lists every problem found, in input order.
	Problems []FieldError
}

// Error joins the problems, one per line after a count.
func (e *ValidationError) Error() string { return fielderr.List(e.Problems) }

// add records one problem.
func (e *ValidationError) add(field, rule, value string) {
	e.Problems = append(e.Problems, newFieldError(field, rule, value))
}

// err returns e as an error, or nil when no problem was recorded.
func (e *ValidationError) err() error {
	if len(e.Problems) == 0 {
		return nil
	}
	return e
}

// maxErrorBody caps how much of a response body an APIError keeps.
const maxErrorBody = 4 << 10

// APIError is an HTTP answer outside 2xx from the service. Its codes and
// bodies are not published (docs/protocol.md "Errors", docs/assumptions.md
// A-errors), so the body is kept raw, capped at 4 KiB, with every
// credential of the request replaced by [REDACTED] first: an error page may
// echo the request (the rule and what counts as a credential: scrub.go,
// requestSecrets). It never holds a query string, request body or
// credential.
type APIError struct {
	// Method is the request's method.
	Method string
	// Path is the request's path, never its query.
	Path string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Body is the start of the answer's body, at most 4 KiB, with the
	// request's credentials (Bearer token, webhook password, signature,
	// user information) in any echoed form replaced by [REDACTED].
	Body []byte
	// Location is, for a redirect (3xx), the scheme and host it pointed to,
	// scrubbed of the request's credentials as Body is; the redirect was
	// not followed (ErrRedirect).
	Location string
	// CallID names the call, as its attempts (X-Request-Id), log lines and
	// errors do; RequestID is the service's X-Request-Id or Request-Id, if
	// any (docs/assumptions.md A-request-id). Quote both to its support.
	CallID, RequestID string
	// ClockSkew is, for a 401/403 to a signed request, the service's clock
	// minus the client's per the answer's Date, when 5 s or more from the
	// offset it was signed with (A-clock-skew): Error explains it; else 0.
	ClockSkew time.Duration
}

// Error names the request, status and call, quotes the start of the body,
// and explains a ClockSkew.
func (e *APIError) Error() string {
	call := "call " + e.CallID
	if e.RequestID != "" {
		call += ", service request " + e.RequestID
	}
	if e.StatusCode/100 == 3 {
		return fmt.Sprintf("paygate: %s %s: HTTP %d redirect to %s, not followed: the request carries credentials (%s)", e.Method, e.Path, e.StatusCode, e.Location, call)
	}
	body := e.Body
	if len(body) > 512 {
		body = body[:512]
	}
	msg := fmt.Sprintf("paygate: %s %s: HTTP %d (%s): %q", e.Method, e.Path, e.StatusCode, call, body)
	if e.ClockSkew != 0 {
		msg += "; " + skew.Explain(e.ClockSkew)
	}
	return msg
}

// readError is an error found in an answer (one that did not parse, a
// status that is not OK, no record), named by its call's ID.
type readError struct {
	err    error
	callID string
}

func (e *readError) Error() string { return e.err.Error() + " (call " + e.callID + ")" }

func (e *readError) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrUnauthorized) true for 401 and 403, and
// errors.Is(err, ErrRedirect) true for 3xx.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == 401 || e.StatusCode == 403
	case ErrRedirect:
		return e.StatusCode/100 == 3
	}
	return false
}
