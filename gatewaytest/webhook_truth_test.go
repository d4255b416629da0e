package gatewaytest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/testbound"
)

// TestWebhookReportMatchesStore sends 2,000 transactions (10,000 as a
// soak, testbound.SoakVar) to a sandbox that injects every fault a bank
// meets: 500s, 503 with Retry-After, connections dropped before and after
// storing, answers slower than the sender's timeout, and repeats of a
// stored orderno answered 409 or 422. Whatever happened, the report tells the truth: every Accepted
// transaction is stored (those found already stored after a lost answer
// included), no Rejected one is, everything else is Unconfirmed, none is
// missing, and the request count is the server's.
func TestWebhookReportMatchesStore(t *testing.T) {
	n := 2_000
	if testbound.Soaking() {
		n = 10_000
	}
	for _, dup := range []DuplicateAnswer{DuplicateConflict, DuplicateUnprocessable, DuplicateStoredOnce} {
		t.Run(fmt.Sprint("duplicates=", dup), func(t *testing.T) {
			t.Parallel() // each on a sandbox of its own
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(uint64(dup), 42))
			sb := newSandbox(t, WithWebhookDuplicates(dup), WithWebhookFaults(WebhookFaults{
				Error500: 0.08, Error503: 0.04, RetryAfter: time.Second,
				DropBeforeStore: 0.06, DropAfterStore: 0.10, SlowAfterStore: 0.04, Slow: 400 * time.Millisecond,
				Rand: func() float64 { mu.Lock(); defer mu.Unlock(); return rng.Float64() },
			}))
			sender, err := paygate.NewWebhookSender(sb.URL, sb.WebhookPassword, paygate.WithBatchSize(100),
				paygate.WithAttemptTimeout(200*time.Millisecond),
				paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Second}))
			require.NoError(t, err)
			txs := testTxs(n)
			report, sendErr := sender.Send(context.Background(), txs)

			stored := map[string]bool{}
			for _, tx := range sb.Transactions() {
				stored[tx.OrderNo] = true
			}
			seen := map[string]string{}
			for list, ids := range map[string][]string{"accepted": report.Accepted, "rejected": report.Rejected, "unconfirmed": report.Unconfirmed, "not sent": report.NotSent} {
				for _, id := range ids {
					require.Empty(t, seen[id], "%s is both %s and %s", id, seen[id], list)
					seen[id] = list
				}
			}
			require.Len(t, seen, n, "every transaction is in exactly one list")
			require.Empty(t, report.Invalid)
			wrongAccepted, wrongRejected, unconfirmedStored := 0, 0, 0
			for _, id := range report.Accepted {
				if !stored[id] {
					wrongAccepted++
				}
			}
			for _, id := range report.Rejected {
				if stored[id] {
					wrongRejected++
				}
			}
			for _, id := range report.Unconfirmed {
				if stored[id] {
					unconfirmedStored++
				}
			}
			for _, id := range report.NotSent {
				require.False(t, stored[id], "%s reported not sent, but stored", id)
			}
			require.Zero(t, wrongAccepted, "accepted but not stored")
			require.Zero(t, wrongRejected, "rejected but stored")
			// Every request the server saw is an attempt reported. An attempt
			// can end at its 200 ms time limit before a loaded machine runs
			// the server's handler, so the server may see a few fewer than
			// were made (2 of 146, seen under load), never more.
			attempts, saw := report.Attempts(), sb.WebhookRequests()
			require.LessOrEqual(t, saw, attempts, "the server saw requests the report does not count")
			require.LessOrEqual(t, attempts-saw, max(2, attempts/20), "attempts reported that the server never saw (%d of %d)", attempts-saw, attempts)
			if len(report.Unconfirmed) > 0 {
				require.Error(t, sendErr)
				require.NotContains(t, sendErr.Error(), sb.WebhookPassword)
				require.NotContains(t, fmt.Sprintf("%+v", report), sb.WebhookPassword)
			}
			t.Logf("%d transactions in %d requests (%d attempts): accepted %d, rejected %d, unconfirmed %d (of which stored %d); the server stored %d",
				n, len(report.Requests), attempts, len(report.Accepted), len(report.Rejected), len(report.Unconfirmed), unconfirmedStored, len(stored))
			alreadyStored := 0
			for _, o := range report.Outcomes() {
				if o.AlreadyStored {
					alreadyStored++
				}
			}
			t.Logf("accepted as already stored (a lost answer, then a duplicate refusal): %d", alreadyStored)
			if dup != DuplicateStoredOnce {
				require.Positive(t, alreadyStored, "a lost answer then a duplicate answer was met, and the report called it stored (docs/assumptions.md A-webhook-duplicates)")
			} else {
				require.Zero(t, alreadyStored, "a service that answers repeats 200 refuses none")
			}
		})
	}
}
