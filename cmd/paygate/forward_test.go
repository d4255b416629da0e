package main

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// The callback rebuilt from a record carries what the record holds, in
// the callback's form, and leaves out what it does not.
func TestCallbackForm(t *testing.T) {
	paid := time.Date(2026, 11, 25, 16, 28, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		p    paygate.PaymentRecord
		want url.Values
	}{
		{name: "a whole record", p: paygate.PaymentRecord{RefNo: "INV-1", ExtraData: "cart~2", OrderNo: "SB1", Agency: "AG", Amount: 2590,
			Status: paygate.StatusSuccess, FPXCode: "00", HasFPXCode: true, FPXTxnID: "T1", Time: paid},
			want: url.Values{"status": {"success"}, "orderNo": {"SB1"}, "refNo": {"INV-1"}, "extraData": {"cart~2"}, "amount": {"25.90"},
				"fpxTxnId": {"T1"}, "fpxTxnTime": {"2026-11-26 00:28:00"}, "agency": {"AG"}, "fpx": {`{"fpx_debit_auth_code":"00"}`}}},
		{name: "an empty code is named", p: paygate.PaymentRecord{RefNo: "INV-2", Status: paygate.StatusPending, HasFPXCode: true},
			want: url.Values{"status": {"pending"}, "refNo": {"INV-2"}, "fpx": {`{"fpx_debit_auth_code":""}`}}},
		{name: "nothing invented", p: paygate.PaymentRecord{RefNo: "INV-3", Status: paygate.StatusFailed},
			want: url.Values{"status": {"failed"}, "refNo": {"INV-3"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, callbackForm(tc.p))
		})
	}
}

// Each rule that keeps a record from being forwarded, and the records
// that pass.
func TestHoldReason(t *testing.T) {
	ok := paygate.PaymentRecord{RefNo: "A", Agency: "AG", Amount: 100, Status: paygate.StatusSuccess, FPXTxnID: "T"}
	with := func(change func(p *paygate.PaymentRecord)) paygate.PaymentRecord {
		p := ok
		change(&p)
		return p
	}
	for _, tc := range []struct {
		name   string
		p      paygate.PaymentRecord
		reason string
		quiet  bool
	}{
		{name: "a success", p: ok},
		{name: "a failure without an amount", p: with(func(p *paygate.PaymentRecord) { p.Status, p.Amount = paygate.StatusFailed, 0 })},
		{name: "a pending payment", p: with(func(p *paygate.PaymentRecord) { p.Status = paygate.StatusPending })},
		{name: "a problem of a display field", p: with(func(p *paygate.PaymentRecord) {
			p.Problems = []paygate.FieldError{{Field: "created_at", Rule: "x"}}
		})},
		{name: "no agency in the record", p: with(func(p *paygate.PaymentRecord) { p.Agency = "" })},
		{name: "no reference", p: with(func(p *paygate.PaymentRecord) { p.RefNo = "" }), reason: "no reference"},
		{name: "not paid yet", p: with(func(p *paygate.PaymentRecord) { p.Status, p.FPXTxnID = paygate.StatusPending, "" }),
			reason: "not paid yet", quiet: true},
		{name: "no status", p: with(func(p *paygate.PaymentRecord) { p.Status = "" }), reason: "cannot be proved"},
		{name: "another status", p: with(func(p *paygate.PaymentRecord) { p.Status = "refunded" }), reason: "cannot be proved"},
		{name: "another agency", p: with(func(p *paygate.PaymentRecord) { p.Agency = "OTHER" }), reason: "another agency"},
		{name: "a success without an amount", p: with(func(p *paygate.PaymentRecord) { p.Amount = 0 }), reason: "without an amount"},
		{name: "a success with a money problem", p: with(func(p *paygate.PaymentRecord) {
			p.Problems = []paygate.FieldError{{Field: "amount", Rule: "x"}}
		}), reason: "did not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule, pass := holdReason(&tc.p, "AG")
			require.Equal(t, tc.reason == "", pass)
			require.Contains(t, rule.reason, tc.reason)
			require.Equal(t, tc.quiet, rule.quiet)
		})
	}
}
