package gatewaytest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
)

// syncBuffer is a bytes.Buffer safe for the sandbox's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// WithLog writes one line per callback attempt (each duplicate, a lost
// one, the handler's answer and time) and one per lookup answered, and
// WithLookupFailures answers the lookups it matches 503; Lookups logs
// every answer.
func TestWithLogAndLookupFailures(t *testing.T) {
	var out syncBuffer
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	sb := NewServer(WithLog(slog.New(slog.NewTextHandler(&out, nil))), WithDuplicateCallbacks(2, false),
		WithCallbackLoss(hasPrefix("LOST")), WithLookupFailures(hasPrefix("DOWN")))
	t.Cleanup(sb.Close)
	client, err := sb.Client()
	require.NoError(t, err)
	ctx := context.Background()
	for _, ref := range []string{"OK-1", "LOST-1", "DOWN-1"} {
		_, err := client.CreateOrder(ctx, paygate.Order{RefNo: ref, Amount: 1000, Email: "a@example.com", ReturnURL: srv.URL})
		require.NoError(t, err)
	}
	require.NoError(t, sb.Pay("OK-1", paygate.StatusSuccess))
	require.NoError(t, sb.Pay("LOST-1", paygate.StatusSuccess))
	settle(t, sb)
	_, err = client.LookupOrderByRefNo(ctx, "OK-1")
	require.NoError(t, err)
	down, err := sb.Client(paygate.WithRetry(paygate.RetryPolicy{MaxAttempts: 1}))
	require.NoError(t, err)
	_, err = down.LookupOrderByRefNo(ctx, "DOWN-1")
	require.Error(t, err)

	for _, want := range []string{
		`msg=callback refNo=OK-1 status=success attempt=1 duplicate=1/2 answer=202 took=\S+`,
		`msg=callback refNo=OK-1 status=success attempt=1 duplicate=2/2 answer=202 took=\S+`,
		`msg=callback refNo=LOST-1 status=success lost=true`,
		`msg=lookup refNo=OK-1 status=200 answer=OK took=\S+`,
		`msg=lookup refNo=DOWN-1 status=503 answer="Service Unavailable" took=\S+`,
	} {
		re := regexp.MustCompile(want)
		require.True(t, func() bool {
			for _, l := range out.lines() {
				if re.MatchString(l) {
					return true
				}
			}
			return false
		}(), "no line matching %s in\n%s", want, strings.Join(out.lines(), "\n"))
	}
	var codes []int
	for _, l := range sb.Lookups() {
		codes = append(codes, l.StatusCode)
	}
	require.Equal(t, []int{200, 503}, codes)
}
