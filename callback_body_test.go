package paygate

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	}{
		{name: "200 KB, Content-Length", padding: 200 << 10, want: http.StatusRequestEntityTooLarge},
		{name: "200 KB, chunked", padding: 200 << 10, chunked: true, want: http.StatusRequestEntityTooLarge},
		{name: "1 KB over a 512-byte limit, chunked", padding: 1 << 10, limit: 512, chunked: true, want: http.StatusRequestEntityTooLarge},
		{name: "within the default limit", padding: 1 << 10, want: http.StatusOK},
		{name: "within the default limit, chunked", padding: 1 << 10, chunked: true, want: http.StatusOK},
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
			if tc.want == http.StatusOK {
				require.Equal(t, []string{"INV-BIG"}, rec.fulfils)
				return
			}
			require.Empty(t, rec.fulfils, "an over-limit body is never fulfilled")
			require.Len(t, rec.rejects, 1)
			require.ErrorContains(t, rec.rejects[0], "a middleware parsed it first")
		})
	}
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
	}{
		{name: "wrapper without Unwrap", wrap: func(w http.ResponseWriter) http.ResponseWriter { return noUnwrap{w} }, warns: 1},
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
			if tc.warns > 0 {
				require.Contains(t, out, "level=WARN")
				require.Contains(t, out, "Unwrap() http.ResponseWriter")
				require.Contains(t, out, "paygate.noUnwrap")
			}
		})
	}
}
