package paygate

// Guards of promises no other test held (issue 42), on the client's
// internals: each fails on the defect its comment names.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/jsonscan"
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

// Two transactions with one orderno longer than the streaming window (300
// KiB; a window is 256 KiB), under a value cap the caller raised to 1 MiB:
// both validators report the repeat, the same problems, in the same order.
// Defect caught: the stream keeping a token only up to a window (or to the
// default cap) before it may cut it, whatever the caller's cap.
func TestValidatorsAgreeOnLongRepeatedOrderNos(t *testing.T) {
	long := strings.Repeat("9", 300<<10)
	batch := validBatchMap(3)
	txs := batch["transactions"].([]any)
	txs[0].(map[string]any)["orderno"] = long
	txs[2].(map[string]any)["orderno"] = long
	body, err := json.Marshal(batch)
	require.NoError(t, err)
	rules := WebhookValidator{}.WithMaxValueBytes(1 << 20)
	_, whole := rules.ValidateBatchJSON(body)
	problems := problemsOf(t, whole)
	require.Len(t, problems, 1, "%v", problems)
	require.Equal(t, "/transactions/2/orderno", problems[0].Field)
	require.Contains(t, problems[0].Rule, ruleUnique)
	for _, chunk := range []int{jsonscan.Chunk, 64 << 10} {
		n, streamed := validateStream(strings.NewReader(string(body)), chunk, rules)
		require.Equal(t, 3, n)
		requireSameError(t, whole, streamed, "chunk %d", chunk)
	}
}
