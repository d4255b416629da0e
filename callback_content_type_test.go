package paygate

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A verified callback is acted on whatever its Content-Type says, and
// fulfilled once however often it comes; a body that is clearly not a form
// is refused unread or unparsed (docs/assumptions.md A-callback-content-type).
func TestCallbackContentType(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	success := callbackFields("INV-CT1", "GWCT1", StatusSuccess, "00")
	signed, err := signCallback(key, success)
	require.NoError(t, err)

	tests := []struct {
		name        string
		contentType string // "" sends none
		body        string
		noReturn    bool // OnReturn unset
		code        int
		fulfils     int
		returns     int
		rejects     int
	}{
		{name: "form", contentType: formContentType, body: signed.Encode(), code: 200, fulfils: 1},
		{name: "no Content-Type", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "text/plain", contentType: "text/plain", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "text/plain with a charset", contentType: "text/plain; charset=ISO-8859-1", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "form with a malformed parameter", contentType: formContentType + "; charset", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "form with odd parameters", contentType: formContentType + "; boundary=x; q=0.5; charset=\"utf-8\"", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "form with a doubled separator", contentType: formContentType + ";;", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "form in upper case", contentType: "APPLICATION/X-WWW-FORM-URLENCODED", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "octet-stream", contentType: "application/octet-stream", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "unparsable header", contentType: "///;;==", body: signed.Encode(), code: 200, fulfils: 1},
		{name: "JSON declared", contentType: "application/json", body: `{"status":"success"}`, code: 415, rejects: 1},
		{name: "JSON declared with a form body", contentType: "application/json; charset=utf-8", body: signed.Encode(), code: 415, rejects: 1},
		{name: "problem+json", contentType: "application/problem+json", body: signed.Encode(), code: 415, rejects: 1},
		{name: "multipart declared", contentType: "multipart/form-data; boundary=b", body: signed.Encode(), code: 415, rejects: 1},
		{name: "multipart with a malformed parameter", contentType: "multipart/form-data; boundary", body: signed.Encode(), code: 415, rejects: 1},
		{name: "JSON object without Content-Type", body: ` {"status":"success","signature":"00"}`, code: 415, rejects: 1},
		{name: "JSON array as text/plain", contentType: "text/plain", body: `[{"status":"success"}]`, code: 415, rejects: 1},
		{name: "multipart body without Content-Type", body: "--b\r\nContent-Disposition: form-data; name=\"status\"\r\n\r\nsuccess\r\n--b--\r\n", code: 415, rejects: 1},
		{name: "unsigned without Content-Type: the browser return", body: success.Encode(), code: 200, returns: 1},
		{name: "unsigned without Content-Type, no OnReturn: 403", body: success.Encode(), noReturn: true, code: 403, rejects: 1},
		{name: "empty signature without Content-Type: the browser return", body: success.Encode() + "&signature=", code: 200, returns: 1},
		{name: "forged without Content-Type: 403", body: success.Encode() + "&signature=00000000000000000000000000000000", code: 403, rejects: 1},
		{name: "unparsable without Content-Type: 400", body: "status=%zz", code: 400, rejects: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			h := rec.handler(key)
			if tt.noReturn {
				h.OnReturn = nil
			}
			// Twice, as the gateway retries: a verified success is fulfilled once.
			for range 2 {
				w := serve(h, rawRequest(t, http.MethodPost, tt.contentType, tt.body))
				require.Equal(t, tt.code, w.Code, w.Body.String())
			}
			require.Len(t, rec.fulfils, tt.fulfils)
			require.Equal(t, 2*tt.returns, rec.returns)
			require.Len(t, rec.rejects, 2*tt.rejects)
		})
	}
}

// A middleware that called r.ParseForm on a request without the form's
// Content-Type left the body unread (and r.PostForm empty): the handler
// reads it itself.
func TestCallbackContentTypeAfterParseForm(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	signed, err := signCallback(key, callbackFields("INV-CT2", "GWCT2", StatusSuccess, "00"))
	require.NoError(t, err)
	rec := &recorder{}
	h := rec.handler(key)
	r := rawRequest(t, http.MethodPost, "text/plain", signed.Encode())
	require.NoError(t, r.ParseForm())
	require.Empty(t, r.PostForm)
	require.Equal(t, 200, serve(h, r).Code)
	require.Equal(t, []string{"INV-CT2"}, rec.fulfils)
}

// FuzzCallbackContentType: for any Content-Type and body, the handler never
// panics, answers one of its statuses, and fulfils only a verified success.
func FuzzCallbackContentType(f *testing.F) {
	key := mustKey(f, testKeyUUID)
	signed, _ := signCallback(key, callbackFields("INV-1", "GW1", StatusSuccess, "00"))
	f.Add("", signed.Encode())
	f.Add("text/plain", signed.Encode())
	f.Add(formContentType+"; charset", signed.Encode())
	f.Add("multipart/form-data; boundary=\"", "--x\r\n")
	f.Add("application/json", "{}")
	f.Add("\x00;=\"", "[")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		h := &CallbackHandler{
			Keys:   []Key{key},
			Logger: slog.New(slog.DiscardHandler),
			Fulfil: FulfilFunc(func(_ context.Context, cb *Callback) error {
				if err := VerifyCallback(cb.Form, key); err != nil {
					t.Fatalf("Fulfil without a valid signature: %v", err)
				}
				return nil
			}),
			OnReturn: func(http.ResponseWriter, *http.Request, *Callback) {},
		}
		r := rawRequest(t, http.MethodPost, "", body)
		r.Header["Content-Type"] = []string{contentType} // as sent, unchecked
		w := serve(h, r)
		require.Contains(t, []int{200, 400, 403, 413, 415, 500, 503}, w.Code)
		if kind := callbackContentKind(contentType); kind == contentNotForm {
			require.Equal(t, 415, w.Code)
		}
	})
}

// The classification of a Content-Type header.
func TestCallbackContentKind(t *testing.T) {
	tests := map[string]contentKind{
		"":                                  contentMaybeForm,
		formContentType:                     contentForm,
		formContentType + "; charset=UTF-8": contentForm,
		formContentType + "; charset":       contentMaybeForm,
		"text/plain":                        contentMaybeForm,
		"application/json":                  contentNotForm,
		"Application/JSON; charset=utf-8":   contentNotForm,
		"application/vnd.api+json":          contentNotForm,
		"multipart/form-data; boundary=x":   contentNotForm,
		"multipart/mixed; boundary":         contentNotForm,
		"garbage":                           contentMaybeForm,
	}
	for header, want := range tests {
		require.Equal(t, want, callbackContentKind(header), "%q", header)
	}
	require.True(t, bodyMayBeForm([]byte(url.Values{"a": {"{"}}.Encode())))
	require.True(t, bodyMayBeForm([]byte("--a=b")))
	require.False(t, bodyMayBeForm([]byte(strings.Repeat(" ", 3)+"{")))
}
