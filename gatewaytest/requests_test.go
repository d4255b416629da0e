package gatewaytest

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// SignCallback signs as the gateway does: the copy verifies under the key
// (and not under another), the caller's form is left as it was, and the
// same form signs the same.
func TestSignCallback(t *testing.T) {
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	other, err := paygate.ParseKey("00000000-0000-0000-0000-000000000001")
	require.NoError(t, err)
	form := url.Values{"status": {"success"}, "refNo": {"INV-1~x"}, "amount": {"10.00"}}
	signed, err := SignCallback(key, form)
	require.NoError(t, err)
	require.NotContains(t, form, "signature", "the caller's form is not signed in place")
	require.NoError(t, paygate.VerifyCallback(signed, key))
	require.ErrorIs(t, paygate.VerifyCallback(signed, other), paygate.ErrSignatureMismatch)
	again, err := SignCallback(key, form)
	require.NoError(t, err)
	require.Equal(t, signed, again)
	require.Len(t, signed.Get("signature"), 16)
}

// The builders make a form POST that the handler reads, signed or as it
// is, and refuse what they cannot build, with no request: a zero key
// (nothing to sign with), a target that is not a URL.
func TestCallbackRequestBuilders(t *testing.T) {
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	fields := url.Values{"status": {"success"}, "refNo": {"INV-Q"}, "orderNo": {"GWQ"}, "amount": {"149.90"}}
	for _, tc := range []struct {
		name    string
		build   func() (*http.Request, error)
		path    string
		signed  bool
		wantErr error // with wantAny: the error it wraps, if any
		wantAny bool
	}{
		{name: "callback", build: func() (*http.Request, error) { return NewCallbackRequest(key, "/r", fields) }, path: "/r", signed: true},
		{name: "callback, empty target", build: func() (*http.Request, error) { return NewCallbackRequest(key, "", fields) }, path: "/", signed: true},
		{name: "return", build: func() (*http.Request, error) { return NewReturnRequest("https://shop.example/r", fields) }, path: "/r"},
		{name: "callback, zero key", build: func() (*http.Request, error) { return NewCallbackRequest(paygate.Key{}, "/r", fields) }, wantAny: true, wantErr: paygate.ErrInvalidKey},
		{name: "sign, zero key", build: func() (*http.Request, error) {
			_, err := SignCallback(paygate.Key{}, fields)
			return nil, err
		}, wantAny: true, wantErr: paygate.ErrInvalidKey},
		{name: "callback, bad target", build: func() (*http.Request, error) { return NewCallbackRequest(key, "http://[::1", fields) }, wantAny: true},
		{name: "return, bad target", build: func() (*http.Request, error) { return NewReturnRequest("http://[::1", url.Values{}) }, wantAny: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.build()
			if tc.wantAny {
				require.Error(t, err)
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
				}
				require.Nil(t, r)
				return
			}
			require.NoError(t, err)
			require.Equal(t, http.MethodPost, r.Method)
			require.Equal(t, tc.path, r.URL.Path)
			require.Equal(t, "application/x-www-form-urlencoded", r.Header.Get("Content-Type"))
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			got, err := url.ParseQuery(string(body))
			require.NoError(t, err)
			if tc.signed {
				require.NoError(t, paygate.VerifyCallback(got, key))
				got.Del("signature")
			}
			require.Equal(t, fields, got)
		})
	}
}
