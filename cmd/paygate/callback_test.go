package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

func TestCallbackSend(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	key, _ := paygate.ParseKey(testKey)
	var mu sync.Mutex
	var got []string
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: paygate.FulfilFunc(func(_ context.Context, cb *paygate.Callback) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cb.RefNo+" "+cb.Amount.String())
		return nil
	})}
	shop := httptest.NewServer(h)
	defer shop.Close()
	code, out, errOut := runCLI(t, "", "callback", "send", "-url", shop.URL+"/return", "-refno", "INV-9", "-amount", "12.50")
	require.Equal(t, exitOK, code, errOut)
	require.True(t, strings.HasPrefix(out, "200 OK"), out)
	require.Equal(t, []string{"INV-9 12.50"}, got)

	code, out, _ = runCLI(t, "", "callback", "send", "-unsigned", "-url", shop.URL+"/return", "-refno", "INV-9")
	require.Equal(t, exitInvalid, code)
	require.True(t, strings.HasPrefix(out, "403 Forbidden"), out)
	require.Len(t, got, 1)

	for _, args := range [][]string{
		{"callback", "send", "-url", "https://shop.example/return", "-refno", "X"},
		{"callback", "send", "-url", shop.URL},
		{"callback", "send", "-url", shop.URL, "-refno", "X", "-amount", "1.234"},
		{"callback"},
	} {
		code, _, _ := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, args)
	}
	code, _, _ = runCLI(t, "", "callback", "-h")
	require.Equal(t, exitOK, code)
}

// callback send never follows a redirect: the signed callback goes to the
// loopback -url only. Followed, a 307 or 308 sent the signed body again to
// wherever the Location pointed, off this machine too, and a 2xx there was
// reported as the shop's answer.
func TestCallbackSendDoesNotFollowRedirects(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	for _, tc := range []struct {
		name   string
		status int
	}{
		{name: "307 keeps the body", status: http.StatusTemporaryRedirect},
		{name: "308 keeps the body", status: http.StatusPermanentRedirect},
		{name: "302", status: http.StatusFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var elsewhere atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
			defer other.Close()
			shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/steal", tc.status)
			}))
			defer shop.Close()
			code, out, errOut := runCLI(t, "", "callback", "send", "-url", shop.URL+"/return", "-refno", "INV-9")
			require.Equal(t, exitInvalid, code, errOut)
			require.True(t, strings.HasPrefix(out, strconv.Itoa(tc.status)+" "), out)
			require.Zero(t, elsewhere.Load(), "the redirect was followed")
		})
	}
}
