package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paygate-go/paygate"
	"github.com/stretchr/testify/require"
)

func TestCallbackSend(t *testing.T) {
	t.Setenv("PAYGATE_API_KEY", testKey)
	key, _ := paygate.ParseKey(testKey)
	var mu sync.Mutex
	var got []string
	h := &paygate.CallbackHandler{Keys: []paygate.Key{key}, Fulfil: func(_ context.Context, cb *paygate.Callback) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cb.RefNo+" "+cb.Amount.String())
		return nil
	}}
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
