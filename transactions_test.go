package paygate

import (
	"context"
	"net/http"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// Transactions is authenticated like the reports, validates the e-mail
// before sending, keeps the answer raw, and refuses a status other than OK.
func TestTransactions(t *testing.T) {
	ctx := context.Background()
	t.Run("signed with the API key", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+TransactionsPath, func(req *http.Request) (*http.Response, error) {
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
		f.mt.RegisterResponder(http.MethodGet, testReports+TransactionsPath, func(req *http.Request) (*http.Response, error) {
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
		{name: "not JSON", email: "a@example.com", body: `<html>`, msg: "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t)
			f.mt.RegisterResponder(http.MethodGet, testReports+TransactionsPath, httpmock.NewStringResponder(200, tc.body))
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
