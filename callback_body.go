package paygate

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
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

// maxFastFormFields is the most fields parseForm reads itself; a body with
// more goes to url.ParseQuery (a callback has about eleven).
const maxFastFormFields = 64

// parseForm is url.ParseQuery for a callback body, with the same result and
// the same errors (refusals of a semicolon or a bad escape; the limit of
// url.ParseQuery on the number of fields applies to the bodies past
// maxFastFormFields that it parses itself), in less work: the map is sized
// for the body's fields at once, the first value of every field shares one
// backing array, and names and values are unescaped by queryUnescape.
func parseForm(body string) (url.Values, error) {
	n := strings.Count(body, "&") + 1
	if n > maxFastFormFields {
		return url.ParseQuery(body)
	}
	form := make(url.Values, n)
	firsts := make([]string, 0, n)
	var err error
	for rest := body; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if strings.Contains(pair, ";") {
			err = errors.New("invalid semicolon separator in query")
			continue
		}
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		key, err1 := queryUnescape(key)
		if err1 == nil {
			value, err1 = queryUnescape(value)
		}
		switch {
		case err1 != nil:
			if err == nil {
				err = err1
			}
		case form[key] != nil:
			form[key] = append(form[key], value)
		default:
			firsts = append(firsts, value)
			form[key] = firsts[len(firsts)-1 : len(firsts) : len(firsts)]
		}
	}
	return form, err
}

// queryUnescape is url.QueryUnescape, with the same result and the same
// error, copying the runs between escapes whole instead of a byte at a
// time: a callback's fpx JSON is mostly escapes and runs.
func queryUnescape(s string) (string, error) {
	first := strings.IndexAny(s, "%+")
	if first < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		switch s[i] {
		case '+':
			b.WriteByte(' ')
			i++
		case '%':
			hi, ok1 := hexAt(s, i+1)
			lo, ok2 := hexAt(s, i+2)
			if !ok1 || !ok2 {
				return url.QueryUnescape(s) // its error, word for word
			}
			b.WriteByte(hi<<4 | lo)
			i += 3
		default:
			run := strings.IndexAny(s[i:], "%+")
			if run < 0 {
				run = len(s) - i
			}
			b.WriteString(s[i : i+run])
			i += run
		}
	}
	return b.String(), nil
}

// hexAt decodes the hex digit at s[i]; false past the end or for another
// byte.
func hexAt(s string, i int) (byte, bool) {
	if i >= len(s) {
		return 0, false
	}
	return hexValue(s[i])
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

// hexValue decodes one hex digit of either case.
func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
