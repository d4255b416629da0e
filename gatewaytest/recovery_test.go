package gatewaytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// within runs f and fails the test, naming what, unless it returns within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// settle is Settle bounded to a few seconds.
func settle(t *testing.T, sb *Server) {
	t.Helper()
	within(t, 5*time.Second, "Settle (callbacks delivered and late settlements done)", sb.Settle)
}

// deliveries summarises the delivery log: the status each event carried
// and what became of it. A dropped event has no attempt.
func deliveries(t *testing.T, sb *Server) []string {
	t.Helper()
	var out []string
	for _, d := range sb.Callbacks() {
		s := string(d.Status)
		switch {
		case d.Dropped:
			require.Empty(t, d.Attempts, "a dropped callback is never sent")
			s += " dropped"
		case d.Delivered:
			s += " delivered"
		default:
			s += " undelivered"
		}
		if d.Stale {
			s += " stale"
		}
		out = append(out, s)
	}
	return out
}

// firstAttempts is the number of POSTs of the first callback.
func firstAttempts(t *testing.T, sb *Server) int {
	t.Helper()
	log := sb.Callbacks()
	require.NotEmpty(t, log, "no callback logged")
	return len(log[0].Attempts)
}

// gatewayState is the order's status and FPX code as the lookup shows
// them.
func gatewayState(t *testing.T, sb *Server, ref string) string {
	t.Helper()
	client, err := sb.Client()
	require.NoError(t, err)
	rec, err := client.LookupOrderByRefNo(context.Background(), ref)
	require.NoError(t, err, "lookup %s", ref)
	p, err := rec.Payment()
	require.NoError(t, err)
	return string(p.Status) + " " + string(p.FPXCode)
}

// orderNoOf is the sandbox's number for the order sent as ref.
func orderNoOf(t *testing.T, sb *Server, ref string) string {
	t.Helper()
	for _, o := range sb.Orders() {
		if o.RefNo == ref {
			return o.OrderNo
		}
	}
	t.Fatalf("no order %q in the sandbox", ref)
	return ""
}

// placeOrder creates the merchant's order ref (sent as ref~cart).
func placeOrder(t *testing.T, sb *Server, m *merchant, ref string) {
	t.Helper()
	client, err := sb.Client()
	require.NoError(t, err)
	_, err = client.CreateOrder(context.Background(), m.order(ref))
	require.NoError(t, err)
}

// hasPrefix matches references that start with p.
func hasPrefix(p string) func(string) bool {
	return func(ref string) bool { return strings.HasPrefix(ref, p) }
}

// A lost callback is logged, never sent; the browser return still comes
// and fulfils nothing; the gateway's record has the truth. WithMaxAttempts
// is the gateway giving up while the merchant is down.
func TestCallbackLoss(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []Option
		ref        string
		pay        paygate.Status
		complete   paygate.Status // "" for none
		merchant5x int            // deliveries the merchant fails first
		want       []string
		attempts   int // POSTs of the first callback; 0: not checked
		fulfilled  int
		gateway    string
	}{
		{name: "success lost", opts: []Option{WithCallbackLoss(hasPrefix("LOST"))}, ref: "LOST-1", pay: paygate.StatusSuccess,
			want: []string{"success dropped"}, gateway: "success 00"},
		{name: "pending and its completion lost", opts: []Option{WithCallbackLoss(hasPrefix("LOST"))}, ref: "LOST-2",
			pay: paygate.StatusPending, complete: paygate.StatusSuccess,
			want: []string{"pending dropped", "success dropped"}, gateway: "success 00"},
		{name: "failure lost", opts: []Option{WithCallbackLoss(hasPrefix("LOST"))}, ref: "LOST-3", pay: paygate.StatusFailed,
			want: []string{"failed dropped"}, gateway: "failed 51"},
		{name: "the predicate sees refNo~extraData", opts: []Option{WithCallbackLoss(func(ref string) bool { return ref == "INV-4~cart" })},
			ref: "INV-4", pay: paygate.StatusSuccess, want: []string{"success dropped"}, gateway: "success 00"},
		{name: "other orders delivered", opts: []Option{WithCallbackLoss(hasPrefix("LOST"))}, ref: "KEPT-1", pay: paygate.StatusSuccess,
			want: []string{"success delivered"}, attempts: 1, fulfilled: 1, gateway: "success 00"},
		{name: "gateway gives up after N", opts: []Option{WithMaxAttempts(2)}, ref: "DOWN-1", pay: paygate.StatusSuccess, merchant5x: 100,
			want: []string{"success undelivered"}, attempts: 2, gateway: "success 00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			m := newMerchant(t, sb)
			m.failFirst = tc.merchant5x
			placeOrder(t, sb, m, tc.ref)
			sent := tc.ref + "~cart"
			require.NoError(t, sb.Pay(sent, tc.pay))
			if tc.complete != "" {
				require.NoError(t, sb.Complete(sent, tc.complete))
			}
			settle(t, sb)
			require.Equal(t, tc.want, deliveries(t, sb))
			if tc.attempts > 0 {
				require.Equal(t, tc.attempts, firstAttempts(t, sb))
			}
			require.Equal(t, tc.fulfilled, m.fulfilled[tc.ref], "fulfilled by callbacks")
			require.Equal(t, tc.gateway, gatewayState(t, sb, sent), "the lookup keeps the truth")

			returnURL, fields, err := sb.BrowserReturn(orderNoOf(t, sb, sent))
			require.NoError(t, err)
			resp, err := http.PostForm(returnURL, fields)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, 1, m.returns, "the browser return still happens")
			require.Equal(t, tc.fulfilled, m.fulfilled[tc.ref], "the browser return fulfils nothing")
		})
	}
}

// A late settlement: pending first, success later by itself, through the
// same path as Complete; on a test clock, at exactly its due time.
func TestLateSettlement(t *testing.T) {
	for _, tc := range []struct {
		name      string
		which     func(string) bool
		pay       paygate.Status
		want      []string
		statuses  int // OnStatus calls
		fulfilled int
		gateway   string
	}{
		{name: "paid, settles late", which: hasPrefix("LATE"), pay: paygate.StatusSuccess,
			want: []string{"pending delivered", "success delivered"}, statuses: 1, fulfilled: 1, gateway: "success 00"},
		{name: "not matched", which: hasPrefix("OTHER"), pay: paygate.StatusSuccess,
			want: []string{"success delivered"}, fulfilled: 1, gateway: "success 00"},
		{name: "declined", which: hasPrefix("LATE"), pay: paygate.StatusFailed,
			want: []string{"failed delivered"}, statuses: 1, gateway: "failed 51"},
		{name: "left pending by the buyer", which: hasPrefix("LATE"), pay: paygate.StatusPending,
			want: []string{"pending delivered"}, statuses: 1, gateway: "pending 09"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, c := clockSandbox(t, WithLateSettlement(2*time.Hour, tc.which))
			m := newMerchant(t, sb)
			placeOrder(t, sb, m, "LATE-1")
			require.NoError(t, sb.Pay("LATE-1~cart", tc.pay))
			c.Advance(2 * time.Hour)
			require.Equal(t, tc.want, deliveries(t, sb))
			for i := range tc.want {
				require.Equal(t, []time.Duration{time.Duration(i) * 2 * time.Hour}, attemptTimes(t, sb, i), "each callback at its time")
			}
			m.mu.Lock()
			require.Len(t, m.statuses, tc.statuses, "%v", m.statuses)
			require.Equal(t, tc.fulfilled, m.fulfilled["LATE-1"])
			m.mu.Unlock()
			require.Equal(t, tc.gateway, gatewayState(t, sb, "LATE-1~cart"))
		})
	}
}

// Before it is due, a late order is pending at the gateway; Complete
// settles it once (success or failed) and Settle no longer waits; Close
// cancels it without sending anything more.
func TestLateSettlementBeforeDue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		complete paygate.Status // "" to Close instead
		want     []string
		gateway  string
	}{
		{name: "completed as success first", complete: paygate.StatusSuccess,
			want: []string{"pending delivered", "success delivered"}, gateway: "success 00"},
		{name: "refused first", complete: paygate.StatusFailed,
			want: []string{"pending delivered", "failed delivered"}, gateway: "failed 51"},
		{name: "server closed first",
			want: []string{"pending delivered"}, gateway: "pending 09"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := NewServer(WithRetryInterval(10*time.Millisecond), WithLateSettlement(time.Hour, hasPrefix("LATE")))
			closed := false
			t.Cleanup(func() {
				if !closed {
					sb.Close()
				}
			})
			m := newMerchant(t, sb)
			placeOrder(t, sb, m, "LATE-1")
			require.NoError(t, sb.Pay("LATE-1~cart", paygate.StatusSuccess))
			require.Equal(t, "pending 09", gatewayState(t, sb, "LATE-1~cart"), "recorded pending until due")
			client, err := sb.Client()
			require.NoError(t, err)
			var report []paygate.Status
			for row, err := range client.Payments(context.Background(), paygate.ReportQuery{MaxPages: 2}) {
				require.NoError(t, err)
				p, err := row.Payment()
				require.NoError(t, err)
				report = append(report, p.Status)
			}
			require.Equal(t, []paygate.Status{paygate.StatusPending}, report, "the report shows pending until due")

			if tc.complete != "" {
				require.NoError(t, sb.Complete("LATE-1~cart", tc.complete))
				settle(t, sb)
			} else {
				within(t, 5*time.Second, "Close with a late settlement an hour away", sb.Close)
				closed = true
			}
			require.Equal(t, tc.want, deliveries(t, sb))
			require.Equal(t, tc.gateway, string(sb.Orders()[0].Status)+" "+string(sb.Orders()[0].FPXCode))
			m.mu.Lock()
			defer m.mu.Unlock()
			require.Equal(t, map[bool]int{true: 1, false: 0}[tc.complete == paygate.StatusSuccess], m.fulfilled["LATE-1"])
		})
	}
}

// Out of order: after the success is delivered, one more signed callback
// with an older or contrary status; the order stays paid at the gateway and
// the merchant's handler sees it as stale.
func TestStaleCallbacks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []Option
		pay        paygate.Status
		merchant5x int
		want       []string
		attempts   int // POSTs of the success; 0: not checked
		statuses   []string
		fulfilled  int
		gateway    string
	}{
		{name: "failed after success", opts: []Option{WithStaleCallbacks(paygate.StatusFailed, hasPrefix("INV"))}, pay: paygate.StatusSuccess,
			want: []string{"success delivered", "failed delivered stale"}, statuses: []string{"INV-1|failed|stale"}, fulfilled: 1, gateway: "success 00"},
		{name: "pending after success", opts: []Option{WithStaleCallbacks(paygate.StatusPending, hasPrefix("INV"))}, pay: paygate.StatusSuccess,
			want: []string{"success delivered", "pending delivered stale"}, statuses: []string{"INV-1|pending|stale"}, fulfilled: 1, gateway: "success 00"},
		{name: "only once the success got its 2xx", opts: []Option{WithStaleCallbacks(paygate.StatusFailed, hasPrefix("INV"))}, pay: paygate.StatusSuccess, merchant5x: 2,
			want: []string{"success delivered", "failed delivered stale"}, attempts: 3, statuses: []string{"INV-1|failed|stale"}, fulfilled: 1, gateway: "success 00"},
		{name: "not matched", opts: []Option{WithStaleCallbacks(paygate.StatusFailed, hasPrefix("OTHER"))}, pay: paygate.StatusSuccess,
			want: []string{"success delivered"}, fulfilled: 1, gateway: "success 00"},
		{name: "a failed payment gets none", opts: []Option{WithStaleCallbacks(paygate.StatusPending, hasPrefix("INV"))}, pay: paygate.StatusFailed,
			want: []string{"failed delivered"}, statuses: []string{"INV-1|failed"}, gateway: "failed 51"},
		{name: "a lost success gets none", opts: []Option{WithStaleCallbacks(paygate.StatusFailed, hasPrefix("INV")), WithCallbackLoss(hasPrefix("INV"))}, pay: paygate.StatusSuccess,
			want: []string{"success dropped"}, gateway: "success 00"},
		{name: "after a late settlement", opts: []Option{WithStaleCallbacks(paygate.StatusFailed, hasPrefix("INV")), WithLateSettlement(0, hasPrefix("INV"))}, pay: paygate.StatusSuccess,
			want: []string{"pending delivered", "success delivered", "failed delivered stale"}, fulfilled: 1, gateway: "success 00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			m := newMerchant(t, sb)
			m.failFirst = tc.merchant5x
			placeOrder(t, sb, m, "INV-1")
			require.NoError(t, sb.Pay("INV-1~cart", tc.pay))
			settle(t, sb)
			require.Equal(t, tc.want, deliveries(t, sb))
			if tc.attempts > 0 {
				require.Equal(t, tc.attempts, firstAttempts(t, sb))
			}
			m.mu.Lock()
			if tc.statuses != nil {
				require.Equal(t, tc.statuses, m.statuses)
			}
			require.Equal(t, tc.fulfilled, m.fulfilled["INV-1"])
			m.mu.Unlock()
			require.Equal(t, tc.gateway, gatewayState(t, sb, "INV-1~cart"), "the recorded status never regresses")
		})
	}
}

// A switch the sandbox cannot honour is refused by Start.
func TestRecoverySwitchesRefused(t *testing.T) {
	all := func(string) bool { return true }
	for _, tc := range []struct {
		name string
		opt  Option
		want string
	}{
		{name: "stale success", opt: WithStaleCallbacks(paygate.StatusSuccess, all), want: "WithStaleCallbacks: status \"success\": want pending or failed"},
		{name: "stale empty", opt: WithStaleCallbacks("", all), want: "WithStaleCallbacks: status \"\": want pending or failed"},
		{name: "negative delay", opt: WithLateSettlement(-time.Second, all), want: "WithLateSettlement: after -1s: want zero or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := Start(tc.opt)
			require.Nil(t, sb)
			require.EqualError(t, err, tc.want)
		})
	}
}

// Close stops retries and due settlements at once and sends nothing after:
// a merchant that is down keeps getting nothing once Close returns.
func TestCloseStopsRecoveryWork(t *testing.T) {
	var hits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer down.Close()
	sb := NewServer(WithRetryInterval(time.Hour), WithLateSettlement(time.Hour, hasPrefix("LATE")))
	client, err := sb.Client()
	require.NoError(t, err)
	for _, ref := range []string{"LATE-1", "DOWN-1"} {
		_, err = client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 100, Email: "a@b.co", ReturnURL: down.URL})
		require.NoError(t, err)
		require.NoError(t, sb.Pay(ref, paygate.StatusSuccess))
	}
	within(t, 5*time.Second, "Close with a retry and a settlement an hour away", sb.Close)
	require.LessOrEqual(t, hits.Load(), int32(2), "one attempt per callback at most, none after Close")
	require.Equal(t, []paygate.Status{paygate.StatusPending, paygate.StatusSuccess}, []paygate.Status{sb.Orders()[0].Status, sb.Orders()[1].Status})
}

// A callback with a status outside the three is never fulfilled by the
// handler; the gateway's record keeps the truth and a reconciliation
// fulfils the order once (docs/assumptions.md A-unknown-status).
func TestCallbackStatusUnknown(t *testing.T) {
	upper := func(_ string, st paygate.Status) paygate.Status { return paygate.Status(strings.ToUpper(string(st))) }
	for _, tc := range []struct {
		name     string
		as       func(string, paygate.Status) paygate.Status
		pay      paygate.Status
		want     []string
		statuses []string
		byHand   int // fulfilled by the callback
		outcome  paygate.Outcome
	}{
		{name: "SUCCESS", as: upper, pay: paygate.StatusSuccess, want: []string{"SUCCESS delivered"},
			statuses: []string{"INV-1|SUCCESS"}, outcome: paygate.OutcomeFulfilled},
		{name: "FAILED", as: upper, pay: paygate.StatusFailed, want: []string{"FAILED delivered"},
			statuses: []string{"INV-1|FAILED", "INV-1|failed"}, outcome: paygate.OutcomeFailed},
		{name: "unchanged", as: func(_ string, st paygate.Status) paygate.Status { return st }, pay: paygate.StatusSuccess,
			want: []string{"success delivered"}, byHand: 1, outcome: paygate.OutcomeAlreadyFulfilled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, WithCallbackStatus(tc.as))
			m := newMerchant(t, sb)
			placeOrder(t, sb, m, "INV-1")
			require.NoError(t, sb.Pay("INV-1~cart", tc.pay))
			settle(t, sb)
			require.Equal(t, tc.want, deliveries(t, sb))
			m.mu.Lock()
			require.Equal(t, tc.byHand, m.fulfilled["INV-1"], "fulfilled by the callback")
			m.mu.Unlock()
			require.Equal(t, string(tc.pay)+" "+string(fpxCodes[tc.pay]), gatewayState(t, sb, "INV-1~cart"), "the record keeps the recorded status")

			client, err := sb.Client()
			require.NoError(t, err)
			rec, err := m.h.Reconcile(context.Background(), client, []string{"INV-1~cart"})
			require.NoError(t, err)
			require.Len(t, rec.Entries, 1)
			require.Equal(t, tc.outcome, rec.Entries[0].Outcome, "%+v", rec.Entries[0])
			m.mu.Lock()
			defer m.mu.Unlock()
			require.Equal(t, map[bool]int{true: 1, false: 0}[tc.pay == paygate.StatusSuccess], m.fulfilled["INV-1"], "fulfilled once in all")
			require.Equal(t, tc.statuses, m.statuses)
		})
	}
}
