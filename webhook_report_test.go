package paygate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/zakat"
)

// Send's contract: the report is never nil and Outcomes gives, for every
// transaction by its index, its status and reason; the lists hold the same
// ordernos; the error is nil only when all were accepted and otherwise a
// *SendError that carries the same report, names the counts and still
// matches the causes (errors.Is / errors.As).
func TestSendOutcomesByIndex(t *testing.T) {
	const (
		A = zakat.SendAccepted
		R = zakat.SendRejected
		U = zakat.SendUnconfirmed
		N = zakat.SendNotSent
		I = zakat.SendInvalid
	)
	tests := []struct {
		name    string
		n       int
		invalid []int          // indexes made invalid
		answers map[string]int // first orderno of a request -> status (default 200)
		want    []zakat.SendStatus
		wantMsg string // in the error text
		wantIs  error
	}{
		{name: "all accepted", n: 5, want: []zakat.SendStatus{A, A, A, A, A}},
		{name: "nothing to send", n: 0, want: []zakat.SendStatus{}},
		{
			name: "every status", n: 7, invalid: []int{1},
			// The 422 names no transaction: the request is split, and
			// only its half from ORD-000003 is refused again.
			answers: map[string]int{"ORD-000003": 422, "ORD-000005": 500},
			want:    []zakat.SendStatus{A, I, A, R, A, U, U},
			wantMsg: "send incomplete: 3 of 7 transactions accepted, 1 rejected, 2 unconfirmed, 0 not sent, 1 invalid",
		},
		{
			name: "401 stops the send", n: 6,
			answers: map[string]int{"ORD-000002": 401},
			want:    []zakat.SendStatus{A, A, R, R, N, N},
			wantMsg: "2 of 6 transactions accepted, 2 rejected, 0 unconfirmed, 2 not sent, 0 invalid",
			wantIs:  ErrUnauthorized,
		},
		{
			name: "all invalid", n: 2, invalid: []int{0, 1},
			want:    []zakat.SendStatus{I, I},
			wantMsg: "0 of 2 transactions accepted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t, WithBatchSize(2), WithRetry(RetryPolicy{MaxAttempts: 1}))
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
				code, ok := tt.answers[decodeBody(t, req)[0]]
				if !ok {
					code = 200
				}
				return httpmock.NewStringResponse(code, `{"error":"refused"}`), nil
			})
			txs := validTxs(tt.n)
			for _, i := range tt.invalid {
				txs[i].Amount = -1
			}
			report, err := s.Send(context.Background(), txs)
			require.NotNil(t, report)
			out := report.Outcomes()
			require.Len(t, out, tt.n)
			require.Equal(t, tt.n, report.Total(), "each transaction counted once")
			lists := map[zakat.SendStatus][]string{}
			for i, o := range out {
				require.Equal(t, i, o.Index)
				require.Equal(t, txs[i].OrderNo, o.OrderNo)
				require.Equal(t, tt.want[i], o.Status, "transaction %d", i)
				require.Equal(t, o.Status == zakat.SendAccepted, o.Err == nil, "an error exactly when not accepted: %v", o.Err)
				require.Equal(t, o.Status.SafeToResend(), o.Status == zakat.SendUnconfirmed || o.Status == zakat.SendNotSent)
				if o.Status == zakat.SendInvalid {
					require.Equal(t, -1, o.Request)
					var ve *zakat.ValidationError
					require.ErrorAs(t, o.Err, &ve)
				} else {
					require.Contains(t, report.Requests[o.Request].OrderNos, o.OrderNo)
				}
				lists[o.Status] = append(lists[o.Status], o.OrderNo)
			}
			require.Equal(t, lists[zakat.SendAccepted], report.Accepted)
			require.Equal(t, lists[zakat.SendRejected], report.Rejected)
			require.Equal(t, lists[zakat.SendUnconfirmed], report.Unconfirmed)
			require.Equal(t, lists[zakat.SendNotSent], report.NotSent)
			require.Len(t, report.Invalid, len(lists[zakat.SendInvalid]))
			if len(report.Accepted) == tt.n {
				require.NoError(t, err)
				return
			}
			var se *SendError
			require.ErrorAs(t, err, &se)
			require.Same(t, report, se.Report, "the error carries the report Send returned")
			require.Contains(t, err.Error(), tt.wantMsg)
			if tt.wantIs != nil {
				require.ErrorIs(t, err, tt.wantIs)
			}
			if len(tt.invalid) > 0 {
				var ve *zakat.ValidationError
				require.ErrorAs(t, err, &ve)
			}
		})
	}
}

// The usual Go habit, return on the error, keeps the report: the error
// reaches the report by errors.As and says only that the send was
// incomplete, with the counts, before its first problem.
func TestSendErrorKeepsTheReport(t *testing.T) {
	s, mt, _ := newTestSender(t, WithBatchSize(1), WithRetry(RetryPolicy{MaxAttempts: 1}))
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		if decodeBody(t, req)[0] == "ORD-000001" {
			return httpmock.NewStringResponse(400, "bad"), nil
		}
		return httpmock.NewStringResponse(200, ""), nil
	})
	send := func() error {
		_, err := s.Send(context.Background(), validTxs(3))
		if err != nil {
			return fmt.Errorf("nightly feed: %w", err)
		}
		return nil
	}
	err := send()
	var se *SendError
	require.True(t, errors.As(err, &se))
	require.Equal(t, []string{"ORD-000000", "ORD-000002"}, se.Report.Accepted)
	require.Equal(t, []string{"ORD-000001"}, se.Report.Rejected)
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, "nightly feed: paygate: send incomplete: 2 of 3 transactions accepted, 1 rejected"), msg)
	require.Contains(t, msg, `first problem: request 1 (1 transactions from orderno "ORD-000001")`)
	require.NotContains(t, msg, testPassword)
}

// A SendError without causes (one a caller builds) says the counts and
// names no first problem.
func TestSendErrorWithoutCausesSaysTheCounts(t *testing.T) {
	err := &SendError{Report: &zakat.SendReport{NotSent: []string{"ORD-1"},
		Requests: []zakat.RequestReport{{OrderNos: []string{"ORD-1"}, Indexes: []int{0}, Status: zakat.SendNotSent}}}}
	require.Equal(t, "paygate: send incomplete: 0 of 1 transactions accepted, 0 rejected, 0 unconfirmed, 1 not sent, 0 invalid (SendReport.Outcomes says which)", err.Error())
	require.Empty(t, err.Unwrap())
}

// SendError.Error is one line whatever its causes hold: a validation
// error's list, a body with line breaks.
func TestSendErrorIsOneLine(t *testing.T) {
	for _, cause := range []string{"line one\nline two", "a\r\nb", "x\u2028y\u2029z", "v\vf\fnel\u0085"} {
		err := &SendError{Report: &zakat.SendReport{NotSent: []string{"ORD-1"},
			Requests: []zakat.RequestReport{{OrderNos: []string{"ORD-1"}, Indexes: []int{0}, Status: zakat.SendNotSent}}},
			causes: []error{errors.New(cause)}}
		msg := err.Error()
		require.NotContains(t, msg, "\n")
		require.NotContains(t, msg, "\r")
		require.False(t, strings.ContainsAny(msg, "\v\f\u0085\u2028\u2029"), "%q", msg)
		require.Contains(t, msg, "first problem: ")
	}
	s, mt, _ := newTestSender(t, WithRetry(RetryPolicy{MaxAttempts: 1}))
	mt.RegisterResponder(http.MethodPost, testWebhookURL, httpmock.NewStringResponder(500, "line one\nline two"))
	txs := validTxs(2)
	txs[0].Amount = -1
	_, err := s.Send(context.Background(), txs)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "\n")
}
