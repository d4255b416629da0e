package paygate

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// Transactions is authenticated like the reports, validates the e-mail
// before sending, keeps the answer raw, and refuses a status other than OK.
func TestTransactions(t *testing.T) {
	ctx := context.Background()
	t.Run("signed with the API key", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+paths.Transactions, func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			require.Equal(t, "buyer+1@example.com", q.Get("email"))
			require.Equal(t, testAgency, q.Get("agency"))
			requireSignedURL(t, req.URL, testNow)
			return httpmock.NewStringResponse(200, `{"status":"OK","data":[{"seller_order_no":"INV-1"}]}`), nil
		})
		h, err := f.c.Transactions(ctx, "buyer+1@example.com")
		require.NoError(t, err)
		var v struct{ Data []map[string]string }
		require.NoError(t, h.Decode(&v))
		require.Equal(t, "INV-1", v.Data[0]["seller_order_no"])
	})
	t.Run("with the AuthToken", func(t *testing.T) {
		f := newTestClient(t, WithAuthToken(testAuthToken))
		f.mt.RegisterResponder(http.MethodGet, testReports+paths.Transactions, func(req *http.Request) (*http.Response, error) {
			require.Equal(t, "Bearer "+testAuthToken, req.Header.Get("Authorization"))
			require.Empty(t, req.URL.Query().Get("signature"))
			return httpmock.NewStringResponse(200, `[{"seller_order_no":"INV-1"}]`), nil
		})
		h, err := f.c.Transactions(ctx, "buyer@example.com")
		require.NoError(t, err)
		require.JSONEq(t, `[{"seller_order_no":"INV-1"}]`, string(h.Raw), "a shape without status is kept as is")
	})
	for _, tc := range []struct {
		name, email, body string
		want              error
		msg               string
	}{
		{name: "no e-mail", email: "", msg: "email"},
		{name: "not an e-mail", email: "buyer.example.com", msg: "email"},
		{name: "status not OK", email: "a@example.com", body: `{"status":"ERROR","error":"no such user"}`, want: ErrReportStatus},
		{name: "status a number", email: "a@example.com", body: `{"status":500,"data":[]}`, want: ErrReportStatus, msg: "500"},
		{name: "status false", email: "a@example.com", body: `{"status":false,"data":[]}`, want: ErrReportStatus},
		{name: "status an object", email: "a@example.com", body: `{"status":{"code":"ERROR"},"data":[]}`, want: ErrReportStatus},
		{name: "status an array holding OK", email: "a@example.com", body: `{"status":["OK"],"data":[]}`, want: ErrReportStatus},
		{name: "not JSON", email: "a@example.com", body: `<html>`, msg: "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t)
			f.mt.RegisterResponder(http.MethodGet, testReports+paths.Transactions, httpmock.NewStringResponder(200, tc.body))
			_, err := f.c.Transactions(ctx, tc.email)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
			require.ErrorContains(t, err, tc.msg)
			if tc.body == "" {
				require.Zero(t, f.mt.GetTotalCallCount(), "nothing sent")
			}
		})
	}
}

// The history's rows decode like report rows, from an array or its data or
// transactions member; a row that does not decode is named, the others kept.
func TestTransactionHistoryPayments(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		refs      []string
		err       string
	}{
		{name: "data member", raw: `{"status":"OK","data":[{"seller_order_no":"A~x~y","status":"success"},{"seller_order_no":"B","status":"failed"}]}`, refs: []string{"A", "B"}},
		{name: "transactions member", raw: `{"transactions":[{"fpx_seller_order_no":"C","fpx_debit_auth_code":"00"}]}`, refs: []string{"C"}},
		{name: "a bare array", raw: `[{"refno":"D","status":"pending"}]`, refs: []string{"D"}},
		{name: "an empty history", raw: `{"status":"OK","data":[]}`, refs: []string{}},
		{name: "a row without a reference", raw: `{"data":[{"status":"success"},{"seller_order_no":"E","status":"success"}]}`, refs: []string{"E"}, err: "row 0: "},
		{name: "no rows anywhere", raw: `{"status":"OK","count":0}`, refs: nil, err: "no array of rows"},
		{name: "data not an array", raw: `{"data":{"seller_order_no":"F"}}`, refs: nil, err: "no array of rows"},
		{name: "data after the array", raw: `[{"refno":"G","status":"success"}] [{"refno":"H"}]`, refs: nil, err: "data after the top-level value"},
		{name: "data after the object", raw: `{"data":[{"refno":"I"}]}}`, refs: nil, err: "data after the top-level value"},
		{name: "white space after the object", raw: "{\"data\":[{\"refno\":\"J\"}]} \n\t", refs: []string{"J"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &TransactionHistory{Raw: []byte(tc.raw)}
			ps, err := h.Payments()
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
			if tc.refs == nil {
				require.Nil(t, ps)
				return
			}
			refs := []string{}
			for _, p := range ps {
				refs = append(refs, p.RefNo)
			}
			require.Equal(t, tc.refs, refs)
		})
	}
}

func FuzzTransactionHistory(f *testing.F) {
	f.Add(`{"status":"OK","data":[{"seller_order_no":"A~x","amount":"1.00","status":"success"}]}`)
	f.Add(`[{"refno":"B"},1,"x",null]`)
	f.Add(`{"transactions":[`)
	f.Fuzz(func(t *testing.T, raw string) {
		ps, _ := (&TransactionHistory{Raw: []byte(raw)}).Payments()
		for _, p := range ps {
			if p.RefNo == "" || strings.Contains(p.RefNo, "~") {
				t.Fatalf("a record with base reference %q", p.RefNo)
			}
		}
	})
}

// The error of Payments stays small whatever the answer: it names the
// first rows that did not decode and counts the rest, and the rows that
// decode are returned all the same.
func TestTransactionHistoryPaymentsErrorBounded(t *testing.T) {
	const bad = 1 << 13 // unbounded, their errors would hold 80 KB and more
	for _, tc := range []struct {
		name, row string
	}{
		{name: "numbers", row: `1`},
		{name: "objects without a reference", row: `{}`},
		{name: "two references", row: `{"refno":"A","refNo":"B"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"data":[` + strings.Repeat(tc.row+",", bad) + `{"refno":"OK-1","status":"success"}]}`
			ps, err := (&TransactionHistory{Raw: []byte(raw)}).Payments()
			require.Len(t, ps, 1)
			require.Equal(t, "OK-1", ps[0].RefNo)
			msg := err.Error()
			require.Less(t, len(msg), 32<<10, "the error holds %d bytes", len(msg))
			require.Contains(t, msg, "row 0: ")
			require.Contains(t, msg, "row 99: ")
			require.NotContains(t, msg, "row 100: ")
			require.Contains(t, msg, fmt.Sprintf("%d more rows did not decode", bad-100))
		})
	}
}
