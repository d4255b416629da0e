package paygate_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// The recovery scenario of "callback not received": 1,000 orders on the
// sandbox, 30% of direct callbacks never delivered, 10% authorised late
// (pending, then success), some declined, some left pending, a few success
// callbacks followed by a stale failed one; callbacks reach two replicas
// sharing one Deduper while both replicas run Reconcile over every order,
// concurrently. Every paid order is fulfilled exactly once, no failed or
// pending order is fulfilled, and a final Reconcile's counts equal the
// sandbox's truth (what it still fulfils, only orders whose callbacks were
// all dropped).
func TestRecoveryOfMissedCallbacks(t *testing.T) {
	const orders = 1000
	kind := func(ref string) int { // the order's scenario, from its number
		n, _ := strconv.Atoi(strings.TrimPrefix(ref, "REC-"))
		return n
	}
	lost := func(ref string) bool { return kind(ref)/10%10 < 3 }  // 30%
	late := func(ref string) bool { return kind(ref)%10 == 0 }    // 10%
	stale := func(ref string) bool { return kind(ref)%100 == 17 } // 1%
	choice := func(i int) paygate.Status {                        // what the buyer does
		switch i % 10 {
		case 1, 2:
			return paygate.StatusFailed
		case 3:
			return paygate.StatusPending
		}
		return paygate.StatusSuccess
	}
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(5*time.Millisecond), gatewaytest.WithMaxAttempts(5),
		gatewaytest.WithCallbackLoss(lost), gatewaytest.WithLateSettlement(150*time.Millisecond, late),
		gatewaytest.WithStaleCallbacks(paygate.StatusFailed, stale))
	defer sb.Close()
	client, err := sb.Client()
	require.NoError(t, err)

	log := newShopLog()
	shared := &paygate.MemoryDeduper{}
	replicas := [2]*paygate.CallbackHandler{log.handler(sb.Key(), shared), log.handler(sb.Key(), shared)}
	var urls [2]string
	for i, h := range replicas {
		srv := httptest.NewServer(h)
		defer srv.Close()
		urls[i] = srv.URL
	}
	ctx := context.Background()
	refs := make([]string, orders)
	for i := range orders {
		refs[i] = fmt.Sprintf("REC-%04d", i)
		_, err := client.CreateOrder(ctx, paygate.Order{RefNo: refs[i], Amount: paygate.Amount(1000 + i), Email: "a@example.com", ReturnURL: urls[i%2]})
		require.NoError(t, err)
	}

	// Buyers pay while both replicas reconcile, twice each, concurrently.
	var wg sync.WaitGroup
	for _, h := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				_, err := h.Reconcile(ctx, client, refs)
				if err != nil {
					t.Errorf("Reconcile: %v", err)
				}
			}
		}()
	}
	for i, ref := range refs {
		require.NoError(t, sb.Pay(ref, choice(i)))
	}
	wg.Wait()
	sb.Settle() // every delivery, retry and late settlement done

	// The final pass, after everything settled, on one replica.
	final, err := replicas[1].Reconcile(ctx, client, refs)
	require.NoError(t, err)

	truth := map[paygate.Status]int{}
	for _, o := range sb.Orders() {
		truth[o.Status]++
		base, _ := paygate.SplitRefNo(o.RefNo)
		want := 0
		if o.Status == paygate.StatusSuccess {
			want = 1
		}
		require.Equal(t, want, log.fulfils[base], "%s (%s) fulfilled %d times", o.RefNo, o.Status, log.fulfils[base])
	}
	require.Equal(t, orders, truth[paygate.StatusSuccess]+truth[paygate.StatusFailed]+truth[paygate.StatusPending])
	require.Equal(t, 700, truth[paygate.StatusSuccess], "the scenario's paid orders (70%: 60% at once, 10% late)")
	// The final pass may itself recover a paid order whose every callback
	// was dropped, when both concurrent passes read it before it was paid
	// or settled (on a loaded machine the buyers can outrun them): only
	// such an order, never one whose callback was delivered.
	want := map[paygate.Outcome]int{
		paygate.OutcomeAlreadyFulfilled: truth[paygate.StatusSuccess],
		paygate.OutcomeFailed:           truth[paygate.StatusFailed],
		paygate.OutcomePending:          truth[paygate.StatusPending],
	}
	for _, e := range final.Entries {
		if e.Outcome == paygate.OutcomeFulfilled {
			require.True(t, lost(e.RefNo), "%s: fulfilled by the final pass though its callbacks were delivered", e.RefNo)
			want[paygate.OutcomeFulfilled]++
			want[paygate.OutcomeAlreadyFulfilled]--
		}
	}
	require.Equal(t, want, final.Counts)
	require.Zero(t, log.doubles)
	for ref, cbs := range log.statuses {
		for _, cb := range cbs {
			if cb.Stale {
				// A late order's pending callback may arrive after a
				// reconciliation fulfilled it: stale, as it should be.
				require.True(t, stale(ref) || late(ref), "%s: a %s callback marked stale", ref, cb.Status)
				require.Equal(t, 1, log.fulfils[ref], "%s: a stale status after fulfilment", ref)
			}
		}
	}
	dropped := 0
	for _, d := range sb.Callbacks() {
		if d.Dropped {
			dropped++
		}
	}
	require.Greater(t, dropped, 250, "about 30% of callbacks never delivered")
}
