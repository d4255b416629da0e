package zakat

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSendStatusString(t *testing.T) {
	for s, want := range map[SendStatus]string{
		SendAccepted: "accepted", SendRejected: "rejected", SendUnconfirmed: "unconfirmed",
		SendNotSent: "not sent", SendInvalid: "invalid", SendStatus(9): "SendStatus(9)",
	} {
		require.Equal(t, want, s.String())
	}
}

// A report of a request split and parts sent again: the last request that
// carried a transaction settles it, an outcome of its own overrides its
// request's, and Total counts each transaction once.
func TestOutcomesOfRequestsSentAgain(t *testing.T) {
	refused := errors.New("HTTP 400")
	report := &SendReport{
		Requests: []RequestReport{
			// 0..3, refused for 1 (its own outcome), 0, 2, 3 sent again.
			{OrderNos: []string{"A", "B", "C", "D"}, Indexes: []int{0, 1, 2, 3}, Status: SendRejected, Err: refused,
				Own: []Outcome{{Index: 1, OrderNo: "B", Status: SendRejected, Err: refused}}, Resent: []int{0, 2, 3}},
			// 0, 2, 3: C found already stored, 0 and 3 sent again.
			{OrderNos: []string{"A", "C", "D"}, Indexes: []int{0, 2, 3}, Status: SendAccepted,
				Own: []Outcome{{Index: 2, OrderNo: "C", Status: SendAccepted, AlreadyStored: true}}, Resent: []int{0, 3}},
			{OrderNos: []string{"A", "D"}, Indexes: []int{0, 3}, Status: SendAccepted},
		},
		Invalid: []InvalidTransaction{{Index: 4, OrderNo: "E"}},
	}
	require.Equal(t, 5, report.Total())
	out := report.Outcomes()
	require.Equal(t, []Outcome{
		{Index: 0, OrderNo: "A", Status: SendAccepted, Request: 2},
		{Index: 1, OrderNo: "B", Status: SendRejected, Request: 0, Err: refused},
		{Index: 2, OrderNo: "C", Status: SendAccepted, Request: 1, AlreadyStored: true},
		{Index: 3, OrderNo: "D", Status: SendAccepted, Request: 2},
		{Index: 4, OrderNo: "E", Status: SendInvalid, Request: -1, Err: &ValidationError{}},
	}, out)
}

// A Refusal's message is one sentence naming the transaction, the field
// and the rule, never the value; it unwraps to the service's answer.
func TestRefusalError(t *testing.T) {
	answer := errors.New("HTTP 400 body")
	for _, tc := range []struct {
		r    Refusal
		want string
	}{
		{r: Refusal{Index: 15, OrderNo: "ZK-15", StatusCode: 400, Problems: []FieldError{{Field: "amount", Rule: "exceeds the limit", Value: "99999"}}, Cause: answer},
			want: `transaction 15 (orderno "ZK-15") refused by the service (HTTP 400): field amount breaks the rule "exceeds the limit"`},
		{r: Refusal{Index: 2, OrderNo: "Z\n2", StatusCode: 422, Problems: []FieldError{{Field: "name", Rule: "r1"}, {Field: "email", Rule: "r2"}}, Cause: answer},
			want: `transaction 2 (orderno "Z\n2") refused by the service (HTTP 422): field name breaks the rule "r1" (and 1 more)`},
		{r: Refusal{Index: 0, OrderNo: "A", StatusCode: 400, Cause: answer}, want: `transaction 0 (orderno "A") refused by the service (HTTP 400)`},
	} {
		require.Equal(t, tc.want, tc.r.Error())
		require.NotContains(t, tc.r.Error(), "99999")
		require.ErrorIs(t, &tc.r, answer)
	}
}
