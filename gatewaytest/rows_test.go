package gatewaytest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// TestReportRowsDecodeInBothShapes: a paid order reads back, typed, from
// the report and from the lookup, in either row shape the sandbox serves.
func TestReportRowsDecodeInBothShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape RowShape
	}{
		{name: "sandbox names", shape: RowsSandbox},
		{name: "FPX names, no status member", shape: RowsFPX},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, WithReportRows(tc.shape))
			m := newMerchant(t, sb)
			client, err := sb.Client()
			require.NoError(t, err)
			ctx := context.Background()
			for _, ref := range []string{"INV-1", "INV-2"} {
				_, err := client.CreateOrder(ctx, m.order(ref))
				require.NoError(t, err)
			}
			require.NoError(t, sb.Pay("INV-1", paygate.StatusSuccess), "the base reference names the order")
			require.NoError(t, sb.Pay("INV-2", paygate.StatusFailed))
			sb.Settle()

			got := map[string]paygate.PaymentRecord{}
			for row, err := range client.Payments(ctx, paygate.ReportQuery{}) {
				require.NoError(t, err)
				p, err := row.Payment()
				require.NoError(t, err)
				got[p.RefNo] = p
			}
			require.Len(t, got, 2)
			orders := sb.Orders()
			for i, want := range []struct {
				ref    string
				status paygate.Status
				code   paygate.FPXCode
			}{{ref: "INV-1", status: paygate.StatusSuccess, code: "00"}, {ref: "INV-2", status: paygate.StatusFailed, code: "51"}} {
				p := got[want.ref]
				require.True(t, p.Consistent(), "%+v", p.Problems)
				require.Equal(t, "cart", p.ExtraData)
				require.Equal(t, paygate.Amount(2590), p.Amount)
				require.Equal(t, want.status, p.Status)
				require.Equal(t, want.code, p.FPXCode)
				require.Equal(t, orders[i].OrderNo, p.OrderNo)
				require.Equal(t, orders[i].FPXTxnID, p.FPXTxnID)
				require.False(t, p.Time.IsZero())

				rec, err := client.LookupOrderByRefNo(ctx, want.ref+"~cart")
				require.NoError(t, err)
				q, err := rec.Payment()
				require.NoError(t, err)
				require.Equal(t, p, q, "the lookup reads like the row")
			}
		})
	}
}

// TestPayByBaseReference: Pay and Complete take the reference as sent or
// its base part, which must name one order.
func TestPayByBaseReference(t *testing.T) {
	sb := newSandbox(t)
	m := newMerchant(t, sb)
	client, err := sb.Client()
	require.NoError(t, err)
	ctx := context.Background()
	for _, extra := range []string{"a", "b"} {
		o := m.order("INV-9")
		o.ExtraData = extra
		_, err := client.CreateOrder(ctx, o)
		require.NoError(t, err)
	}
	_, err = client.CreateOrder(ctx, m.order("INV-10"))
	require.NoError(t, err)

	require.ErrorContains(t, sb.Pay("INV-9", paygate.StatusSuccess), "INV-9~a, INV-9~b", "an ambiguous base reference is refused")
	require.ErrorContains(t, sb.Pay("INV-1", paygate.StatusSuccess), "no order", "a prefix is not a base reference")
	require.NoError(t, sb.Pay("INV-9~b", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("INV-10", paygate.StatusPending))
	require.NoError(t, sb.Complete("INV-10", paygate.StatusSuccess))
	sb.Settle()
	require.Equal(t, map[string]int{"INV-9": 1, "INV-10": 1}, m.fulfilled)
}

// TestRefNoWithSeveralTildes: an order whose refNo holds several ~ (the
// public sample's shape) is refused by default, accepted behind
// WithRefNoTildes, and its verified success is fulfilled once under the
// base reference with the rest as extra, in either callback form; the
// report and the lookup split it the same way.
func TestRefNoWithSeveralTildes(t *testing.T) {
	const ref = "test123~881225-08-1234~12 Jalan Foo~#Sample RefNo"
	for _, tc := range []struct {
		name   string
		opts   []Option
		status int
	}{
		{name: "refused by default", status: http.StatusBadRequest},
		{name: "accepted, split callback", opts: []Option{WithRefNoTildes()}, status: http.StatusSeeOther},
		{name: "accepted, joined callback", opts: []Option{WithRefNoTildes(), WithCallbackRefNo(RefNoJoined)}, status: http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			var mu sync.Mutex
			var got []string
			h := &paygate.CallbackHandler{
				Keys:   []paygate.Key{sb.Key()},
				Logger: slog.New(slog.DiscardHandler),
				Fulfil: func(_ context.Context, cb *paygate.Callback) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, cb.RefNo+" | "+cb.ExtraData+" | "+fmt.Sprint(cb.Consistent()))
					return nil
				},
			}
			shop := httptest.NewServer(h)
			t.Cleanup(shop.Close)
			form, err := paygate.SignForm(sb.Key(), url.Values{
				"agency": {sb.Agency}, "refNo": {ref}, "amount": {"2.00"},
				"email": {"sdk@example.com"}, "returnUrl": {shop.URL + "/return"},
			}, time.Now())
			require.NoError(t, err)
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noRedirect.PostForm(sb.URL+paygate.CheckoutPath, form)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status != http.StatusSeeOther {
				return
			}
			require.NoError(t, sb.Pay("test123", paygate.StatusSuccess))
			sb.Settle()
			require.Equal(t, []string{"test123 | 881225-08-1234~12 Jalan Foo~#Sample RefNo | true"}, got)

			client, err := sb.Client()
			require.NoError(t, err)
			rec, err := client.LookupOrderByRefNo(context.Background(), ref)
			require.NoError(t, err)
			p, err := rec.Payment()
			require.NoError(t, err)
			require.Equal(t, "test123", p.RefNo)
			require.Equal(t, "881225-08-1234~12 Jalan Foo~#Sample RefNo", p.ExtraData)
			require.Equal(t, paygate.StatusSuccess, p.Status)
		})
	}
}

// TestPaymentsAgainstSandboxCounts: the walk reads every row once whatever
// the sandbox announces as total_pages, and says so when the count is wrong
// or unreadable; a capped or unpaged (AllItems) report reads the same rows.
func TestPaymentsAgainstSandboxCounts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []Option
		items int
		rows  int
		err   error
		msg   string
	}{
		{name: "true count", items: 2, rows: 5},
		{name: "true count, an exact multiple", items: 5, rows: 5},
		{name: "under-reported count", opts: []Option{WithReportTotalPages(TotalPagesUnder)}, items: 2, rows: 5, err: paygate.ErrReportPastTotalPages},
		{name: "no count", opts: []Option{WithReportTotalPages(TotalPagesAbsent)}, items: 2, rows: 5},
		{name: "count as a string", opts: []Option{WithReportTotalPages(TotalPagesString)}, items: 2, msg: "want a number"},
		{name: "capped items", opts: []Option{WithMaxItems(2)}, items: 4, rows: 5},
		{name: "every row at once", items: paygate.AllItems, rows: 5},
		{name: "every row at once, capped", opts: []Option{WithMaxItems(3)}, items: paygate.AllItems, rows: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, tc.opts...)
			m := newMerchant(t, sb)
			client, err := sb.Client()
			require.NoError(t, err)
			ctx := context.Background()
			for i := range 5 {
				_, err := client.CreateOrder(ctx, m.order(fmt.Sprintf("INV-%d", i)))
				require.NoError(t, err)
			}
			seen := map[string]int{}
			var errs []error
			for row, err := range client.Payments(ctx, paygate.ReportQuery{ItemsPerPage: tc.items, MaxPages: 10}) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				p, err := row.Payment()
				require.NoError(t, err)
				seen[p.RefNo]++
			}
			require.Len(t, seen, tc.rows)
			for ref, n := range seen {
				require.Equal(t, 1, n, "row %s read %d times", ref, n)
			}
			switch {
			case tc.err != nil:
				require.Len(t, errs, 1)
				require.ErrorIs(t, errs[0], tc.err)
			case tc.msg != "":
				require.Len(t, errs, 1)
				require.ErrorContains(t, errs[0], tc.msg)
			default:
				require.Empty(t, errs)
			}
		})
	}
}
