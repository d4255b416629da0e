package paygate

// CallbackHandler.ServeHTTP: the request read and verified, its event
// handled (callback_event.go), and the gateway answered.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/formbody"
	"github.com/paygate-go/paygate/internal/observing"
	"github.com/paygate-go/paygate/observe"
)

// ServeHTTP implements the receiver rules.
func (h *CallbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Observer != nil {
		h.serveObserved(w, r)
		return
	}
	h.serve(w, r)
}

// serve is ServeHTTP without its Observer's start and end.
func (h *CallbackHandler) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	kind := callbackContentKind(r.Header.Get("Content-Type"))
	if kind == contentNotForm {
		h.reject(w, r, http.StatusUnsupportedMediaType, errNotForm)
		return
	}
	form, status, err := h.readForm(w, r, kind)
	if err != nil {
		h.reject(w, r, status, err)
		return
	}
	switch err := VerifyCallback(form, h.Keys...); {
	case errors.Is(err, ErrInvalidKey):
		// Misconfigured (no key): 500 keeps the gateway retrying until fixed.
		h.log(r, slog.LevelError, "callback handler has no valid key", "err", err)
		h.note(r).Refused(http.StatusInternalServerError, err)
		http.Error(w, "callback handler misconfigured", http.StatusInternalServerError)
		return
	case errors.Is(err, ErrSignatureMissing):
		if len(form) == 0 {
			h.log(r, slog.LevelWarn, "callback with an empty form: did a middleware read the body without r.ParseForm?")
		}
		h.browserReturn(w, r, form)
		return
	case err != nil:
		h.reject(w, r, http.StatusForbidden, err)
		return
	}
	cb, err := parseCallbackFields(form) // its fpx is read once it is acted on
	if err != nil {
		// Signed by the gateway, yet nothing to route it by: keep the gateway
		// retrying and make noise, rather than drop it with a 2xx.
		h.log(r, slog.LevelError, "verified callback cannot be routed", "err", err)
		h.reject(w, r, http.StatusBadRequest, err)
		return
	}
	cb.Verified = true
	h.answer(w, h.newEvent(cb, origin{r: r}).run(r.Context()))
}

// answer writes the gateway's answer for a verdict of the callback path:
// 200, 503 with Retry-After (another delivery holds the event, or the
// Deduper is unreachable), or 500 (a hook failed or the handler is
// misconfigured: the gateway's next retry tries again, as it retries until
// a 2xx: docs/assumptions.md A-callback-retries).
func (h *CallbackHandler) answer(w http.ResponseWriter, v verdict) {
	switch v.code {
	case http.StatusOK:
		w.WriteHeader(http.StatusOK)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "30")
		http.Error(w, v.reason, v.code)
	default:
		http.Error(w, v.reason, v.code)
	}
}

// readForm returns the callback's fields, read under BodyLimit and
// ReadTimeout. A form a middleware parsed already (r.PostForm, for a
// request whose Content-Type is the form's) is used as it is, but still held
// to BodyLimit: 413 when its Content-Length, or the size of its parsed
// fields, is over the limit. A body under another or no Content-Type
// (contentMaybeForm) is read as a form unless it is clearly not one: 415
// (docs/assumptions.md A-callback-content-type). When the read deadline
// cannot be set (a ResponseWriter wrapper without Unwrap), the body is read
// all the same and the handler logs a warning once, naming the cure.
func (h *CallbackHandler) readForm(w http.ResponseWriter, r *http.Request, kind contentKind) (url.Values, int, error) {
	limit := h.bodyLimit()
	if r.PostForm != nil && kind == contentForm {
		if err := parsedFormOverLimit(r, limit); err != nil {
			return nil, http.StatusRequestEntityTooLarge, err
		}
		return r.PostForm, 0, nil
	}
	rc := http.NewResponseController(w)
	err := rc.SetReadDeadline(time.Now().Add(h.readTimeout()))
	deadline := err == nil
	if !deadline {
		h.warnNoReadDeadline(w, r, err)
	}
	body, err := readCallbackBody(http.MaxBytesReader(w, r.Body, limit), min(r.ContentLength, limit))
	if err != nil {
		// The deadline stays: net/http would otherwise wait for the rest of
		// a trickling body before it answers.
		status, err := bodyReadError(err, limit)
		return nil, status, err
	}
	if deadline {
		// Cleared once read: the hook may run longer, and an expired
		// deadline would cancel the request's context.
		_ = rc.SetReadDeadline(time.Time{})
	}
	if kind == contentMaybeForm && !bodyMayBeForm(body) {
		return nil, http.StatusUnsupportedMediaType, errNotForm
	}
	form, err := formbody.Parse(string(body))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("paygate: callback body: %w", err)
	}
	return form, 0, nil
}

// bodyReadError is the answer to a body that could not be read: 413 over
// limit, else 400.
func bodyReadError(err error, limit int64) (int, error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("paygate: callback body over %d bytes", limit)
	}
	return http.StatusBadRequest, fmt.Errorf("paygate: reading callback body: %w", err)
}

// browserReturn serves the unsigned POST of the buyer's browser (no
// signature, or an empty one): display only, never fulfilled
// (docs/assumptions.md A-browser-return, A-empty-signature).
func (h *CallbackHandler) browserReturn(w http.ResponseWriter, r *http.Request, form url.Values) {
	if h.OnReturn == nil {
		h.reject(w, r, http.StatusForbidden, ErrSignatureMissing)
		return
	}
	cb, err := ParseCallback(form)
	if err != nil {
		h.reject(w, r, http.StatusBadRequest, err)
		return
	}
	h.OnReturn(w, r, cb)
}

// reject answers status, tells OnReject and logs.
func (h *CallbackHandler) reject(w http.ResponseWriter, r *http.Request, status int, err error) {
	if h.OnReject != nil {
		h.OnReject(r, err)
	}
	h.note(r).Refused(status, err)
	h.log(r, slog.LevelWarn, "callback refused", "status", status, "err", err)
	http.Error(w, http.StatusText(status), status)
}

// log writes one line with the request's method and path, never its body,
// to Logger or slog.Default().
func (h *CallbackHandler) log(r *http.Request, level slog.Level, msg string, args ...any) {
	h.logAt(r.Context(), origin{r: r}, level, msg, args...)
}

// serveObserved runs serve, telling the Observer of the callback's start
// and end.
func (h *CallbackHandler) serveObserved(w http.ResponseWriter, r *http.Request) {
	ctx := h.Observer.CallbackStart(r.Context(), observe.Callback{Source: observe.SourceCallback})
	n := &observing.Note{}
	if r.Method != http.MethodPost {
		n.Refused(http.StatusMethodNotAllowed, nil)
	}
	h.serve(w, r.WithContext(observing.WithNote(ctx, n)))
	h.Observer.CallbackEnd(ctx, n.Ended())
}

// note is the Note of the request r, or nil when nothing observes it.
func (h *CallbackHandler) note(r *http.Request) *observing.Note {
	if h.Observer == nil {
		return nil
	}
	return observing.From(r.Context())
}

// formContentType is the media type of a callback body.
const formContentType = "application/x-www-form-urlencoded"

// errNotForm refuses a callback body that is clearly not a form.
var errNotForm = errors.New("paygate: callback body is not a form (application/x-www-form-urlencoded)")

// contentKind is what a callback's Content-Type says of its body.
type contentKind int

const (
	// contentForm: the form's media type, with any parameters.
	contentForm contentKind = iota
	// contentMaybeForm: no, another or a malformed Content-Type: the body is
	// read as a form, and acted on only if its signature verifies.
	contentMaybeForm
	// contentNotForm: JSON or multipart, refused (415) unread.
	contentNotForm
)

// callbackContentKind classifies a Content-Type header
// (docs/assumptions.md A-callback-content-type): a verified payment is never
// dropped for a header, so only a media type that names another encoding
// (JSON, multipart) is refused before the body is read.
func callbackContentKind(header string) contentKind {
	if header == formContentType {
		return contentForm
	}
	mt, _, err := mime.ParseMediaType(header)
	switch {
	case err == nil && mt == formContentType:
		return contentForm
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "multipart/"):
		// mt is set even when only a parameter is malformed.
		return contentNotForm
	}
	return contentMaybeForm
}

// bodyMayBeForm reports whether a body read under no or another media type
// can be a form: not a JSON object or array (its first byte past white
// space is { or [) and not a multipart body (its first line a boundary,
// "--" and no "=").
func bodyMayBeForm(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return false
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return !bytes.HasPrefix(line, []byte("--")) || bytes.ContainsRune(line, '=')
}

// maxBodyPrealloc caps the buffer a size hint makes before any byte has
// come: a Content-Length is the client's claim, and one that lies (far
// above its body, within a BodyLimit set high) must not size an allocation
// (1 PiB panicked, 1 GiB was allocated per request). A longer body grows
// the buffer as its bytes come, as io.ReadAll does.
const maxBodyPrealloc = DefaultCallbackBodyLimit

// readCallbackBody reads r to its end, like io.ReadAll, into a buffer sized
// for sizeHint bytes (a request's Content-Length, capped by BodyLimit;
// unknown when negative), up to maxBodyPrealloc, so that a body of the size
// it announced is read without growing the buffer. The hint sizes only the
// first allocation: a longer body is read all the same (r enforces the
// limit), a shorter one is what it is.
func readCallbackBody(r io.Reader, sizeHint int64) ([]byte, error) {
	if sizeHint < 0 {
		return io.ReadAll(r)
	}
	// +1: the read that finds the end needs room; 512 bytes at least, as
	// io.ReadAll starts with.
	b := make([]byte, 0, min(max(sizeHint, 511), maxBodyPrealloc)+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case errors.Is(err, io.EOF):
			return b, nil
		case err != nil:
			return b, err
		case len(b) == cap(b):
			b = append(b, 0)[:len(b)] // grow as append does
		}
	}
}

// parsedFormOverLimit applies BodyLimit to a form a middleware parsed
// before the handler ran (r.ParseForm reads up to 10 MB): the body was over
// the limit if its Content-Length says so, or if the parsed fields alone
// (names, values, one = and one & each, decoded, so never more than the
// body held) exceed it. The error says which.
func parsedFormOverLimit(r *http.Request, limit int64) error {
	if r.ContentLength > limit {
		return fmt.Errorf("paygate: callback body of %d bytes (Content-Length) over %d bytes; a middleware parsed it first", r.ContentLength, limit)
	}
	if n := formSize(r.PostForm, limit); n > limit {
		return fmt.Errorf("paygate: callback form of at least %d bytes over %d bytes; a middleware parsed it first", n, limit)
	}
	return nil
}

// formSize is a lower bound of the encoded size of form: each name and
// value decoded, plus = and &. It stops counting once past limit.
func formSize(form url.Values, limit int64) int64 {
	var n int64
	for k, vs := range form {
		for _, v := range vs {
			n += int64(len(k) + len(v) + 2)
			if n > limit {
				return n
			}
		}
	}
	return n
}

// warnNoReadDeadline logs, once per handler, that ReadTimeout could not set
// the connection's read deadline (err says why, usually a ResponseWriter
// wrapper without Unwrap), so that a slow body is bounded only by the
// http.Server's own ReadTimeout. The line names the cure and the type of
// the ResponseWriter that lacks it. A request no http.Server received (a
// test's httptest.ResponseRecorder) has no connection to protect, and is
// not warned of.
func (h *CallbackHandler) warnNoReadDeadline(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Value(http.LocalAddrContextKey) == nil {
		return
	}
	h.deadlineWarning.Do(func() {
		h.log(r, slog.LevelWarn, "callback ReadTimeout cannot set the read deadline: a slow body holds the connection until http.Server.ReadTimeout; "+
			"give the ResponseWriter wrapper of your middleware an `Unwrap() http.ResponseWriter` method (logged once)",
			"err", err, "writer", fmt.Sprintf("%T", w))
	})
}
