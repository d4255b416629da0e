package paygate

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate/zakat"
)

// How a refusal's body is read (docs/assumptions.md A-webhook-duplicates,
// A-webhook-refusals): each reading the sandbox can play, and bodies that
// must name nothing.
func TestReadRefusal(t *testing.T) {
	nos := []string{"ZK-1", "ZK-2", "ZK-3"}
	tests := []struct {
		name      string
		body      string
		duplicate bool
		stored    []int
		bad       map[int][]zakat.FieldError
	}{
		{name: "sandbox duplicates list", body: `{"status":"ERROR","message":"orderno already stored","duplicates":["ZK-3","ZK-9"]}`, duplicate: true, stored: []int{2}},
		{name: "pointer at orderno, uniqueness rule", body: `{"errors":[{"pointer":"/transactions/1/orderno","rule":"must be unique","value":"ZK-2"}]}`, duplicate: true, stored: []int{1}},
		{name: "plain text naming ordernos", body: "orderno already stored: ZK-1, ZK-3\n", duplicate: true, stored: []int{0, 2}},
		{name: "duplicate naming none", body: `{"status":"ERROR","message":"Duplicate orderno"}`, duplicate: true},
		{name: "problem detail", body: `{"title":"order_no has already been taken","detail":"ZK-2"}`, duplicate: true},
		{name: "pointer at a field", body: `{"status":"ERROR","errors":[{"pointer":"/transactions/2/amount","rule":"exceeds the limit","value":"9e9"}]}`,
			bad: map[int][]zakat.FieldError{2: {{Field: "amount", Rule: "exceeds the limit", Value: "9e9"}}}},
		{name: "field and message keys", body: `{"problems":[{"field":"/transactions/0/data/zakat_rate","message":"not a rate"}]}`,
			bad: map[int][]zakat.FieldError{0: {{Field: "data/zakat_rate", Rule: "not a rate"}}}},
		{name: "rule with a line break", body: `{"errors":[{"pointer":"/transactions/0/name","rule":"bad\nname"}]}`,
			bad: map[int][]zakat.FieldError{0: {{Field: "name", Rule: "bad name"}}}},
		{name: "rule and value with control characters", body: `{"errors":[{"pointer":"/transactions/1/name","rule":"bad\u001b[2J\tname\u2028\u0085end","value":"a\u0000b\u2029c"}]}`,
			bad: map[int][]zakat.FieldError{1: {{Field: "name", Rule: "bad [2J name  end", Value: "a b c"}}}},
		{name: "pointer past the request", body: `{"errors":[{"pointer":"/transactions/3/amount","rule":"x"}]}`},
		{name: "negative pointer", body: `{"errors":[{"pointer":"/transactions/-1/amount","rule":"x"}]}`},
		{name: "padded index", body: `{"errors":[{"pointer":"/transactions/01/amount","rule":"x"}]}`},
		{name: "pointer outside transactions", body: `{"errors":[{"pointer":"/agency","rule":"x"}]}`},
		{name: "orderno pointer for another rule", body: `{"errors":[{"pointer":"/transactions/0/orderno","rule":"too long"}]}`,
			bad: map[int][]zakat.FieldError{0: {{Field: "orderno", Rule: "too long"}}}},
		{name: "unique in the batch: not stored, a rule of the request", body: `{"errors":[{"pointer":"/transactions/1/orderno","rule":"must be unique in the batch (also at /transactions/0/orderno)"}]}`,
			bad: map[int][]zakat.FieldError{1: {{Field: "orderno", Rule: "must be unique in the batch (also at /transactions/0/orderno)"}}}},
		{name: "text: duplicate within the batch", body: "duplicate orderno ZK-1 in the batch"},
		{name: "text without orderno", body: "already exists"},
		{name: "HTML page", body: "<html><body>Bad Request</body></html>"},
		{name: "empty", body: ""},
		{name: "JSON array", body: `["ZK-1"]`},
		{name: "duplicates not strings", body: `{"duplicates":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := readRefusal([]byte(tt.body), nos)
			require.Equal(t, tt.duplicate, r.duplicate)
			require.Equal(t, tt.stored, r.stored)
			require.Equal(t, tt.bad, r.bad)
		})
	}
}

// A hostile body never names a transaction the request does not hold,
// never names one twice as stored, and every text it gives is one valid
// line of bounded length.
func FuzzReadRefusal(f *testing.F) {
	for _, seed := range []string{
		`{"status":"ERROR","message":"orderno already stored","duplicates":["A","B"]}`,
		`{"status":"ERROR","errors":[{"pointer":"/transactions/1/amount","rule":"r","value":"v"}]}`,
		`{"errors":[{"pointer":"/transactions/0/orderno","rule":"must be unique"}]}`,
		"orderno already stored: A, B", `{"errors":[{"pointer":"/transactions/9999999999999999999/x"}]}`,
		"\xff\xfe orderno duplicate \u2028",
		`{"errors":[{"pointer":"/transactions/0/amount\u001b","rule":"r\t\u0085\u2029","value":"v\u0007"}]}`,
	} {
		f.Add([]byte(seed), 3)
	}
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		n = min(max(n, 0), 50)
		nos := make([]string, n)
		for i := range nos {
			nos[i] = string(rune('A' + i))
		}
		r := readRefusal(body, nos)
		require.True(t, len(r.stored) == 0 || r.duplicate, "named stored only in a duplicate refusal")
		seen := map[int]bool{}
		for _, i := range r.stored {
			require.True(t, 0 <= i && i < n, "stored %d of %d", i, n)
			require.False(t, seen[i], "stored %d twice", i)
			seen[i] = true
		}
		for i, problems := range r.bad {
			require.True(t, 0 <= i && i < n, "bad %d of %d", i, n)
			for _, p := range problems {
				for _, s := range []string{p.Field, p.Rule, p.Value} {
					require.True(t, utf8.ValidString(s))
					require.LessOrEqual(t, len(s), maxRefusalText)
					require.False(t, strings.ContainsFunc(s, unicode.IsControl) || strings.ContainsAny(s, "\u2028\u2029"), "%q", s)
				}
			}
		}
	})
}

// Whatever a refusal's body holds, and whether the service refuses once or
// every time, a send gives every transaction one outcome, counts it once,
// and makes a bounded number of requests (at most 2n-1 for n
// transactions: each split halves a request).
func FuzzSendRefusal(f *testing.F) {
	f.Add(uint8(0), []byte(`{"errors":[{"pointer":"/transactions/3/amount","rule":"r"}]}`), uint8(10))
	f.Add(uint8(1), []byte(`{"status":"ERROR","message":"orderno already stored","duplicates":["ORD-000002"]}`), uint8(5))
	f.Add(uint8(2+4), []byte(`not json`), uint8(16))
	f.Add(uint8(2), []byte("orderno already stored: ORD-000000, ORD-000001"), uint8(3))
	f.Fuzz(func(t *testing.T, mode uint8, body []byte, size uint8) {
		n := int(size%20) + 1
		status := [...]int{400, 409, 422}[mode%3]
		always := mode&4 != 0
		s, mt, _ := newTestSender(t, WithBatchSize(20), WithRetry(RetryPolicy{MaxAttempts: 1}))
		calls := 0
		mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
			calls++
			if calls == 1 || always {
				return httpmock.NewBytesResponse(status, body), nil
			}
			return httpmock.NewStringResponse(200, ""), nil
		})
		txs := validTxs(n)
		report, _ := s.Send(context.Background(), txs)
		require.Equal(t, n, report.Total())
		require.LessOrEqual(t, calls, 2*n-1)
		count := 0
		for i, o := range report.Outcomes() {
			require.Equal(t, i, o.Index)
			require.Equal(t, txs[i].OrderNo, o.OrderNo)
			require.Equal(t, o.Status == zakat.SendAccepted, o.Err == nil)
			if o.Err != nil {
				require.NotContains(t, o.Err.Error(), testPassword)
			}
			count++
		}
		require.Equal(t, n, count)
		require.Equal(t, n, len(report.Accepted)+len(report.Rejected)+len(report.Unconfirmed)+len(report.NotSent))
		require.Equal(t, calls, report.Attempts())
	})
}

// A refusal's body is kept cut at maxErrorBody bytes (APIError.Body), and
// a cut JSON body is read as text: its last word may be the start of an
// orderno (INV-1 of INV-10), which must never name the orderno it
// happens to spell as stored.
func TestReadRefusalCutBodyNamesNoCutWord(t *testing.T) {
	nos := []string{"INV-1", "INV-10", "INV-2"}
	tests := []struct {
		name   string
		tail   string // after the padding, cut at maxErrorBody
		stored []int
	}{
		{name: "cut inside a listed orderno", tail: `","duplicates":["INV-2","INV-10"]}`, stored: []int{2}},
		{name: "cut inside a pointer's value", tail: `","errors":[{"pointer":"/transactions/2/orderno","rule":"must be unique","value":"INV-2"},{"pointer":"/transactions/1/orderno","rule":"must be unique","value":"INV-10"}]}`, stored: []int{2}},
		{name: "cut after a whole word and its quote", tail: `","duplicates":["INV-2","INV-1"]}`, stored: []int{0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := `{"status":"ERROR","message":"orderno already stored","note":"`
			cut := strings.Index(tt.tail, `INV-1`) + len(`INV-1`) // the body is cut right after INV-1
			if !strings.Contains(tt.tail, `INV-10`) {
				cut++ // ...and its closing quote
			}
			pad := strings.Repeat("x", maxErrorBody-len(head)-cut)
			body := []byte(head + pad + tt.tail)
			require.Greater(t, len(body), maxErrorBody)
			r := readRefusal(body[:maxErrorBody], nos)
			require.True(t, r.duplicate)
			require.ElementsMatch(t, tt.stored, r.stored)
		})
	}
}

// Resend, answered 409 with a long list cut inside INV-10: INV-1, never
// named by the service, is sent again, never reported already stored.
func TestResendCutRefusalNeverStoresAPrefix(t *testing.T) {
	s, mt, _ := newTestSender(t, WithRetry(RetryPolicy{MaxAttempts: 1}))
	txs := validTxs(2)
	txs[0].OrderNo, txs[1].OrderNo = "INV-1", "INV-10"
	head := `{"status":"ERROR","message":"orderno already stored","note":"`
	tail := `","duplicates":["INV-10"]}`
	body := head + strings.Repeat("x", maxErrorBody-len(head)-len(`","duplicates":["INV-1`)) + tail
	var posted [][]string
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		posted = append(posted, decodeBody(t, req))
		if len(posted) == 1 {
			return httpmock.NewStringResponse(http.StatusConflict, body), nil
		}
		return httpmock.NewStringResponse(http.StatusOK, `{"status":"OK"}`), nil
	})
	report, err := s.Resend(context.Background(), txs)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"INV-1", "INV-10"}, report.Accepted)
	out := report.Outcomes()
	require.False(t, out[0].AlreadyStored, "INV-1 was never named stored")
	require.Contains(t, posted[1:], []string{"INV-1"}, "INV-1 sent again on its own")
}

// Transactions that may be stored already (Resend, or a request whose
// earlier attempt's outcome was unknown) and that a stopped send never
// sent again stay unconfirmed, never "not sent": a 401 or a redirect
// stopping a Resend before its later requests, and the end of the context
// while a refused request is being split.
func TestStoppedSendKeepsSentBeforeUnconfirmed(t *testing.T) {
	type answer func(cancel context.CancelFunc) (*http.Response, error)
	status := func(code int, body string) answer {
		return func(context.CancelFunc) (*http.Response, error) {
			resp := httpmock.NewStringResponse(code, body)
			if code/100 == 3 {
				resp.Header.Set("Location", "https://elsewhere.example/")
			}
			return resp, nil
		}
	}
	cancelled := func(cancel context.CancelFunc) (*http.Response, error) {
		cancel() // the caller gives up while this request is on its way
		return nil, context.Canceled
	}
	unnamed := status(http.StatusBadRequest, `{"status":"ERROR","message":"batch refused"}`)
	tests := []struct {
		name    string
		resend  bool
		batch   int
		answers []answer // in order; the last repeats
		stopped string   // what the requests not made say stopped the send
	}{
		{name: "Resend stopped by a 401", resend: true, batch: 1, answers: []answer{status(http.StatusUnauthorized, "no")}, stopped: "HTTP 401"},
		{name: "Resend stopped by a redirect", resend: true, batch: 1, answers: []answer{status(http.StatusFound, "")}, stopped: "HTTP 302"},
		{name: "Resend cancelled during a split", resend: true, batch: 3, answers: []answer{unnamed, cancelled}, stopped: "context canceled"},
		{name: "Send after a 5xx, cancelled during a split", batch: 3, answers: []answer{status(http.StatusInternalServerError, "oops"), unnamed, cancelled}, stopped: "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t, WithBatchSize(tt.batch))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
				a := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				return a(cancel)
			})
			send := s.Send
			if tt.resend {
				send = s.Resend
			}
			report, err := send(ctx, validTxs(3))
			require.Error(t, err)
			require.Empty(t, report.NotSent, "sent before: they may be stored")
			require.Len(t, report.Unconfirmed, 3)
			last := report.Requests[len(report.Requests)-1]
			require.Zero(t, last.Attempts, "a request the stopped send never made")
			require.Equal(t, zakat.SendUnconfirmed, last.Status)
			require.ErrorContains(t, last.Err, "sent before with an unknown outcome, and the send stopped before they were sent again")
			require.ErrorContains(t, last.Err, tt.stopped)
		})
	}
}

// A Resend that never reaches the service (the dial fails, or the TLS
// handshake) proves nothing of the earlier send: its transactions stay
// unconfirmed, never "not sent", which would say no byte of them ever
// reached the service.
func TestResendNotReachingTheServiceStaysUnconfirmed(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{name: "dial refused", err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
		{name: "TLS handshake refused", err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t, WithBatchSize(2), WithRetry(RetryPolicy{MaxAttempts: 1}))
			mt.RegisterResponder(http.MethodPost, testWebhookURL, httpmock.NewErrorResponder(tt.err))
			report, err := s.Resend(context.Background(), validTxs(3))
			require.Error(t, err)
			require.Empty(t, report.NotSent)
			require.Len(t, report.Unconfirmed, 3)
			require.ErrorContains(t, report.Requests[0].Err, "unconfirmed: ")
			require.ErrorContains(t, report.Requests[0].Err, "may have stored them, and this one was not sent")
		})
	}
}
