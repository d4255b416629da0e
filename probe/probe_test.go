package probe_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/probe"
)

// sandbox starts a sandbox holding n orders (so that its report has rows),
// created by a client with seed's options.
func sandbox(t *testing.T, n int, seed []paygate.Option, opts ...gatewaytest.Option) *gatewaytest.Server {
	t.Helper()
	sb := gatewaytest.NewServer(opts...)
	t.Cleanup(sb.Close)
	c, err := sb.Client(append(seed, paygate.WithoutCreateOrFind())...)
	require.NoError(t, err)
	for i := range n {
		_, err := c.CreateOrder(context.Background(), paygate.Order{RefNo: fmt.Sprintf("SEED-%d", i), Amount: 1000,
			Email: "buyer@example.com", ReturnURL: "https://shop.example/r"})
		require.NoError(t, err)
	}
	return sb
}

// fast are the options of a test run: a small page and no pacing to speak of.
func fast(create bool) probe.Options {
	return probe.Options{Create: create, PageSize: 2, Interval: time.Microsecond}
}

func TestProbeSandboxSmoke(t *testing.T) {
	sb := sandbox(t, 5, nil)
	c, err := sb.Client()
	require.NoError(t, err)
	rep, err := probe.Run(context.Background(), c, fast(true))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, rep.WriteText(&b))
	t.Log(b.String())
}

// The report names every assumption of docs/assumptions.md once, and each
// has either a check or a reason it cannot be checked.
func TestProbeNamesEveryAssumption(t *testing.T) {
	raw, err := os.ReadFile("../docs/assumptions.md")
	require.NoError(t, err)
	var want []string
	for _, m := range regexp.MustCompile(`<a id="(A-[a-z0-9-]+)"></a>`).FindAllStringSubmatch(string(raw), -1) {
		want = append(want, m[1])
	}
	require.Equal(t, want, probe.AssumptionIDs())

	sb := sandbox(t, 3, nil)
	c, err := sb.Client()
	require.NoError(t, err)
	for _, create := range []bool{false, true} {
		rep, err := probe.Run(context.Background(), c, fast(create))
		require.NoError(t, err)
		var ids []string
		for _, res := range rep.Results {
			ids = append(ids, res.ID)
			switch res.Verdict {
			case probe.Unchecked:
				require.NotEmpty(t, res.Reason, res.ID)
			case probe.Holds:
				require.NotEmpty(t, res.Saw, res.ID)
				require.NotEmpty(t, res.Sent, res.ID)
			default:
				t.Errorf("%s differs against the default sandbox: %s", res.ID, res.Saw)
			}
		}
		require.Equal(t, want, ids)
		require.False(t, rep.Differs())
		if create {
			require.NotEmpty(t, rep.Created)
			for _, o := range sb.Orders() {
				require.NotEqual(t, paygate.StatusSuccess, o.Status, "the probe pays nothing")
				if strings.HasPrefix(o.RefNo, "PROBE-") {
					require.Equal(t, paygate.MinOrderAmount, o.Amount, "at the minimum amount")
				}
			}
		} else {
			require.Empty(t, rep.Created)
		}
	}
}

// For every sandbox switch a check covers, the verdict follows the switch:
// holds with it off, differs with it on.
func TestProbeVerdictFollowsSandboxSwitch(t *testing.T) {
	tests := []struct {
		id     string
		on     []gatewaytest.Option
		client func(sb *gatewaytest.Server) (*paygate.Client, error)
		seed   []paygate.Option // the seeding client's, with the switch on
		saw    string           // in the differs verdict
	}{
		{id: "A-report-paging", on: []gatewaytest.Option{gatewaytest.WithReportTotalPages(gatewaytest.TotalPagesUnder)}, saw: "under-counts"},
		{id: "A-report-paging", on: []gatewaytest.Option{gatewaytest.WithReportTotalPages(gatewaytest.TotalPagesString)}, saw: "total_pages"},
		{id: "A-report-filters", on: []gatewaytest.Option{gatewaytest.WithMaxItems(3)}, saw: "caps items"},
		{id: "A-post-path", on: []gatewaytest.Option{gatewaytest.WithPOSTSignedWithPath()}, seed: []paygate.Option{paygate.WithPOSTSignedWithPath()}, saw: "WithPOSTSignedWithPath"},
		{id: "A-b2b-minimum", on: []gatewaytest.Option{gatewaytest.WithB2BMinimumRefused()}, saw: "refused"},
		{id: "A-create-or-find", on: []gatewaytest.Option{gatewaytest.WithRepeatedRefNos()}, saw: "twice"},
		{id: "A-paylink-host", on: []gatewaytest.Option{gatewaytest.WithPayHost()}, saw: "404",
			client: func(sb *gatewaytest.Server) (*paygate.Client, error) {
				// As a merchant who did not set WithPayURL.
				return paygate.NewClient(paygate.WithAgency(sb.Agency), paygate.WithKey(sb.Key()), paygate.WithAuthToken(sb.AuthToken),
					paygate.WithCheckoutURL(sb.URL), paygate.WithReportsURL(sb.URL))
			}},
	}
	for _, tt := range tests {
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v/on=%t", tt.id, tt.saw, on), func(t *testing.T) {
				var opts []gatewaytest.Option
				var seed []paygate.Option
				if on {
					opts, seed = tt.on, tt.seed
				}
				sb := sandbox(t, 5, seed, opts...)
				newClient := tt.client
				if newClient == nil {
					newClient = func(sb *gatewaytest.Server) (*paygate.Client, error) { return sb.Client() }
				}
				c, err := newClient(sb)
				require.NoError(t, err)
				rep, err := probe.Run(context.Background(), c, fast(true))
				require.NoError(t, err)
				res, ok := rep.Result(tt.id)
				require.True(t, ok)
				if !on {
					require.Equal(t, probe.Holds, res.Verdict, "%+v", res)
					return
				}
				require.Equal(t, probe.Differs, res.Verdict, "%+v", res)
				require.Contains(t, res.Saw, tt.saw)
				require.True(t, rep.Differs())
				for _, other := range rep.Results {
					if other.ID != tt.id {
						require.NotEqual(t, probe.Differs, other.Verdict, "the switch flips %s alone: %+v", tt.id, other)
					}
				}
			})
		}
	}
}
