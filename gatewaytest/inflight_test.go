package gatewaytest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// Settle may be called while orders are still being paid (a test's
// replicas and reconciliation running at once): it never races with the
// work it waits for, and waits for what was started before it.
func TestSettleWhilePaying(t *testing.T) {
	sb := newSandbox(t, WithLateSettlement(time.Millisecond, hasPrefix("INV-1")))
	m := newMerchant(t, sb)
	client, err := sb.Client()
	require.NoError(t, err)
	const n = 40
	for i := range n {
		_, err := client.CreateOrder(context.Background(), m.order(fmt.Sprintf("INV-%d", i)))
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			require.NoError(t, sb.Pay(fmt.Sprintf("INV-%d~cart", i), paygate.StatusSuccess))
		}()
		go func() {
			defer wg.Done()
			sb.Settle()
		}()
	}
	within(t, 10*time.Second, "payers and settlers", wg.Wait)
	settle(t, sb)
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Len(t, m.fulfilled, n, "every order fulfilled once Settle returned after the last Pay")
}
