package probe_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/probeaccess"
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
// probe's requests are never followed to the other host, whatever they
// carry. A service that puts the credential it got first in its Location,
// and echoes it in the redirect's body, finds it in neither report: the
// report names the redirect's host alone, and quotes the body scrubbed.
func TestProbeSendsNoCredentialOnRedirect(t *testing.T) {
	var mu sync.Mutex
	var elsewhere []*http.Request
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r)
		mu.Unlock()
	}))
	defer other.Close()
	var seen, sigs []string
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		auth, sig := r.Header.Get("Authorization"), r.Form.Get("signature")
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		if sig != "" {
			sigs = append(sigs, sig)
		}
		mu.Unlock()
		w.Header().Set("Location", other.URL+"/"+url.PathEscape(auth)+"/"+sig+"/moved-here"+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
		fmt.Fprintf(w, "Authorization: %s; signature=%s", auth, sig)
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
	require.NotEmpty(t, sigs, "signed requests were sent")
	require.Empty(t, elsewhere, "a redirect was followed")
	require.True(t, rep.Differs(), "a service that redirects everything does not behave as assumed")
	for _, write := range []func(io.Writer) error{rep.WriteText, rep.WriteJSON} {
		var b strings.Builder
		require.NoError(t, write(&b))
		notIn(t, b.String(), append([]string{"secret-token", "3f2504e0"}, sigs...)...)
		notIn(t, b.String(), "moved-here") // the report names the redirect's host, not its path
	}
}

// notIn fails t, quoting the line, when report holds any of secrets.
func notIn(t *testing.T, report string, secrets ...string) {
	t.Helper()
	for _, line := range strings.Split(report, "\n") {
		for _, s := range secrets {
			require.NotContains(t, line, s, "the report quotes %q", s)
		}
	}
}

// A service that echoes the credential it got in a successful answer's
// body finds it in neither report: every answer the probe quotes, 2xx or
// not, is scrubbed of the request's credentials.
func TestProbeScrubsSuccessfulAnswers(t *testing.T) {
	for _, tt := range []struct {
		name           string
		bearer, signed int // the status of a request carrying the token, a signature
	}{
		{"token taken, signature refused", http.StatusOK, http.StatusUnauthorized},
		{"token refused, signature taken", http.StatusUnauthorized, http.StatusOK},
		{"both taken", http.StatusOK, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var sigs []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				auth, sig := r.Header.Get("Authorization"), r.Form.Get("signature")
				status := http.StatusOK
				switch {
				case auth != "":
					status = tt.bearer
				case sig != "":
					status = tt.signed
					mu.Lock()
					sigs = append(sigs, sig)
					mu.Unlock()
				}
				w.WriteHeader(status)
				fmt.Fprintf(w, "signature=%s; Authorization: %s", sig, auth)
			}))
			defer srv.Close()
			key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
			require.NoError(t, err)
			c, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithKey(key), paygate.WithAuthToken("secret-token"),
				paygate.WithReportsURL(srv.URL), paygate.WithCheckoutURL(srv.URL))
			require.NoError(t, err)
			rep, err := probe.Run(context.Background(), c, probe.Options{Create: true, Interval: 1})
			require.NoError(t, err)
			require.NotEmpty(t, sigs, "signed requests were sent")
			for _, write := range []func(io.Writer) error{rep.WriteText, rep.WriteJSON} {
				var b strings.Builder
				require.NoError(t, write(&b))
				notIn(t, b.String(), append([]string{"secret-token", "3f2504e0"}, sigs...)...)
				require.Contains(t, b.String(), "[REDACTED]", "an echo was quoted")
			}
		})
	}
}

// A successful answer keeps no credential in its headers, nor in its body
// cut at its size limit (1 MiB), any part of one that straddles the cut.
func TestProbeAnswerKeepsNoCredential(t *testing.T) {
	const limit = 1 << 20
	for _, at := range []int{limit - len("Bearer secret-token"), limit - len("secret-token"), limit - 6, limit - 1, limit} {
		t.Run(fmt.Sprint(limit-at), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", r.Header.Get("Authorization"))
				_, _ = io.WriteString(w, strings.Repeat("x", at)+r.Header.Get("Authorization")+strings.Repeat("y", 100))
			}))
			defer srv.Close()
			c, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithAuthToken("secret-token"), paygate.WithReportsURL(srv.URL))
			require.NoError(t, err)
			a, err := probeaccess.Do(context.Background(), c, probeaccess.Request{Path: "/report", Auth: probeaccess.AuthBearer})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, a.Status)
			require.Greater(t, len(a.Body), limit-100)
			require.NotContains(t, string(a.Body), "secr")
			require.NotContains(t, string(a.Body), "Bearer")
			require.Equal(t, "[REDACTED]", a.Header.Get("X-Request-Id"))
		})
	}
}
