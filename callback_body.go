package paygate

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// bodyLimit is BodyLimit, or DefaultCallbackBodyLimit when unset.
func (h *CallbackHandler) bodyLimit() int64 {
	if h.BodyLimit > 0 {
		return h.BodyLimit
	}
	return DefaultCallbackBodyLimit
}

// readTimeout is ReadTimeout, or DefaultCallbackReadTimeout when unset.
func (h *CallbackHandler) readTimeout() time.Duration {
	if h.ReadTimeout > 0 {
		return h.ReadTimeout
	}
	return DefaultCallbackReadTimeout
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
