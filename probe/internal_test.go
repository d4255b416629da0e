package probe

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/internal/probeaccess"
)

func TestCheckScheme(t *testing.T) {
	for raw, ok := range map[string]bool{
		"":                             true,
		"https://pay.example":          true,
		"http://localhost:8085":        true,
		"http://127.0.0.1:9/x":         true,
		"http://[::1]:9":               true,
		"http://gateway.example":       false,
		"http://127.0.0.1.example":     false,
		"http://localhost.example.com": false,
		"ftp://gateway.example":        false,
	} {
		err := checkScheme(raw)
		if ok {
			require.NoError(t, err, raw)
		} else {
			require.ErrorIs(t, err, ErrPlainHTTP, raw)
		}
	}
}

// The pacer lets one request go per interval: the stated rate (2 a second
// at DefaultInterval), whatever the callers' concurrency.
func TestPacerRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{interval: DefaultInterval}
		var sent []time.Duration
		start := time.Now()
		rt := p.wrap(roundTripFunc(func(*http.Request) (*http.Response, error) {
			sent = append(sent, time.Since(start))
			return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
		}))
		for range 5 {
			req, _ := http.NewRequest(http.MethodGet, "https://x.example", nil)
			_, err := rt.RoundTrip(req)
			require.NoError(t, err)
		}
		require.Equal(t, []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second}, sent)
		require.Equal(t, 5, p.count())

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, p.wait(ctx), context.Canceled, "a cancelled run stops waiting")
	})
}

func TestJudgeMissingLookup(t *testing.T) {
	for _, tt := range []struct {
		status   int
		body     string
		notFound bool
	}{
		{404, `{"status":"NOT_FOUND"}`, true},
		{404, ``, true},
		{200, `{"status":"OK"}`, true},
		{200, `{"status":"OK","fpxrequest":null}`, true},
		{200, `{"status":"OK","fpxrequest":{}}`, true},
		{200, `{"status":"OK","fpxrequest":[]}`, true},
		{200, `{"status":"OK","fpxrequest":{"refno":"X"}}`, false},
		{200, `{"status":"ERROR"}`, false},
		{200, `not json`, false},
		{400, `{"status":"NOT_FOUND"}`, false},
		{500, ``, false},
	} {
		got, saw := judgeMissingLookup(tt.status, []byte(tt.body))
		require.Equal(t, tt.notFound, got, "%d %s: %s", tt.status, tt.body, saw)
		require.NotEmpty(t, saw)
	}
}

// FuzzJudgeMissingLookup: any answer is judged without panic, and what it
// calls not found is what the SDK's lookup calls not found.
func FuzzJudgeMissingLookup(f *testing.F) {
	f.Add(404, []byte(`{"status":"NOT_FOUND"}`))
	f.Add(200, []byte(`{"status":"OK","fpxrequest":null}`))
	f.Add(200, []byte(`{"status":"OK","fpxrequest":{"a":1}}`))
	f.Add(200, []byte(`{"status":"OK","fpxrequest": [ ] }`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		notFound, saw := judgeMissingLookup(status, body)
		require.NotEmpty(t, saw)
		if notFound {
			require.Contains(t, []int{200, 404}, status)
		}
	})
}

// answerText keeps a service's answer on one printable line, cut.
func TestAnswerText(t *testing.T) {
	require.Equal(t, "HTTP 500", answerText(&probeaccess.Answer{Status: 500}))
	got := answerText(&probeaccess.Answer{Status: 502, Body: []byte("bad\r\n\x1b[31m gateway " + strings.Repeat("x", 300))})
	require.NotContains(t, got, "\n")
	require.NotContains(t, got, "\x1b")
	require.True(t, strings.HasPrefix(got, "HTTP 502 bad [31m gateway"), got)
	require.LessOrEqual(t, len(got), 180)
}
