package gatewaytest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// The admin route decides an undecided order, settles a pending one,
// refuses what the hosted page would refuse, and answers only a loopback
// client with the sandbox's AuthToken; the decision's callback reaches the
// merchant.
func TestAdminSettle(t *testing.T) {
	var mu sync.Mutex
	var callbacks []string
	merchant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		callbacks = append(callbacks, r.PostForm.Get("refNo")+" "+r.PostForm.Get("status"))
		mu.Unlock()
	}))
	defer merchant.Close()
	sb := NewServer(WithRetryInterval(10 * time.Millisecond))
	defer sb.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	for _, ref := range []string{"A-1", "A-2"} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 1050, Email: "a@b.example", ReturnURL: merchant.URL})
		require.NoError(t, err)
	}
	post := func(token string, form url.Values) (int, map[string]any) {
		req, err := http.NewRequest(http.MethodPost, sb.URL+AdminSettlePath, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	for _, tc := range []struct {
		name   string
		token  string
		ref    string
		status string
		code   int
		want   string // the order's status, or a part of the error
	}{
		{name: "no token", token: "", ref: "A-1", status: "success", code: http.StatusUnauthorized, want: "AuthToken"},
		{name: "wrong token", token: "sandbox.wrong", ref: "A-1", status: "success", code: http.StatusUnauthorized, want: "AuthToken"},
		{name: "bad status", token: sb.AuthToken, ref: "A-1", status: "paid", code: http.StatusBadRequest, want: "status"},
		{name: "unknown order", token: sb.AuthToken, ref: "NOPE", status: "success", code: http.StatusNotFound, want: "NOPE"},
		{name: "pay", token: sb.AuthToken, ref: "A-1", status: "success", code: http.StatusOK, want: "success"},
		{name: "pay again", token: sb.AuthToken, ref: "A-1", status: "failed", code: http.StatusConflict, want: "already success"},
		{name: "pending", token: sb.AuthToken, ref: "A-2", status: "pending", code: http.StatusOK, want: "pending"},
		{name: "pending again", token: sb.AuthToken, ref: "A-2", status: "pending", code: http.StatusConflict, want: "status"},
		{name: "settle the pending", token: sb.AuthToken, ref: "A-2", status: "failed", code: http.StatusOK, want: "failed"},
	} {
		code, body := post(tc.token, url.Values{"refNo": {tc.ref}, "status": {tc.status}})
		require.Equal(t, tc.code, code, "%s: %v", tc.name, body)
		if code != http.StatusOK {
			require.Equal(t, "ERROR", body["status"], tc.name)
			require.Contains(t, body["error"], tc.want, tc.name)
			continue
		}
		order := body["order"].(map[string]any)
		require.Equal(t, tc.want, order["status"], tc.name)
		require.Equal(t, tc.ref, order["refNo"], tc.name)
		require.Equal(t, 10.5, order["amount"], tc.name)
	}
	sb.Settle()
	mu.Lock()
	require.ElementsMatch(t, []string{"A-1 success", "A-2 pending", "A-2 failed"}, callbacks)
	mu.Unlock()

	req := httptest.NewRequest(http.MethodPost, AdminSettlePath, strings.NewReader("refNo=A-1&status=success"))
	req.Header.Set("Authorization", "Bearer "+sb.AuthToken)
	req.RemoteAddr = "192.0.2.7:40000"
	rec := httptest.NewRecorder()
	sb.routes().ServeHTTP(rec, req)
	require.Equal(t, http.StatusForbidden, rec.Code, "a client not on loopback")
}
