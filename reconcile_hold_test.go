package paygate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// A record is held back, never acted on, when it names another reference
// or agency, its status cannot be proved, or a success's money fields are
// absent or did not parse; problems that do not touch money hold nothing.
func TestReconcileHoldBack(t *testing.T) {
	const ok = `"seller_order_no":"INV-1~x","order_no":"GW1","agency":"AG01","amount":"19.90","status":"success","fpx_debit_auth_code":"00"`
	type holdCase struct {
		name, record, asked string
		held                []string // the fields named, in order
	}
	tests := []holdCase{
		{name: "clean success", record: `{` + ok + `}`, asked: "INV-1~x"},
		{name: "asked by base reference", record: `{` + ok + `}`, asked: "INV-1"},
		{name: "report row (nothing asked)", record: `{` + ok + `}`},
		{name: "another reference", record: `{` + ok + `}`, asked: "INV-2", held: []string{"refNo"}},
		{name: "another agency", record: `{"seller_order_no":"INV-1","agency":"AG02","amount":"19.90","status":"success"}`, held: []string{"agency"}},
		{name: "no status, no code", record: `{"seller_order_no":"INV-1","amount":"19.90"}`, held: []string{"status"}},
		{name: "unknown status", record: `{"seller_order_no":"INV-1","amount":"19.90","status":"SUCCESS"}`, held: []string{"status"}},
		{name: "success without amount", record: `{"seller_order_no":"INV-1","status":"success"}`, held: []string{"amount"}},
		{name: "success, amount unreadable", record: `{"seller_order_no":"INV-1","amount":"19.999","status":"success"}`, held: []string{"amount", "amount"}},
		{name: "success, code contradicts", record: `{"seller_order_no":"INV-1","amount":"19.90","status":"success","fpx_debit_auth_code":"51"}`, held: []string{"fpx_debit_auth_code"}},
		{name: "success, amounts disagree", record: `{"seller_order_no":"INV-1","amount":"19.90","fpx_txn_amount":"1.00","status":"success"}`, held: []string{"fpx_txn_amount"}},
		{name: "success, time unreadable: acted on", record: `{"seller_order_no":"INV-1","amount":"19.90","status":"success","fpx_txn_time":"yesterday"}`},
		{name: "failed with problems: acted on (no money moves)", record: `{"seller_order_no":"INV-1","amount":"x","status":"failed"}`},
		{name: "success of one sen: acted on", record: `{"seller_order_no":"INV-1","agency":"AG01","amount":"0.01","status":"success"}`, asked: "INV-1"},
		{name: "no agency named: acted on", record: `{"seller_order_no":"INV-1","amount":"19.90","status":"success"}`, asked: "INV-1"},
		// A reference is the whole reference: one that starts like the one
		// asked for, or that it starts like, is another.
		{name: "asked INV-1, got INV-10", record: `{"seller_order_no":"INV-10","agency":"AG01","amount":"19.90","status":"success"}`, asked: "INV-1", held: []string{"refNo"}},
		{name: "asked INV-10, got INV-1", record: `{"seller_order_no":"INV-1","agency":"AG01","amount":"19.90","status":"success"}`, asked: "INV-10", held: []string{"refNo"}},
		{name: "asked INV-1~x, got INV-10~x", record: `{"seller_order_no":"INV-10~x","agency":"AG01","amount":"19.90","status":"success"}`, asked: "INV-1~x", held: []string{"refNo"}},
		{name: "asked INV-1, got INV-1 with extra data", record: `{"seller_order_no":"INV-1~x","agency":"AG01","amount":"19.90","status":"success"}`, asked: "INV-1"},
		{name: "agency AG010", record: `{"seller_order_no":"INV-1","agency":"AG010","amount":"19.90","status":"success"}`, held: []string{"agency"}},
	}
	// Another reference or agency holds a record back whatever its status.
	for _, st := range []string{"success", "pending", "failed", "SUCCESS", ""} {
		var status, onStatus []string
		if st != "" {
			status = []string{`"status":"` + st + `"`}
		}
		if !Status(st).Valid() {
			onStatus = []string{"status"}
		}
		rec := func(fields ...string) string { return "{" + strings.Join(append(fields, status...), ",") + "}" }
		tests = append(tests,
			holdCase{name: "another reference, status " + st, record: rec(`"seller_order_no":"INV-2"`, `"agency":"AG01"`, `"amount":"19.90"`),
				asked: "INV-1", held: append([]string{"refNo"}, onStatus...)},
			holdCase{name: "another agency, status " + st, record: rec(`"seller_order_no":"INV-1"`, `"agency":"AG02"`, `"amount":"19.90"`),
				asked: "INV-1", held: append([]string{"agency"}, onStatus...)},
			holdCase{name: "another reference and agency, status " + st, record: rec(`"seller_order_no":"INV-10"`, `"agency":"AG02"`, `"amount":"19.90"`),
				asked: "INV-1", held: append([]string{"refNo", "agency"}, onStatus...)},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decodePaymentRecord(tt.record, "lookup record")
			require.NoError(t, err)
			var fields []string
			for _, fe := range holdBack(&p, "AG01", tt.asked) {
				fields = append(fields, fe.Field)
			}
			require.Equal(t, tt.held, fields)
		})
	}
}

// A record held back for another reference or agency calls no hook,
// whatever its status, and is reported held back.
func TestReconcileHeldRecordCallsNothing(t *testing.T) {
	calls := 0
	h := &CallbackHandler{Logger: slog.New(slog.DiscardHandler),
		Fulfil:          FulfilFunc(func(context.Context, *Callback) error { calls++; return nil }),
		OnStatus:        func(context.Context, *Callback) error { calls++; return nil },
		OnDoublePayment: func(context.Context, *Callback, string) error { calls++; return nil }}
	c := &Client{agency: "AG01"}
	for _, st := range []Status{StatusSuccess, StatusPending, StatusFailed} {
		for _, p := range []PaymentRecord{
			{RefNo: "INV-10", OrderNo: "GW1", Agency: "AG01", Status: st, Amount: 1990},
			{RefNo: "INV-1", OrderNo: "GW1", Agency: "AG02", Status: st, Amount: 1990},
		} {
			e := h.reconcileRecord(context.Background(), c, &p, SourceLookup, "INV-1")
			require.Equal(t, OutcomeHeldBack, e.Outcome, "%s %s %s", st, p.RefNo, p.Agency)
			require.Zero(t, calls, "%s %s %s", st, p.RefNo, p.Agency)
		}
	}
}

// A record's time reaches the callback path as its FPXTxnTime, in RFC 3339;
// a record without one leaves it empty.
func TestReconcileRecordTimeReachesTheCallback(t *testing.T) {
	p := PaymentRecord{RefNo: "INV-1", Status: StatusSuccess, Amount: 1990, Time: time.Date(2026, 11, 22, 10, 11, 12, 0, MalaysiaTime())}
	require.Equal(t, "2026-11-22T10:11:12+08:00", p.callback(SourceLookup).FPXTxnTime)
	p.Time = time.Time{}
	require.Empty(t, p.callback(SourceLookup).FPXTxnTime)
}

// Reconcile's edges: a context already ended looks nothing up; a reference
// the gateway does not know is not found, with a hint to pass the extra
// data only when the reference has none; a record that names no reference
// is held back with its error; ReconcileReport returns the walk's error
// with the entries done.
func TestReconcileEdges(t *testing.T) {
	h := &CallbackHandler{Logger: slog.New(slog.DiscardHandler), ReconcileInterval: -1,
		Fulfil: FulfilFunc(func(context.Context, *Callback) error { t.Error("nothing is fulfilled"); return nil })}
	f := newTestClient(t)
	f.mt.RegisterResponder(http.MethodGet, testReports+paths.FPXRequest, func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("refno") == "NOREF" {
			return httpmock.NewStringResponse(200, `{"status":"OK","fpxrequest":{"status":"success","amount":"1.00"}}`), nil
		}
		return httpmock.NewStringResponse(404, `{"status":"NOT_FOUND"}`), nil
	})
	f.mt.RegisterResponder(http.MethodGet, testReports+paths.PaymentReport, httpmock.NewStringResponder(400, "bad query"))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, err := h.Reconcile(ctx, f.c, []string{"INV-1"})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, rec.Entries)
	require.Zero(t, f.mt.GetTotalCallCount(), "nothing looked up")

	rec, err = h.Reconcile(context.Background(), f.c, []string{"GONE-1", "GONE-2~cart", "NOREF"})
	require.NoError(t, err)
	require.Len(t, rec.Entries, 3)
	require.Equal(t, OutcomeNotFound, rec.Entries[0].Outcome)
	require.ErrorContains(t, rec.Entries[0].Err, "give refNo~extraData")
	require.Equal(t, OutcomeNotFound, rec.Entries[1].Outcome)
	require.ErrorIs(t, rec.Entries[1].Err, ErrOrderNotFound)
	require.NotContains(t, rec.Entries[1].Err.Error(), "give refNo~extraData", "it has its extra data")
	require.Equal(t, OutcomeHeldBack, rec.Entries[2].Outcome)
	require.ErrorContains(t, rec.Entries[2].Err, "merchant's reference")

	rec, err = h.ReconcileReport(context.Background(), f.c, ReportQuery{})
	require.ErrorContains(t, err, "HTTP 400")
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr))
	require.Empty(t, rec.Entries, "the error is no row")
}
