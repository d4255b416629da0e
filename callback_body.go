package paygate

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
)

// formContentType is the media type of a callback body.
const formContentType = "application/x-www-form-urlencoded"

// isFormContentType reports whether a Content-Type header names
// formContentType, with any parameters (a charset). The header as the
// gateway sends it is matched as it is; any other goes through
// mime.ParseMediaType.
func isFormContentType(header string) bool {
	if header == formContentType {
		return true
	}
	mt, _, err := mime.ParseMediaType(header)
	return err == nil && mt == formContentType
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
