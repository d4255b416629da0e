package gatewaytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// clockStart is the test clock's start: a fixed instant, so that every
// attempt's time is known exactly.
var clockStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clockSandbox is a sandbox on a fresh test clock, with the service's own
// 30 s retry interval.
func clockSandbox(t *testing.T, opts ...Option) (*Server, *TestClock) {
	t.Helper()
	c := NewTestClock(clockStart)
	sb := NewServer(append([]Option{WithTestClock(c)}, opts...)...)
	t.Cleanup(sb.Close)
	return sb, c
}

// attemptTimes lists the offsets from clockStart of the first callback's
// attempts.
func attemptTimes(t *testing.T, sb *Server, i int) []time.Duration {
	t.Helper()
	log := sb.Callbacks()
	require.Greater(t, len(log), i)
	var out []time.Duration
	for _, a := range log[i].Attempts {
		out = append(out, a.At.Sub(clockStart))
	}
	return out
}

// A B2B payment pending for seven days, retries every 30 s and a give-up
// after ten attempts, all in test time: Advance fires each in order, at
// its own time, and has delivered it before it returns.
func TestTestClockRunsRecoveryInTestTime(t *testing.T) {
	const week = 7 * 24 * time.Hour
	t.Run("seven-day late settlement", func(t *testing.T) {
		sb, c := clockSandbox(t, WithLateSettlement(week, hasPrefix("B2B")))
		m := newMerchant(t, sb)
		placeOrder(t, sb, m, "B2B-1")
		require.NoError(t, sb.Pay("B2B-1~cart", paygate.StatusSuccess))
		c.Advance(week - time.Second)
		require.Equal(t, []string{"pending delivered"}, deliveries(t, sb), "not due yet")
		require.Equal(t, "pending 09", gatewayState(t, sb, "B2B-1~cart"))
		c.Advance(time.Second)
		require.Equal(t, []string{"pending delivered", "success delivered"}, deliveries(t, sb), "due: settled and called back before Advance returned")
		require.Equal(t, "success 00", gatewayState(t, sb, "B2B-1~cart"))
		require.Equal(t, []time.Duration{week}, attemptTimes(t, sb, 1))
		require.Equal(t, 1, m.fulfilled["B2B-1"])
	})
	t.Run("completed before due", func(t *testing.T) {
		sb, c := clockSandbox(t, WithLateSettlement(week, hasPrefix("B2B")))
		m := newMerchant(t, sb)
		placeOrder(t, sb, m, "B2B-1")
		require.NoError(t, sb.Pay("B2B-1~cart", paygate.StatusSuccess))
		c.Advance(24 * time.Hour)
		require.NoError(t, sb.Complete("B2B-1~cart", paygate.StatusFailed))
		c.Advance(week)
		require.Equal(t, []string{"pending delivered", "failed delivered"}, deliveries(t, sb), "settled once, by Complete")
		require.Equal(t, []time.Duration{24 * time.Hour}, attemptTimes(t, sb, 1))
		require.Zero(t, m.fulfilled["B2B-1"])
	})
	t.Run("retries until 2xx", func(t *testing.T) {
		sb, c := clockSandbox(t)
		m := newMerchant(t, sb)
		m.failFirst = 2
		placeOrder(t, sb, m, "INV-1")
		require.NoError(t, sb.Pay("INV-1~cart", paygate.StatusSuccess))
		c.Advance(time.Minute)
		require.Equal(t, []time.Duration{0, 30 * time.Second, time.Minute}, attemptTimes(t, sb, 0))
		require.Equal(t, []string{"success delivered"}, deliveries(t, sb))
		require.Equal(t, clockStart.Add(time.Minute), c.Now())
	})
	t.Run("gives up after ten attempts", func(t *testing.T) {
		var hits atomic.Int32
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		}))
		t.Cleanup(down.Close)
		sb, c := clockSandbox(t)
		client, err := sb.Client()
		require.NoError(t, err)
		_, err = client.CreateOrder(context.Background(), paygate.Order{RefNo: "DOWN-1", Amount: 100, Email: "a@b.co", ReturnURL: down.URL})
		require.NoError(t, err)
		require.NoError(t, sb.Pay("DOWN-1", paygate.StatusSuccess))
		c.Advance(4 * time.Minute)
		require.Len(t, attemptTimes(t, sb, 0), 9, "nine by 4 min: the tenth is due at 4m30s")
		c.Advance(time.Hour)
		want := make([]time.Duration, 10)
		for i := range want {
			want[i] = time.Duration(i) * 30 * time.Second
		}
		require.Equal(t, want, attemptTimes(t, sb, 0))
		require.Equal(t, []string{"success undelivered"}, deliveries(t, sb))
		require.Equal(t, int32(10), hits.Load())
	})
}

// Settle does not wait for test time: with a retry and a settlement
// parked on the clock it returns, and Close cancels both, sending nothing
// more.
func TestTestClockSettleAndClose(t *testing.T) {
	var hits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)
	c := NewTestClock(clockStart)
	sb := NewServer(WithTestClock(c), WithLateSettlement(time.Hour, hasPrefix("LATE")))
	client, err := sb.Client()
	require.NoError(t, err)
	for _, ref := range []string{"LATE-1", "DOWN-1"} {
		_, err = client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 100, Email: "a@b.co", ReturnURL: down.URL})
		require.NoError(t, err)
		require.NoError(t, sb.Pay(ref, paygate.StatusSuccess))
	}
	settle(t, sb)
	require.Equal(t, int32(2), hits.Load(), "the first attempt of each callback, at once")
	within(t, 5*time.Second, "Close with work parked on the test clock", sb.Close)
	c.Advance(24 * time.Hour)
	require.Equal(t, int32(2), hits.Load(), "nothing sent after Close")
	require.Equal(t, paygate.StatusPending, sb.Orders()[0].Status)
}

// A test clock stamps orders and attempts and checks exp: a signed
// request is judged on it.
func TestTestClockIsTheServersClock(t *testing.T) {
	sb, c := clockSandbox(t)
	m := newMerchant(t, sb)
	placeOrder(t, sb, m, "INV-1")
	require.Equal(t, clockStart, sb.Orders()[0].Created)
	c.Advance(time.Hour)
	require.NoError(t, sb.Pay("INV-1~cart", paygate.StatusSuccess))
	settle(t, sb)
	require.Equal(t, clockStart.Add(time.Hour), sb.Orders()[0].Paid)
	require.Equal(t, []time.Duration{time.Hour}, attemptTimes(t, sb, 0))
}

// Duplicate callbacks: each attempt sent n times, at once or in turn; the
// merchant's handler fulfils once, and the event is delivered when any
// copy is answered 2xx.
func TestDuplicateCallbacks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		concurrent bool
		failFirst  int
		attempts   int
	}{
		{name: "three at once", n: 3, concurrent: true, attempts: 3},
		{name: "three in turn", n: 3, attempts: 3},
		{name: "eight at once", n: 8, concurrent: true, attempts: 8},
		{name: "three in turn, the first hook fails", n: 3, failFirst: 1, attempts: 3},
		{name: "once", n: 1, attempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, c := clockSandbox(t, WithDuplicateCallbacks(tc.n, tc.concurrent))
			m := newMerchant(t, sb)
			m.failFirst = tc.failFirst
			placeOrder(t, sb, m, "INV-1")
			require.NoError(t, sb.Pay("INV-1~cart", paygate.StatusSuccess))
			c.Advance(time.Minute)
			log := sb.Callbacks()
			require.Len(t, log, 1)
			require.Len(t, log[0].Attempts, tc.attempts)
			require.True(t, log[0].Delivered)
			m.mu.Lock()
			defer m.mu.Unlock()
			require.Equal(t, 1, m.fulfilled["INV-1"], "exactly once, whatever the duplicates")
		})
	}
	for _, n := range []int{0, -1, maxDuplicateCallbacks + 1} {
		_, err := Start(WithDuplicateCallbacks(n, true))
		require.ErrorContains(t, err, "WithDuplicateCallbacks", "n %d", n)
	}
}
