package paygate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// BodyLimit holds behind a middleware that parsed the form first: a signed
// callback whose body is over the limit gets 413 and OnReject, never
// Fulfil, whether its size shows in Content-Length or only in the parsed
// fields (a chunked body); one within the limit is fulfilled.
func TestCallbackHandlerBodyLimitAfterMiddlewareParsed(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name    string
		padding int   // bytes of an extra signed field
		limit   int64 // BodyLimit; 0 for the default
		chunked bool  // no Content-Length: only the parsed size tells
		want    int
		// check asserts what the handler did with the callback.
		check func(t *testing.T, rec *recorder)
	}{
		{name: "200 KB, Content-Length", padding: 200 << 10, want: http.StatusRequestEntityTooLarge, check: refusedAfterMiddleware},
		{name: "200 KB, chunked", padding: 200 << 10, chunked: true, want: http.StatusRequestEntityTooLarge, check: refusedAfterMiddleware},
		{name: "1 KB over a 512-byte limit, chunked", padding: 1 << 10, limit: 512, chunked: true, want: http.StatusRequestEntityTooLarge, check: refusedAfterMiddleware},
		{name: "within the default limit", padding: 1 << 10, want: http.StatusOK, check: fulfilledBig},
		{name: "within the default limit, chunked", padding: 1 << 10, chunked: true, want: http.StatusOK, check: fulfilledBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			h := rec.handler(key)
			h.BodyLimit = tc.limit
			parseFirst := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.NoError(t, r.ParseForm())
				h.ServeHTTP(w, r)
			})
			f := callbackFields("INV-BIG", "GWB", StatusSuccess, "00")
			f.Set("padding", strings.Repeat("p", tc.padding))
			r := signedRequest(t, key, f)
			if tc.chunked {
				r.ContentLength = -1
			}
			w := serve(parseFirst, r)
			require.Equal(t, tc.want, w.Code, w.Body.String())
			tc.check(t, rec)
		})
	}
}

// fulfilledBig checks that the big callback was fulfilled.
func fulfilledBig(t *testing.T, rec *recorder) {
	require.Equal(t, []string{"INV-BIG"}, rec.fulfils)
}

// refusedAfterMiddleware checks that the callback was refused, for its size
// after a middleware parsed it, and never fulfilled.
func refusedAfterMiddleware(t *testing.T, rec *recorder) {
	require.Empty(t, rec.fulfils, "an over-limit body is never fulfilled")
	require.Len(t, rec.rejects, 1)
	require.ErrorContains(t, rec.rejects[0], "a middleware parsed it first")
}

// formSize never counts more than the encoded form holds, so a form within
// the limit is never refused for its parsed size.
func TestFormSizeIsALowerBound(t *testing.T) {
	for _, body := range []string{"", "a=b", "a=b&c=d&c=e", "k%20ey=v%26alue&x=", "status=success&refNo=INV-1~cart%207"} {
		r := rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", body)
		require.NoError(t, r.ParseForm())
		require.LessOrEqual(t, formSize(r.PostForm, 1<<20), int64(len(body))+1, body) // +1: the last field has no &
	}
}

// noUnwrap is a logging middleware's ResponseWriter without Unwrap: the
// read deadline cannot reach the connection through it.
type noUnwrap struct{ http.ResponseWriter }

// withUnwrap is the same wrapper with the cure.
type withUnwrap struct{ http.ResponseWriter }

func (w withUnwrap) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// When ReadTimeout cannot set the read deadline (a wrapper without Unwrap),
// the handler still answers, and logs one warning per handler naming the
// cure and the wrapper's type; a wrapper with Unwrap, or a test's
// ResponseRecorder (no connection), gets no warning.
func TestCallbackHandlerWarnsOnceWithoutReadDeadline(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name  string
		wrap  func(http.ResponseWriter) http.ResponseWriter
		warns int
		// check, when set, asserts more of the log.
		check func(t *testing.T, out string)
	}{
		{name: "wrapper without Unwrap", wrap: func(w http.ResponseWriter) http.ResponseWriter { return noUnwrap{w} }, warns: 1,
			check: func(t *testing.T, out string) {
				require.Contains(t, out, "level=WARN")
				require.Contains(t, out, "Unwrap() http.ResponseWriter")
				require.Contains(t, out, "paygate.noUnwrap")
			}},
		{name: "wrapper with Unwrap", wrap: func(w http.ResponseWriter) http.ResponseWriter { return withUnwrap{w} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			rec := &recorder{}
			h := rec.handler(key)
			h.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(tc.wrap(w), r)
			}))
			t.Cleanup(srv.Close)
			// First a unit test's recorder: no connection, so no warning (one
			// would take the handler's only warning, naming the recorder).
			w := serve(h, signedRequest(t, key, callbackFields("INV-W0", "GWW0", StatusSuccess, "00")))
			require.Equal(t, http.StatusOK, w.Code)
			for i, ref := range []string{"INV-W1", "INV-W2", "INV-W3"} {
				r := signedRequest(t, key, callbackFields(ref, "GW"+ref, StatusSuccess, "00"))
				resp, err := srv.Client().Post(srv.URL, r.Header.Get("Content-Type"), r.Body)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
			}
			require.Len(t, rec.fulfils, 4)
			out := logs.String()
			require.Equal(t, tc.warns, strings.Count(out, "cannot set the read deadline"), out)
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// readCallbackBody reads what io.ReadAll reads, whatever the size hint says
// (none, too small, exact, too large) and however the reader hands out its
// bytes, and passes a read error on. It grows a full buffer, never asking
// the reader to fill an empty one (which a reader may answer with nothing,
// forever).
func TestReadCallbackBody(t *testing.T) {
	body := strings.Repeat("status=success&", 100)
	for _, tc := range []struct {
		name   string
		hint   int64
		reader func(io.Reader) io.Reader
	}{
		{name: "no hint (chunked)", hint: -1},
		{name: "exact hint", hint: int64(len(body))},
		{name: "hint too small", hint: 10},
		{name: "zero hint", hint: 0},
		{name: "hint too large", hint: 4 * int64(len(body))},
		{name: "exact hint, one byte a read", hint: int64(len(body)), reader: iotest.OneByteReader},
		{name: "hint too small, half reads", hint: 3, reader: iotest.HalfReader},
		{name: "exact hint, data and EOF together", hint: int64(len(body)), reader: iotest.DataErrReader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(body)
			if tc.reader != nil {
				r = tc.reader(r)
			}
			got, err := readCallbackBody(emptyReadRefused{r}, tc.hint)
			require.NoError(t, err)
			require.Equal(t, body, string(got))
		})
	}
	broken := errors.New("connection reset")
	_, err := readCallbackBody(io.MultiReader(strings.NewReader(body), iotest.ErrReader(broken)), int64(len(body)))
	require.ErrorIs(t, err, broken)
}

// A Content-Length that lies (far above the body, within a BodyLimit set
// high) sizes no buffer: the handler reads the short body that came and
// answers as for an honest one, never a panic or an allocation of what
// the header claims (io.ReadAll grows with the bytes that come, and so does
// readCallbackBody past maxBodyPrealloc).
func TestCallbackHandlerLyingContentLength(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	for _, tc := range []struct {
		name          string
		limit         int64 // BodyLimit
		contentLength int64 // what the request claims
	}{
		{name: "1 PiB claimed, 1 PiB limit", limit: 1 << 50, contentLength: 1 << 50},
		{name: "max int64 claimed and limit", limit: 1<<63 - 1, contentLength: 1<<63 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			h := rec.handler(key)
			h.BodyLimit = tc.limit
			r := signedRequest(t, key, callbackFields("INV-LIE", "GWL", StatusSuccess, "00"))
			r.ContentLength = tc.contentLength
			var w *httptest.ResponseRecorder
			require.NotPanics(t, func() { w = serve(h, r) })
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.Equal(t, []string{"INV-LIE"}, rec.fulfils)
		})
	}
	for _, hint := range []int64{1 << 30, 1 << 50, 1<<63 - 1} {
		got, err := readCallbackBody(strings.NewReader("a=1"), hint)
		require.NoError(t, err)
		require.Equal(t, "a=1", string(got))
		require.LessOrEqual(t, cap(got), maxBodyPrealloc+1, "hint %d", hint)
	}
}

// Over a real connection, the body is what net/http hands over whatever
// the Content-Length says: one above the body (the client then stops
// sending) is a read error, 400, over BodyLimit too (only bytes read count
// against it); one below cuts the body, whose signature
// then fails, 403; a chunked body of any chunking and an exact length are
// fulfilled. Nothing is fulfilled but from the whole signed body.
func TestCallbackHandlerContentLengthOnTheWire(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	signed, err := signCallback(key, callbackFields("INV-W", "GWW", StatusSuccess, "00"))
	require.NoError(t, err)
	body := signed.Encode()
	chunked := func(chunk int) string {
		var b strings.Builder
		for rest := body; rest != ""; {
			n := min(chunk, len(rest))
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		return b.String() + "0\r\n\r\n"
	}
	for _, tc := range []struct {
		name    string
		headers string // after Content-Type
		payload string
		want    int
		fulfils []string
	}{
		{name: "exact", headers: fmt.Sprintf("Content-Length: %d\r\n", len(body)), payload: body, want: http.StatusOK, fulfils: []string{"INV-W"}},
		{name: "claims 50 bytes more", headers: fmt.Sprintf("Content-Length: %d\r\n", len(body)+50), payload: body, want: http.StatusBadRequest},
		{name: "claims 1 GiB, over BodyLimit", headers: "Content-Length: 1073741824\r\n", payload: body, want: http.StatusBadRequest},
		{name: "claims 20 bytes less", headers: fmt.Sprintf("Content-Length: %d\r\n", len(body)-20), payload: body, want: http.StatusForbidden},
		{name: "chunked, 1-byte chunks", headers: "Transfer-Encoding: chunked\r\n", payload: chunked(1), want: http.StatusOK, fulfils: []string{"INV-W"}},
		{name: "chunked, 100-byte chunks", headers: "Transfer-Encoding: chunked\r\n", payload: chunked(100), want: http.StatusOK, fulfils: []string{"INV-W"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			srv := httptest.NewServer(rec.handler(key))
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)), "the exchange is bounded")
			_, err = fmt.Fprintf(conn, "POST /paygate/return HTTP/1.1\r\nHost: shop\r\nContent-Type: %s\r\n%s\r\n%s", formContentType, tc.headers, tc.payload)
			require.NoError(t, err)
			require.NoError(t, conn.(*net.TCPConn).CloseWrite())
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "an answer within 10 s")
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tc.want, resp.StatusCode)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			require.Equal(t, tc.fulfils, rec.fulfils)
		})
	}
}

// The BodyLimit the caller sets, raised or lowered, is the one in force on
// every path a body takes: read by the handler (with or without a
// Content-Length) or parsed by a middleware first (with or without one). A
// body within a raised limit, though over the default, is fulfilled; one
// over a lowered limit, though within the default, is 413 and never
// fulfilled.
func TestCallbackHandlerBodyLimitInForceOnEveryPath(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	limits := []struct {
		name    string
		limit   int64
		padding int
		want    int
	}{
		{name: "200 KB within a 256 KB limit", limit: 256 << 10, padding: 200 << 10, want: http.StatusOK},
		{name: "1 KB over a 512-byte limit", limit: 512, padding: 1 << 10, want: http.StatusRequestEntityTooLarge},
	}
	paths := []struct {
		name        string
		parseFirst  bool   // a middleware parsed the form first
		chunked     bool   // no Content-Length
		contentType string // "" the form's; "none" without the header
	}{
		{name: "read by the handler"},
		{name: "read by the handler, chunked", chunked: true},
		{name: "parsed by a middleware", parseFirst: true},
		{name: "parsed by a middleware, chunked", parseFirst: true, chunked: true},
		// A body read whatever its Content-Type (A-callback-content-type)
		// is held to the limit all the same.
		{name: "without Content-Type", contentType: "none"},
		{name: "without Content-Type, chunked", contentType: "none", chunked: true},
		{name: "as text/plain, chunked", contentType: "text/plain", chunked: true},
		{name: "as text/plain, parsed by a middleware", contentType: "text/plain", parseFirst: true},
	}
	for _, l := range limits {
		for _, p := range paths {
			t.Run(l.name+", "+p.name, func(t *testing.T) {
				rec := &recorder{}
				h := rec.handler(key)
				h.BodyLimit = l.limit
				var serveIt http.Handler = h
				if p.parseFirst {
					serveIt = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						require.NoError(t, r.ParseForm())
						h.ServeHTTP(w, r)
					})
				}
				f := callbackFields("INV-BIG", "GWB", StatusSuccess, "00")
				f.Set("padding", strings.Repeat("p", l.padding))
				r := signedRequest(t, key, f)
				switch p.contentType {
				case "":
				case "none":
					r.Header.Del("Content-Type")
				default:
					r.Header.Set("Content-Type", p.contentType)
				}
				if p.chunked {
					r.ContentLength = -1
				}
				w := serve(serveIt, r)
				require.Equal(t, l.want, w.Code, w.Body.String())
				if l.want == http.StatusOK {
					require.Equal(t, []string{"INV-BIG"}, rec.fulfils)
				} else {
					require.Empty(t, rec.fulfils)
				}
			})
		}
	}
}

// emptyReadRefused is a reader that fails a Read into an empty buffer, as
// io.Reader allows a reader to answer it with 0 bytes and no error forever.
type emptyReadRefused struct{ r io.Reader }

func (e emptyReadRefused) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, errors.New("Read into an empty buffer")
	}
	return e.r.Read(p)
}

// A body of the size its Content-Length announced is read into one
// buffer, made before the first byte: the hint spares the buffer's growth.
func TestReadCallbackBodyOfItsHintIsOneAllocation(t *testing.T) {
	body := strings.Repeat("status=success&", 100)
	r := strings.NewReader(body)
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(body)
		got, err := readCallbackBody(r, int64(len(body)))
		if err != nil || len(got) != len(body) {
			panic("body not read")
		}
	})
	require.Equal(t, 1.0, allocs)
}

// BodyLimit holds behind a middleware that parsed the form first, to the
// byte: a Content-Length, or parsed fields, of exactly the limit pass; one
// byte more is refused; and the fields are counted past a value that alone
// reaches the limit exactly.
func TestParsedFormOverLimitEdges(t *testing.T) {
	const limit = 10
	for _, tc := range []struct {
		name          string
		contentLength int64
		form          url.Values
		want          string // what the error says; "" for none
	}{
		{name: "Content-Length at the limit", contentLength: limit, form: url.Values{"a": {"b"}}},
		{name: "Content-Length one over", contentLength: limit + 1, form: url.Values{"a": {"b"}}, want: "(Content-Length)"},
		{name: "fields at the limit", contentLength: -1, form: url.Values{"a": {"1234567"}}},
		{name: "fields one over", contentLength: -1, form: url.Values{"a": {"12345678"}}, want: "callback form of at least 11 bytes"},
		{name: "a value at the limit, then another", contentLength: -1, form: url.Values{"a": {"1234567", "b"}}, want: "callback form of at least 14 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{ContentLength: tc.contentLength, PostForm: tc.form}
			err := parsedFormOverLimit(r, limit)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A body the handler reads itself is held to BodyLimit to the byte:
// exactly the limit is read and fulfilled, one byte more is 413, with or
// without a Content-Length.
func TestCallbackBodyLimitToTheByte(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	body := signedRequestBody(t, key, callbackFields("INV-EDGE", "GWE", StatusSuccess, "00"))
	for _, tt := range []struct {
		name    string
		limit   int64
		chunked bool
		want    int
	}{
		{name: "at the limit", limit: int64(len(body)), want: http.StatusOK},
		{name: "at the limit, chunked", limit: int64(len(body)), chunked: true, want: http.StatusOK},
		{name: "one byte over", limit: int64(len(body)) - 1, want: http.StatusRequestEntityTooLarge},
		{name: "one byte over, chunked", limit: int64(len(body)) - 1, chunked: true, want: http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			h := rec.handler(key)
			h.BodyLimit = tt.limit
			r := rawRequest(t, http.MethodPost, "application/x-www-form-urlencoded", body)
			if tt.chunked {
				r.ContentLength = -1
			}
			require.Equal(t, tt.want, serve(h, r).Code)
			require.Equal(t, tt.want == http.StatusOK, len(rec.fulfils) == 1)
		})
	}
}

// signedRequestBody is the encoded body of a callback signed with key.
func signedRequestBody(t *testing.T, key Key, f url.Values) string {
	t.Helper()
	b, err := io.ReadAll(signedRequest(t, key, f).Body)
	require.NoError(t, err)
	return string(b)
}
