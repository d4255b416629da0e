package gatewaytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/zakat"
)

// bankTxs are n valid transactions with ordernos ZK-0000, ZK-0001, ...
func bankTxs(n int) []zakat.Transaction {
	txs := testTxs(n)
	for i := range txs {
		txs[i].OrderNo = fmt.Sprintf("ZK-%04d", i)
	}
	return txs
}

// dropFirst is a WebhookFaults whose first request stores its batch and
// loses the answer (DropAfterStore), and no later one faults.
func dropFirst() WebhookFaults {
	var mu sync.Mutex
	calls := 0
	return WebhookFaults{DropAfterStore: 0.5, Rand: func() float64 {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return 0.1
		}
		return 0.9
	}}
}

// checkReport holds a report to its invariants against the sandbox's
// store: every transaction in exactly one list, Outcomes agreeing with the
// lists, Total counting each once, every accepted one stored, no rejected
// one stored, and one RequestReport per request the sandbox saw (none
// dropped before reaching it here).
func checkReport(t *testing.T, sb *Server, txs []zakat.Transaction, report *zakat.SendReport) {
	t.Helper()
	require.Equal(t, len(txs), report.Total())
	stored := map[string]bool{}
	for _, tx := range sb.Transactions() {
		stored[tx.OrderNo] = true
	}
	lists := map[zakat.SendStatus][]string{}
	for i, o := range report.Outcomes() {
		require.Equal(t, i, o.Index)
		require.Equal(t, txs[i].OrderNo, o.OrderNo)
		require.Equal(t, o.Status == zakat.SendAccepted, o.Err == nil, "transaction %d: an error exactly when not accepted: %v", i, o.Err)
		if o.Status != zakat.SendInvalid {
			require.Contains(t, report.Requests[o.Request].OrderNos, o.OrderNo)
		}
		switch o.Status {
		case zakat.SendAccepted:
			require.True(t, stored[o.OrderNo], "%s accepted but not stored", o.OrderNo)
		case zakat.SendRejected:
			require.False(t, stored[o.OrderNo], "%s rejected but stored", o.OrderNo)
		}
		lists[o.Status] = append(lists[o.Status], o.OrderNo)
	}
	for status, list := range map[zakat.SendStatus][]string{zakat.SendAccepted: report.Accepted, zakat.SendRejected: report.Rejected,
		zakat.SendUnconfirmed: report.Unconfirmed, zakat.SendNotSent: report.NotSent} {
		require.ElementsMatch(t, lists[status], list, "the %s list", status)
	}
	require.Equal(t, sb.WebhookRequests(), report.Attempts(), "one attempt reported for each request the sandbox saw")
	for k, rr := range report.Requests {
		require.Equal(t, rr.Status == zakat.SendAccepted, rr.Err == nil, "request %d: an error exactly when not accepted: %v", k, rr.Err)
	}
}

// Issue 41's case: a batch stored whose answer was lost, then a duplicate
// refusal of the resend (409 or 422, whatever its body names), is stored:
// all 5 accepted, found already stored, whether the resend is a retry
// within Send or a Resend of an earlier report's unconfirmed ones
// (docs/assumptions.md A-webhook-duplicates).
func TestResendOfStoredBatchIsAccepted(t *testing.T) {
	for _, dup := range []DuplicateAnswer{DuplicateConflict, DuplicateUnprocessable} {
		for _, body := range []DuplicateBody{DuplicateBodyListed, DuplicateBodyPointers, DuplicateBodyText, DuplicateBodyUnnamed} {
			for _, via := range []string{"Send", "Resend"} {
				t.Run(fmt.Sprintf("%d/%d/%s", dup, body, via), func(t *testing.T) {
					sb := newSandbox(t, WithWebhookFaults(dropFirst()), WithWebhookDuplicates(dup), WithWebhookDuplicateBody(body))
					txs := bankTxs(5)
					retry := paygate.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
					if via == "Resend" {
						retry.MaxAttempts = 1
					}
					sender, err := sb.WebhookSender(paygate.WithRetry(retry))
					require.NoError(t, err)
					report, err := sender.Send(context.Background(), txs)
					if via == "Resend" {
						require.Error(t, err)
						require.Len(t, report.Unconfirmed, 5, "the lost answer")
						report, err = sender.Resend(context.Background(), txs)
					}
					require.NoError(t, err)
					require.Len(t, report.Accepted, 5)
					for _, o := range report.Outcomes() {
						require.True(t, o.AlreadyStored, "%s: found already stored", o.OrderNo)
					}
					require.Len(t, sb.Transactions(), 5)
					if via == "Send" {
						checkReport(t, sb, txs, report)
					}
				})
			}
		}
	}
}

// On a first send, a duplicate refusal proves only that the service holds
// the orderno, maybe for another transaction: unconfirmed with a reason
// that warns against a new orderno (zakat.ErrHeldAtFirstSend), never
// rejected; the others of the
// request are sent again at once and stored.
func TestDuplicateOnFirstSendIsUnconfirmed(t *testing.T) {
	for _, dup := range []DuplicateAnswer{DuplicateConflict, DuplicateUnprocessable} {
		for _, body := range []DuplicateBody{DuplicateBodyListed, DuplicateBodyPointers, DuplicateBodyText, DuplicateBodyUnnamed} {
			t.Run(fmt.Sprintf("%d/%d", dup, body), func(t *testing.T) {
				sb := newSandbox(t, WithWebhookDuplicates(dup), WithWebhookDuplicateBody(body))
				sender, err := sb.WebhookSender()
				require.NoError(t, err)
				txs := bankTxs(6)
				_, err = sender.Send(context.Background(), txs[2:3]) // stored by a send this report does not know
				require.NoError(t, err)
				report, err := sender.Send(context.Background(), txs)
				require.Error(t, err)
				require.Equal(t, []string{"ZK-0002"}, report.Unconfirmed)
				require.Empty(t, report.Rejected)
				require.Len(t, report.Accepted, 5)
				o := report.Outcomes()[2]
				require.ErrorContains(t, o.Err, "never send it again under a new orderno")
				require.ErrorIs(t, o.Err, zakat.ErrHeldAtFirstSend)
				require.False(t, o.AlreadyStored)
				for i, other := range report.Outcomes() {
					require.False(t, i != 2 && errors.Is(other.Err, zakat.ErrHeldAtFirstSend), "only the held one: %d", i)
				}
				require.Len(t, sb.Transactions(), 6)
			})
		}
	}
}

// A refusal for a server-side rule rejects only the transaction it points
// at, with one sentence naming its index in the slice given to Send, its
// orderno, the field and the rule; the innocent ones of its request are
// stored. An unattributed refusal finds it by splitting.
func TestRefusalNamesTheBadTransaction(t *testing.T) {
	for _, tc := range []struct {
		name         string
		unattributed bool
		status       int
		maxRequests  int
	}{
		{name: "pointer 400", status: 400, maxRequests: 4},
		{name: "pointer 422", status: 422, maxRequests: 4},
		{name: "unattributed 400", unattributed: true, status: 400, maxRequests: 3 + 2*4},
		{name: "unattributed 422", unattributed: true, status: 422, maxRequests: 3 + 2*4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, WithWebhookRefusal(WebhookRefusal{Refuse: func(tx zakat.Transaction) bool { return tx.OrderNo == "ZK-0015" },
				Status: tc.status, Unattributed: tc.unattributed}))
			sender, err := sb.WebhookSender(paygate.WithBatchSize(10))
			require.NoError(t, err)
			txs := bankTxs(30)
			report, err := sender.Send(context.Background(), txs)
			require.Error(t, err)
			checkReport(t, sb, txs, report)
			require.Equal(t, []string{"ZK-0015"}, report.Rejected)
			require.Len(t, report.Accepted, 29)
			require.LessOrEqual(t, sb.WebhookRequests(), tc.maxRequests)
			o := report.Outcomes()[15]
			var apiErr *paygate.APIError
			require.ErrorAs(t, o.Err, &apiErr, "the service's answer kept beside")
			require.NotContains(t, o.Err.Error(), "\n")
			if tc.unattributed {
				return
			}
			var ref *zakat.Refusal
			require.ErrorAs(t, o.Err, &ref)
			require.Equal(t, fmt.Sprintf(`transaction 15 (orderno "ZK-0015") refused by the service (HTTP %d): field amount breaks the rule "exceeds the server-side limit"`, tc.status), o.Err.Error())
			require.Contains(t, string(apiErr.Body), "/transactions/5/amount", "the raw body, its pointer relative to the request")
		})
	}
}

// Splitting is bounded: a service that refuses every batch without naming
// a transaction costs a few requests more, not one per transaction; and
// 1 refused in 50 spread over 500 is isolated, every innocent stored.
func TestRefusalSplittingIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name        string
		refuse      func(zakat.Transaction) bool
		n           int
		rejected    int
		maxRequests int
	}{
		{name: "refuses everything", refuse: func(zakat.Transaction) bool { return true }, n: 1000, rejected: 1000, maxRequests: 10 + 2*7},
		{name: "1 in 50", refuse: func(tx zakat.Transaction) bool { return strings.HasSuffix(tx.OrderNo, "7") && tx.OrderNo[5]%5 == 0 },
			n: 500, rejected: 10, maxRequests: 5 + 10*2*7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, WithWebhookRefusal(WebhookRefusal{Refuse: tc.refuse, Unattributed: true}))
			sender, err := sb.WebhookSender()
			require.NoError(t, err)
			txs := bankTxs(tc.n)
			report, err := sender.Send(context.Background(), txs)
			require.Error(t, err)
			checkReport(t, sb, txs, report)
			require.Len(t, report.Rejected, tc.rejected)
			require.Len(t, report.Accepted, tc.n-tc.rejected)
			require.LessOrEqual(t, sb.WebhookRequests(), tc.maxRequests)
			t.Logf("%d transactions, %d rejected, in %d requests", tc.n, tc.rejected, sb.WebhookRequests())
		})
	}
}

// The sandbox logs one line per webhook request: count, first orderno,
// fault, status and the ordernos refused.
func TestWebhookLog(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	sb := newSandbox(t, WithLog(logger), WithWebhookDuplicates(DuplicateConflict),
		WithWebhookRefusal(WebhookRefusal{Refuse: func(tx zakat.Transaction) bool { return tx.OrderNo == "ZK-0001" }}))
	sender, err := sb.WebhookSender()
	require.NoError(t, err)
	_, err = sender.Send(context.Background(), bankTxs(3)[2:])
	require.NoError(t, err)
	_, err = sender.Send(context.Background(), bankTxs(3))
	require.Error(t, err)
	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 4)
	for k, want := range []string{
		`count=1 first=ZK-0002 fault=none status=200 duplicates="" refused=""`,
		`count=3 first=ZK-0000 fault=none status=400 duplicates="" refused=ZK-0001`,
		`count=2 first=ZK-0000 fault=none status=409 duplicates=ZK-0002 refused=""`,
		`count=1 first=ZK-0000 fault=none status=200 duplicates="" refused=""`,
	} {
		require.Contains(t, lines[k], `msg="webhook batch" `+want)
		require.NotContains(t, lines[k], sb.WebhookPassword)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// WithWebhookStatusChange plays each reading of a repeated orderno whose
// status changed (docs/assumptions.md A-webhook-status-change).
func TestWebhookStatusChange(t *testing.T) {
	for _, tc := range []struct {
		change     StatusChange
		dup        DuplicateAnswer
		wantStatus int // of the repeat; 0: accepted
		stored     zakat.Status
	}{
		{change: StatusChangeAsDuplicate, dup: DuplicateConflict, wantStatus: 409, stored: zakat.StatusPending},
		{change: StatusChangeAsDuplicate, dup: DuplicateStoredOnce, stored: zakat.StatusPending},
		{change: StatusChangeUpdated, dup: DuplicateConflict, stored: zakat.StatusSuccess},
		{change: StatusChangeIgnored, dup: DuplicateUnprocessable, stored: zakat.StatusPending},
	} {
		t.Run(fmt.Sprint(tc.change, tc.dup), func(t *testing.T) {
			sb := newSandbox(t, WithWebhookStatusChange(tc.change), WithWebhookDuplicates(tc.dup))
			sender, err := sb.WebhookSender()
			require.NoError(t, err)
			txs := bankTxs(1)
			txs[0].Status = zakat.StatusPending
			_, err = sender.Send(context.Background(), txs)
			require.NoError(t, err)
			txs[0].Status = zakat.StatusSuccess
			report, err := sender.Send(context.Background(), txs)
			if tc.wantStatus != 0 {
				require.Equal(t, tc.wantStatus, report.Requests[0].StatusCode)
			}
			require.Equal(t, tc.wantStatus == 0, err == nil)
			stored := sb.Transactions()
			require.Len(t, stored, 1)
			require.Equal(t, tc.stored, stored[0].Status)
		})
	}
}

// A Resend refused for something that proves nothing of the earlier send
// (a 401, a refusal naming no rule) stays unconfirmed, never rejected; one
// pointing at a transaction for a rule of its fields is rejected.
func TestResendRefusalsStayUnconfirmed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []Option
		password string
		rejected []string
	}{
		{name: "401", password: "wrong"},
		{name: "unattributed", opts: []Option{WithWebhookRefusal(WebhookRefusal{Refuse: func(tx zakat.Transaction) bool { return tx.OrderNo == "ZK-0001" }, Unattributed: true})}},
		{name: "pointed", opts: []Option{WithWebhookRefusal(WebhookRefusal{Refuse: func(tx zakat.Transaction) bool { return tx.OrderNo == "ZK-0001" }})}, rejected: []string{"ZK-0001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			password := sb.WebhookPassword
			if tc.password != "" {
				password = tc.password
			}
			sender, err := paygate.NewWebhookSender(sb.WebhookURL(), password)
			require.NoError(t, err)
			txs := bankTxs(4)
			report, err := sender.Resend(context.Background(), txs)
			require.Error(t, err)
			require.Equal(t, tc.rejected, report.Rejected)
			require.Len(t, report.Unconfirmed, 4-len(tc.rejected)-len(report.Accepted))
			require.Empty(t, report.NotSent)
			require.Equal(t, 4, report.Total())
		})
	}
}

// A webhook switch out of its range is refused at Start.
func TestWebhookReadingsOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{opt: WithWebhookDuplicateBody(DuplicateBodyUnnamed + 1), want: "WithWebhookDuplicateBody: 4"},
		{opt: WithWebhookStatusChange(-1), want: "WithWebhookStatusChange: -1"},
		{opt: WithWebhookRefusal(WebhookRefusal{Status: 409}), want: "WithWebhookRefusal: Status 409: want 400 or 422"},
	} {
		_, err := Start(tc.opt)
		require.ErrorContains(t, err, tc.want)
	}
}
