package paygate

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// Banks asks the channel's list with the reports' credential and reads the
// answer's guessed shapes.
func TestBanks(t *testing.T) {
	ctx := context.Background()
	t.Run("signed with the API key", func(t *testing.T) {
		f := newTestClient(t)
		f.mt.RegisterResponder(http.MethodGet, testReports+paths.BankList+"b2b", func(req *http.Request) (*http.Response, error) {
			require.Equal(t, testAgency, req.URL.Query().Get("agency"))
			requireSignedURL(t, req.URL, testNow)
			return httpmock.NewStringResponse(200, `{"status":"OK","data":[{"code":"ABB0232","name":"Affin Bank","status":"A"},{"code":"AMBB0208","name":"AmBank","status":"B"}]}`), nil
		})
		banks, err := f.c.Banks(ctx, BankChannelB2B)
		require.NoError(t, err)
		require.Equal(t, []Bank{{Code: "ABB0232", Name: "Affin Bank", Status: "A", Online: true}, {Code: "AMBB0208", Name: "AmBank", Status: "B"}}, banks)
	})
	t.Run("with the AuthToken", func(t *testing.T) {
		f := newTestClient(t, WithAuthToken(testAuthToken))
		f.mt.RegisterResponder(http.MethodGet, testReports+paths.BankList+"b2c", func(req *http.Request) (*http.Response, error) {
			require.Equal(t, "Bearer "+testAuthToken, req.Header.Get("Authorization"))
			require.Empty(t, req.URL.Query().Get("signature"))
			return httpmock.NewStringResponse(200, `[{"bank_code":"MB2U0227","bank_name":"Maybank2U"}]`), nil
		})
		banks, err := f.c.Banks(ctx, BankChannelB2C)
		require.NoError(t, err)
		require.Equal(t, []Bank{{Code: "MB2U0227", Name: "Maybank2U", Online: true}}, banks, "no status: online")
	})
	t.Run("a path set by WithEndpoints", func(t *testing.T) {
		f := newTestClient(t, WithEndpoints(Endpoints{BankList: "/fpx/banks/"}))
		f.mt.RegisterResponder(http.MethodGet, testReports+"/fpx/banks/b2c", httpmock.NewStringResponder(200, `{"banks":[{"code":"X1"}]}`))
		banks, err := f.c.Banks(ctx, BankChannelB2C)
		require.NoError(t, err)
		require.Equal(t, "X1", banks[0].Code)
	})
}

// A bad channel never reaches the network; a refusal, a 5xx and an answer
// that is not a bank list are errors saying so.
func TestBanksErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		channel BankChannel
		status  int
		body    string
		is      error
		says    string
		calls   int
	}{
		{name: "unknown channel", channel: "b2x", says: `channel: must be "b2c" or "b2b"`},
		{name: "empty channel", channel: "", says: "channel"},
		{name: "not found", channel: BankChannelB2C, status: 404, body: `{"error":"no route"}`, says: "404", calls: 1},
		{name: "5xx retried, then an error", channel: BankChannelB2C, status: 503, body: `busy`, says: "503", calls: 4},
		{name: "unauthorized", channel: BankChannelB2B, status: 401, body: `{}`, is: ErrUnauthorized, calls: 1},
		{name: "not JSON", channel: BankChannelB2C, status: 200, body: `<html>`, says: "bank list b2c: the answer is not a bank list: not JSON", calls: 1},
		{name: "status not OK", channel: BankChannelB2C, status: 200, body: `{"status":"ERROR","data":[]}`, is: ErrReportStatus, calls: 1},
		{name: "no array", channel: BankChannelB2C, status: 200, body: `{"status":"OK","data":{"code":"X"}}`, says: "no array of banks", calls: 1},
		{name: "a bank not an object", channel: BankChannelB2C, status: 200, body: `[{"code":"A"},"B"]`, says: "bank 1 is not an object", calls: 1},
		{name: "a bank without code", channel: BankChannelB2C, status: 200, body: `[{"code":"A"},{"name":"B","code":""}]`, says: "bank 1 has no code", calls: 1},
		{name: "a code that is an object", channel: BankChannelB2C, status: 200, body: `[{"code":{"x":1}}]`, says: "bank 0 has no code", calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestClient(t)
			f.mt.RegisterResponder(http.MethodGet, testReports+paths.BankList+string(tc.channel), httpmock.NewStringResponder(tc.status, tc.body))
			banks, err := f.c.Banks(context.Background(), tc.channel)
			require.Error(t, err)
			require.Nil(t, banks)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.ErrorContains(t, err, tc.says)
			require.Equal(t, tc.calls, f.mt.GetTotalCallCount())
		})
	}
}

// Statuses and member names: what counts as online, numbers and booleans
// as text.
func TestParseBanks(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Bank
	}{
		{`[{"code":"A","status":"online"}]`, Bank{Code: "A", Status: "online", Online: true}},
		{`[{"code":"A","status":"Active"}]`, Bank{Code: "A", Status: "Active", Online: true}},
		{`[{"code":"A","online":true}]`, Bank{Code: "A", Status: "true", Online: true}},
		{`[{"code":"A","active":0}]`, Bank{Code: "A", Status: "0"}},
		{`[{"code":"A","status":"offline"}]`, Bank{Code: "A", Status: "offline"}},
		{`[{"bankCode":" A ","displayName":"Bank A","status":null}]`, Bank{Code: "A", Name: "Bank A", Online: true}},
		{`[{"id":7}]`, Bank{Code: "7", Online: true}},
	} {
		t.Run(tc.body, func(t *testing.T) {
			banks, err := parseBanks([]byte(tc.body), strings.TrimSpace)
			require.NoError(t, err)
			require.Equal(t, []Bank{tc.want}, banks)
		})
	}
}

// Whatever the answer, parseBanks never panics and every bank it returns
// has a code.
func FuzzParseBanks(f *testing.F) {
	f.Add(`{"status":"OK","data":[{"code":"ABB0233","name":"Affin Bank","status":"A"}]}`)
	f.Add(`[{"bank_code":1,"online":false},null]`)
	f.Add(`{"banks":[`)
	f.Fuzz(func(t *testing.T, raw string) {
		banks, err := parseBanks([]byte(raw), func(s string) string { return s })
		if err != nil && banks != nil {
			t.Fatal("banks with an error")
		}
		for _, b := range banks {
			if b.Code == "" {
				t.Fatalf("a bank without a code in %q", raw)
			}
		}
	})
}
