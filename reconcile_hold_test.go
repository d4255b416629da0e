package paygate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A record is held back, never acted on, when it names another reference
// or agency, its status cannot be proved, or a success's money fields are
// absent or did not parse; problems that do not touch money hold nothing.
func TestReconcileHoldBack(t *testing.T) {
	const ok = `"seller_order_no":"INV-1~x","order_no":"GW1","agency":"AG01","amount":"19.90","status":"success","fpx_debit_auth_code":"00"`
	tests := []struct {
		name, record, asked string
		held                []string // the fields named, in order
	}{
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
