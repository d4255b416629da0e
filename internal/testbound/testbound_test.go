package testbound

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that keeps what Errorf says instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Past its bound a Handler fails the test, naming the rule, and answers
// 400; within it, the handler serves.
func TestHandlerBound(t *testing.T) {
	rec := &recorder{TB: t}
	h, reqs := Handler(rec, 2, "a walk stops after a short page", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var codes []int
	for range 3 {
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	require.Equal(t, []int{204, 204, 400}, codes)
	require.Equal(t, 3, reqs.Count())
	require.Equal(t, []string{"request 3 is past the fake server's bound of 2: a walk stops after a short page"}, rec.errs)
}

// A Mock answers at once when its responder stops without an answer (as a
// failed require does, through runtime.Goexit), even for a request whose
// context can be cancelled, and fails past its bound.
func TestMockGuard(t *testing.T) {
	rec := &recorder{TB: t}
	m := NewMock(rec, 2, "retries end")
	m.RegisterResponder(http.MethodGet, "https://x.example/stop", func(*http.Request) (*http.Response, error) {
		runtime.Goexit()
		return nil, nil
	})
	m.RegisterResponder(http.MethodGet, "https://x.example/ok", httpmock.NewStringResponder(200, "ok"))
	c := &http.Client{Transport: m}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://x.example/stop", nil)
	require.NoError(t, err)
	_, err = c.Do(req)
	require.ErrorContains(t, err, "the fake server stopped without an answer")
	require.NoError(t, ctx.Err(), "answered before the context's end")

	resp, err := c.Get("https://x.example/ok")
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	resp, err = c.Get("https://x.example/ok")
	require.NoError(t, err)
	require.Equal(t, 400, resp.StatusCode)
	require.Equal(t, []string{"request 3 is past the fake server's bound of 2: retries end"}, rec.errs)
}

// Soak skips unless PAYGATE_SOAK=1, and says how to switch it on.
func TestSoakSwitch(t *testing.T) {
	for _, tc := range []struct {
		value   string
		skipped bool
	}{{"", true}, {"0", true}, {"yes", true}, {"1", false}} {
		t.Run("PAYGATE_SOAK="+tc.value, func(t *testing.T) {
			t.Setenv(SoakVar, tc.value)
			require.Equal(t, !tc.skipped, Soaking())
			skipped := true
			done := make(chan struct{})
			r := &recorder{TB: t}
			go func() { // Skip ends its goroutine
				defer close(done)
				Soak(skipRecorder{r}, "TestFast")
				skipped = false
			}()
			<-done
			require.Equal(t, tc.skipped, skipped)
		})
	}
}

// skipRecorder is a testing.TB whose Skipf ends the goroutine without
// skipping the test, as Skipf does, so that a test can see it called.
type skipRecorder struct{ *recorder }

func (skipRecorder) Skipf(string, ...any) { runtime.Goexit() }
