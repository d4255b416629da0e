package probe_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/probe"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Options left zero (or negative) pace the run at DefaultInterval: each
// request goes DefaultInterval after the one before, on the bubble's clock.
func TestProbeDefaultInterval(t *testing.T) {
	for _, tt := range []struct {
		name     string
		interval time.Duration
		want     time.Duration
	}{
		{"zero", 0, probe.DefaultInterval},
		{"negative", -time.Second, probe.DefaultInterval},
		{"set", 2 * time.Second, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent []time.Time
				rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent = append(sent, time.Now())
					return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
				})
				c, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithAuthToken("tok"),
					paygate.WithReportsURL("https://gateway.example"), paygate.WithHTTPClient(&http.Client{Transport: rt}))
				require.NoError(t, err)
				rep, err := probe.Run(context.Background(), c, probe.Options{Interval: tt.interval})
				require.NoError(t, err)
				require.Greater(t, len(sent), 2)
				require.Equal(t, len(sent), rep.Requests)
				for i := 1; i < len(sent); i++ {
					require.Equal(t, tt.want, sent[i].Sub(sent[i-1]), "request %d", i)
				}
			})
		})
	}
}

// A-clock-skew holds only when the late-signed report is refused as the
// SDK reads an expired signature, 401 or 403: any other answer, even
// another 4xx, differs.
func TestProbeClockSkewReadsOnly401And403(t *testing.T) {
	for _, tt := range []struct {
		late int
		want probe.Verdict
	}{
		{http.StatusUnauthorized, probe.Holds},
		{http.StatusForbidden, probe.Holds},
		{http.StatusBadRequest, probe.Differs},
		{http.StatusNotFound, probe.Differs},
		{http.StatusUnprocessableEntity, probe.Differs},
		{http.StatusOK, probe.Differs},
	} {
		t.Run(http.StatusText(tt.late), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Has("signature") {
					w.WriteHeader(tt.late)
				}
				_, _ = io.WriteString(w, "{}")
			}))
			defer srv.Close()
			key, err := paygate.ParseKey("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
			require.NoError(t, err)
			c, err := paygate.NewClient(paygate.WithAgency("AG"), paygate.WithKey(key), paygate.WithReportsURL(srv.URL))
			require.NoError(t, err)
			rep, err := probe.Run(context.Background(), c, fast(false))
			require.NoError(t, err)
			res, ok := rep.Result("A-clock-skew")
			require.True(t, ok)
			require.Equal(t, tt.want, res.Verdict, "%+v", res)
		})
	}
}

// Report.Created lists only the orders the service took: under a switch
// that refuses some of the probe's orders, every reference listed is an
// order of the sandbox, and a refused one is not.
func TestProbeCreatedListsOnlyTakenOrders(t *testing.T) {
	for _, tt := range []struct {
		name    string
		on      []gatewaytest.Option
		seed    []paygate.Option // the seeding client's, with the switch on
		refused bool             // the switch refuses one of the probe's orders
	}{
		{"default", nil, nil, false},
		{"post-signed-with-path", []gatewaytest.Option{gatewaytest.WithPOSTSignedWithPath()}, []paygate.Option{paygate.WithPOSTSignedWithPath()}, true},
		{"b2b-minimum-refused", []gatewaytest.Option{gatewaytest.WithB2BMinimumRefused()}, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sb := sandbox(t, 3, tt.seed, tt.on...)
			c, err := sb.Client()
			require.NoError(t, err)
			rep, err := probe.Run(context.Background(), c, fast(true))
			require.NoError(t, err)
			orders := map[string]bool{}
			for _, o := range sb.Orders() {
				orders[o.RefNo] = true
			}
			payLinks := map[string]bool{}
			var taken []string
			for _, ref := range rep.Created {
				if base, ok := strings.CutSuffix(ref, " (pay link opened, may show as an order)"); ok {
					payLinks[base] = true // a pay link opened, not an order created
					continue
				}
				require.True(t, orders[ref], "%s is listed as created but the sandbox holds no such order", ref)
				taken = append(taken, ref)
			}
			var atSandbox []string
			for ref := range orders {
				if strings.HasPrefix(ref, "PROBE-") && !payLinks[ref] {
					atSandbox = append(atSandbox, ref)
				}
			}
			require.ElementsMatch(t, atSandbox, taken, "the orders listed are the orders the sandbox took")
			require.Equal(t, tt.refused, rep.Differs(), "the switch refuses one of the probe's orders")
			require.NotEmpty(t, rep.Created)
		})
	}
}
