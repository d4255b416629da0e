package gatewaytest

import (
	"context"
	"net/http"
	"testing"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

// The sandbox serves each channel's fixed list to Client.Banks, with
// either credential, and refuses an unknown channel or no credential.
func TestBankList(t *testing.T) {
	sb := newSandbox(t)
	ctx := context.Background()
	withKey, err := paygate.NewClient(paygate.WithAgency(sb.Agency), paygate.WithKey(sb.Key()), paygate.WithReportsURL(sb.URL))
	require.NoError(t, err)
	withToken, err := paygate.NewClient(paygate.WithAuthToken(sb.AuthToken), paygate.WithReportsURL(sb.URL))
	require.NoError(t, err)
	for _, channel := range []paygate.BankChannel{paygate.BankChannelB2C, paygate.BankChannelB2B} {
		for name, client := range map[string]*paygate.Client{"API key": withKey, "AuthToken": withToken} {
			t.Run(string(channel)+" "+name, func(t *testing.T) {
				got, err := client.Banks(ctx, channel)
				require.NoError(t, err)
				want := Banks(channel)
				require.Len(t, got, len(want))
				offline := 0
				for i, b := range want {
					require.Equal(t, b.Code, got[i].Code)
					require.Equal(t, b.Name, got[i].Name)
					require.Equal(t, b.Status == "A", got[i].Online)
					if !got[i].Online {
						offline++
					}
				}
				require.Equal(t, 1, offline, "one bank of each list is blocked")
			})
		}
	}
	wrong, err := paygate.NewClient(paygate.WithAuthToken("wrong"), paygate.WithReportsURL(sb.URL))
	require.NoError(t, err)
	_, err = wrong.Banks(ctx, paygate.BankChannelB2C)
	require.ErrorIs(t, err, paygate.ErrUnauthorized)

	req, err := http.NewRequest(http.MethodGet, sb.URL+paths.BankList+"b2x", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+sb.AuthToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	list := Banks(paygate.BankChannelB2C)
	list[0].Code = "CHANGED"
	require.NotEqual(t, "CHANGED", Banks(paygate.BankChannelB2C)[0].Code, "Banks returns a copy")
	require.Nil(t, Banks("b2x"))
}
