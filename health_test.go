package paygate

import (
	"context"
	"net/http"
	"testing"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// Version and Echo send no credential, even from a client that has both,
// return the body trimmed, and are retried like GETs.
func TestVersionAndEcho(t *testing.T) {
	f := newTestClient(t, WithAuthToken(testAuthToken))
	calls := map[string]int{}
	for path, body := range map[string]string{paths.Version: " v2.4.1\n", paths.Echo: `{"echo":"ok"}`} {
		f.mt.RegisterResponder(http.MethodGet, testReports+path, func(req *http.Request) (*http.Response, error) {
			calls[path]++
			require.Empty(t, req.Header.Get("Authorization"), "no Bearer token")
			require.Empty(t, req.URL.RawQuery, "no signature, no agency")
			if calls[path] == 1 {
				return httpmock.NewStringResponse(http.StatusServiceUnavailable, "busy"), nil
			}
			return httpmock.NewStringResponse(200, body), nil
		})
	}
	ctx := context.Background()
	v, err := f.c.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, "v2.4.1", v)
	e, err := f.c.Echo(ctx)
	require.NoError(t, err)
	require.Equal(t, `{"echo":"ok"}`, e)
	require.Equal(t, map[string]int{paths.Version: 2, paths.Echo: 2}, calls, "a 503 is retried")

	g := newTestClient(t)
	g.mt.RegisterResponder(http.MethodGet, testReports+paths.Echo, httpmock.NewStringResponder(http.StatusNotFound, "no echo here"))
	_, err = g.c.Echo(ctx)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusNotFound, apiErr.StatusCode)

	c, err := NewClient()
	require.NoError(t, err)
	_, err = c.Echo(ctx)
	require.ErrorIs(t, err, ErrNoCredential, "no reports URL: nothing sent")
}
