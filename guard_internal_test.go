package paygate

// Guards of promises no other test held (issue 42), on the client's
// internals: each fails on the defect its comment names.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Once the client has learnt that the service's clock is 5 minutes off,
// every signature the buyer's browser carries is dated on the service's
// clock: CheckoutForm's fields and a signed PayURL. Defect caught: either
// signed on the local clock (c.now() for c.signNow()).
func TestBrowserSignaturesOnTheServicesClock(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Minute, -5 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			f := newTestClient(t)
			f.mt.RegisterResponder(http.MethodGet, testReports+"/api/echo", dated(200, skew))
			_, err := f.c.Echo(context.Background())
			require.NoError(t, err)
			offset, _ := f.c.ClockOffset()
			require.Equal(t, skew, offset)
			wantExp := strconv.FormatInt(testNow.Add(skew+SignatureTTL).Unix(), 10)

			form, err := f.c.CheckoutForm(testOrder())
			require.NoError(t, err)
			require.Equal(t, wantExp, form.Fields.Get("exp"), "CheckoutForm")

			signed, err := f.c.PayURL(PayLink{Category: "fpx", RefNo: "R1", Amount: 150, Signed: true})
			require.NoError(t, err)
			u, err := url.Parse(signed)
			require.NoError(t, err)
			require.Equal(t, wantExp, u.Query().Get("exp"), "PayURL")
		})
	}
}
