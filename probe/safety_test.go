package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/probe"
)

// A client that would send a credential in clear is refused before any
// request; the Client already refuses such a URL, and the probe checks again.
func TestProbeRefusesPlainHTTP(t *testing.T) {
	_, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithAuthToken("tok"), paygate.WithReportsURL("http://gateway.example"))
	require.Error(t, err, "the Client refuses plain http to a host that is not loopback")

	_, err = probe.Run(context.Background(), nil, probe.Options{})
	require.Error(t, err)
	c, err := paygate.NewClient(paygate.WithAgency("AG"))
	require.NoError(t, err)
	_, err = probe.Run(context.Background(), c, probe.Options{})
	require.ErrorIs(t, err, paygate.ErrNoCredential, "no credential, no reports URL: nothing to probe")
}

// A service that redirects every request gets no credential past it: the
// probe's requests are never followed to the other host, whatever they carry.
func TestProbeSendsNoCredentialOnRedirect(t *testing.T) {
	var mu sync.Mutex
	var elsewhere []*http.Request
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r)
		mu.Unlock()
	}))
	defer other.Close()
	var seen []string
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
	require.NoError(t, err)
	c, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithKey(key), paygate.WithAuthToken("secret-token"),
		paygate.WithReportsURL(redirect.URL), paygate.WithCheckoutURL(redirect.URL))
	require.NoError(t, err)
	rep, err := probe.Run(context.Background(), c, probe.Options{Create: true, Interval: 1})
	require.NoError(t, err)
	require.NotEmpty(t, seen)
	require.Empty(t, elsewhere, "a redirect was followed")
	require.True(t, rep.Differs(), "a service that redirects everything does not behave as assumed")
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	require.NoError(t, rep.WriteJSON(&b))
	require.NotContains(t, b.String(), "secret-token")
	require.NotContains(t, b.String(), "3f2504e0")
}
