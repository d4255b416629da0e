package paygate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate-go/paygate/internal/paths"

	"github.com/jarcoal/httpmock"
	"github.com/paygate-go/paygate/internal/testbound"
	"github.com/paygate-go/paygate/zakat"
	"github.com/stretchr/testify/require"
)

const (
	testWebhookBase = "https://webhook.example"
	testWebhookURL  = testWebhookBase + paths.Webhook
	testPassword    = "s3cr3t-pa55w0rd-value"
)

// newTestSender returns a sender on an httpmock transport with fast retries
// and a debug log captured in logs.
func newTestSender(t *testing.T, opts ...SenderOption) (*WebhookSender, testbound.Mock, *bytes.Buffer) {
	t.Helper()
	mt := testbound.NewMock(t, maxFakeRequests, "a sender's retries end: at most "+strconv.Itoa(maxFakeRequests)+" requests in one test")
	logs := &bytes.Buffer{}
	base := []SenderOption{
		WithHTTPClient(&http.Client{Transport: mt}),
		WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
	s, err := NewWebhookSender(testWebhookBase, testPassword, append(base, opts...)...)
	require.NoError(t, err)
	return s, mt, logs
}

// validTx is a transaction that passes every rule; tests change one thing.
func validTx(i int) zakat.Transaction {
	return zakat.Transaction{
		Agency:  zakat.AgencyLZS,
		OrderNo: fmt.Sprintf("ORD-%06d", i),
		Amount:  1050,
		Name:    "Ahmad bin Ali",
		Email:   "ahmad@example.com",
		Time:    time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("", 8*3600)),
		Status:  zakat.StatusSuccess,
		Data: zakat.Data{
			Email: "ahmad@example.com", Name: "Ahmad bin Ali", ICNo: "900101145678",
			State: zakat.Selangor, Type: zakat.ZakatFitrah, Year: "2026", Phone: "0123456789",
			Address: "1 Jalan Satu", Postcode: "40000", City: "Shah Alam", Amount: "10.50",
			Rate: "2.625", Dependants: "4",
		},
	}
}

func validTxs(n int) []zakat.Transaction {
	txs := make([]zakat.Transaction, n)
	for i := range txs {
		txs[i] = validTx(i)
	}
	return txs
}

// decodeBody reads the ordernos a request carried.
func decodeBody(t *testing.T, req *http.Request) []string {
	t.Helper()
	raw, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	batch, err := zakat.Validator{}.ValidateBatchJSON(raw)
	require.NoError(t, err, "the sender posts a valid body")
	var ids []string
	for _, tx := range batch.Transactions {
		ids = append(ids, tx.OrderNo)
	}
	return ids
}

func TestWebhookSenderHeadersBodyAndChunks(t *testing.T) {
	s, mt, _ := newTestSender(t, WithBatchSize(100))
	var mu sync.Mutex
	var got [][]string
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		require.Equal(t, "application/json", req.Header.Get("Content-Type"))
		require.Equal(t, testPassword, req.Header.Get("X-API-Password"))
		require.Equal(t, "paygate-go/"+Version, req.Header.Get("User-Agent"))
		ids := decodeBody(t, req)
		mu.Lock()
		got = append(got, ids)
		mu.Unlock()
		return httpmock.NewStringResponse(200, `{"status":"ok"}`), nil
	})
	txs := validTxs(250)
	report, err := s.Send(context.Background(), txs)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Len(t, got[0], 100)
	require.Len(t, got[1], 100)
	require.Len(t, got[2], 50)
	require.Equal(t, "ORD-000200", got[2][0])
	require.Len(t, report.Requests, 3)
	require.Equal(t, got[1], report.Requests[1].OrderNos)
	require.Len(t, report.Accepted, 250)
	require.Empty(t, report.Rejected)
	require.Empty(t, report.Unconfirmed)
	for _, r := range report.Requests {
		require.Equal(t, 200, r.StatusCode)
		require.Equal(t, 1, r.Attempts)
	}
}

// The batch size the caller sets, raised past DefaultBatchSize or lowered,
// is the one every request is cut to, the last one taking the rest; the
// smallest, 1, sends one transaction a request.
func TestWebhookSenderBatchSizeInForce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []SenderOption
		txs   int
		sizes []int
	}{
		{name: "default", txs: 250, sizes: []int{100, 100, 50}},
		{name: "raised past the default", opts: []SenderOption{WithBatchSize(150)}, txs: 250, sizes: []int{150, 100}},
		{name: "raised past the batch", opts: []SenderOption{WithBatchSize(1000)}, txs: 250, sizes: []int{250}},
		{name: "lowered", opts: []SenderOption{WithBatchSize(7)}, txs: 20, sizes: []int{7, 7, 6}},
		{name: "one", opts: []SenderOption{WithBatchSize(1)}, txs: 3, sizes: []int{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t, tc.opts...)
			var mu sync.Mutex
			var sizes []int
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
				n := len(decodeBody(t, req))
				mu.Lock()
				sizes = append(sizes, n)
				mu.Unlock()
				return httpmock.NewStringResponse(200, ""), nil
			})
			report, err := s.Send(context.Background(), validTxs(tc.txs))
			require.NoError(t, err)
			require.Equal(t, tc.sizes, sizes)
			require.Len(t, report.Accepted, tc.txs)
		})
	}
}

// Invalid transactions are reported with their problems and never sent;
// the valid ones go out.
func TestWebhookSenderSendsTheValidOnes(t *testing.T) {
	s, mt, _ := newTestSender(t)
	var sent []string
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		sent = append(sent, decodeBody(t, req)...)
		return httpmock.NewStringResponse(200, ""), nil
	})
	txs := validTxs(5)
	txs[2].Data.ICNo = "123"
	txs[3].OrderNo = txs[0].OrderNo // a repeat: the first is sent, the repeat is not
	txs[4].Amount = -1
	report, err := s.Send(context.Background(), txs)
	var ve *zakat.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 3)
	require.Equal(t, []string{"ORD-000000", "ORD-000001"}, sent, "only valid transactions reach the network")
	require.Equal(t, sent, report.Accepted)
	require.Len(t, report.Invalid, 3)
	for k, want := range []int{2, 3, 4} {
		it := report.Invalid[k]
		require.Equal(t, want, it.Index)
		require.Equal(t, txs[want].OrderNo, it.OrderNo)
		require.NotEmpty(t, it.Problems)
		for _, p := range it.Problems {
			require.Contains(t, p.Field, fmt.Sprintf("/transactions/%d/", want))
		}
	}
	require.Empty(t, report.Rejected)
	require.Empty(t, report.Unconfirmed)

	// All invalid: nothing is sent.
	sent = nil
	report, err = s.Send(context.Background(), txs[2:3])
	require.Error(t, err)
	require.Empty(t, sent)
	require.Len(t, report.Invalid, 1)
	require.Empty(t, report.Requests)

	report, err = s.Send(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, report.Requests)
}

func TestWebhookSenderRetryMatrix(t *testing.T) {
	netErr := errors.New("connection reset by peer")
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name      string
		answers   []any // int status or error, one per attempt; the last repeats
		retryHdr  string
		attempts  int
		accepted  bool
		rejected  bool
		wantIs    error
		wantInErr string
		// waitAsked: a Retry-After past MaxDelay, reported with its value
		waitAsked time.Duration
	}{
		{name: "200", answers: []any{200}, attempts: 1, accepted: true},
		{name: "202", answers: []any{202}, attempts: 1, accepted: true},
		{name: "500 then 200", answers: []any{500, 200}, attempts: 2, accepted: true},
		{name: "502 503 504 then 200", answers: []any{502, 503, 504, 200}, attempts: 4, accepted: true},
		{name: "429 with Retry-After then 200", answers: []any{429, 200}, retryHdr: "0", attempts: 2, accepted: true},
		{name: "network error then 200", answers: []any{netErr, 200}, attempts: 2, accepted: true},
		{name: "500 always", answers: []any{500}, attempts: 4, wantInErr: "HTTP 500"},
		{name: "network error always", answers: []any{netErr}, attempts: 4, wantInErr: "connection reset"},
		{name: "400 not retried", answers: []any{400}, attempts: 1, rejected: true, wantInErr: "bad field"},
		{name: "422 not retried", answers: []any{422}, attempts: 1, rejected: true, wantInErr: "bad field"},
		{name: "401", answers: []any{401}, attempts: 1, rejected: true, wantIs: ErrUnauthorized},
		{name: "403", answers: []any{403}, attempts: 1, rejected: true, wantIs: ErrUnauthorized},
		{name: "Retry-After beyond the cap stops", answers: []any{503, 200}, retryHdr: "3600", attempts: 1, waitAsked: time.Hour,
			wantInErr: "; the service asked to retry after 1h0m0s (Retry-After), longer than the longest wait allowed (RetryPolicy.MaxDelay 50ms)"},
		{name: "Retry-After of a year on 429", answers: []any{429, 200}, retryHdr: "31536000", attempts: 1, waitAsked: 365 * 24 * time.Hour,
			wantInErr: "unconfirmed: the service asked to retry after 8760h0m0s (Retry-After), longer than the sender waits (RetryPolicy.MaxDelay 50ms)"},
		{name: "5xx to the last attempt names no wait", answers: []any{500, 503}, attempts: 4, wantInErr: "retries exhausted"},
		// Once an attempt's outcome is unknown, a later 4xx proves nothing.
		// A duplicate refusal (409) after one proves it stored
		// (A-webhook-duplicates); a 422 naming no rule of its own proves
		// nothing (A-webhook-refusals).
		{name: "500 then 409", answers: []any{500, 409}, attempts: 2, accepted: true},
		{name: "500 then 422", answers: []any{500, 422}, attempts: 2, wantInErr: "cannot prove they were not stored"},
		{name: "lost answer then 422", answers: []any{netErr, 422}, attempts: 2, wantInErr: "cannot prove"},
		{name: "409 at once", answers: []any{409}, attempts: 1, wantInErr: "already stored on its first send"},
		{name: "failed dial then 422", answers: []any{dialErr, 422}, attempts: 2, rejected: true, wantInErr: "bad field"},
		{name: "429 then 400", answers: []any{429, 400}, retryHdr: "0", attempts: 2, rejected: true, wantInErr: "bad field"},
		{name: "302 is not followed", answers: []any{302}, attempts: 1, wantIs: ErrRedirect, wantInErr: "not followed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t)
			calls := 0
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
				a := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				if err, ok := a.(error); ok {
					return nil, err
				}
				resp := httpmock.NewStringResponse(a.(int), `{"error":"bad field orderno"}`)
				if a.(int)/100 == 3 {
					resp.Header.Set("Location", "http://elsewhere.example/steal?x=1")
				}
				if tt.retryHdr != "" {
					resp.Header.Set("Retry-After", tt.retryHdr)
				}
				return resp, nil
			})
			// One transaction: a refusal of a request of several is split
			// (TestSendRefusalSplits).
			report, err := s.Send(context.Background(), validTxs(1))
			require.Equal(t, tt.attempts, calls)
			require.Len(t, report.Requests, 1)
			require.Equal(t, tt.attempts, report.Requests[0].Attempts)
			require.Equal(t, tt.waitAsked, report.Requests[0].RetryAfter)
			if tt.accepted {
				require.NoError(t, err)
				require.Len(t, report.Accepted, 1)
				return
			}
			require.Error(t, err)
			require.Empty(t, report.Accepted)
			if tt.rejected {
				require.Len(t, report.Rejected, 1)
				var apiErr *APIError
				require.ErrorAs(t, err, &apiErr)
				require.Contains(t, string(apiErr.Body), "bad field")
			} else {
				require.Len(t, report.Unconfirmed, 1)
			}
			if tt.wantIs != nil {
				require.ErrorIs(t, err, tt.wantIs)
			}
			require.Contains(t, err.Error(), tt.wantInErr)
		})
	}
}

// Retry-After is honoured: the wait before the retry is at least what the
// service asked for (on synctest's clock: no real wait).
func TestWebhookSenderHonoursRetryAfter(t *testing.T) { bubble(t, webhookSenderHonoursRetryAfter) }

func webhookSenderHonoursRetryAfter(t *testing.T) {
	s, mt, _ := newTestSender(t, WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Second}))
	var times []time.Time
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
		times = append(times, time.Now())
		if len(times) == 1 {
			resp := httpmock.NewStringResponse(429, "")
			resp.Header.Set("Retry-After", "1")
			return resp, nil
		}
		return httpmock.NewStringResponse(200, ""), nil
	})
	_, err := s.Send(context.Background(), validTxs(1))
	require.NoError(t, err)
	require.Len(t, times, 2)
	require.GreaterOrEqual(t, times[1].Sub(times[0]), time.Second)
}

// 401 stops the send: later requests are not made and their transactions are
// reported not sent.
func TestWebhookSenderStopsOnUnauthorized(t *testing.T) {
	s, mt, _ := newTestSender(t, WithBatchSize(2))
	mt.RegisterResponder(http.MethodPost, testWebhookURL, httpmock.NewStringResponder(401, "wrong password"))
	report, err := s.Send(context.Background(), validTxs(5))
	require.ErrorIs(t, err, ErrUnauthorized)
	require.Equal(t, 1, mt.GetTotalCallCount())
	require.Len(t, report.Requests, 3)
	require.Equal(t, []string{"ORD-000000", "ORD-000001"}, report.Rejected)
	require.Equal(t, []string{"ORD-000002", "ORD-000003", "ORD-000004"}, report.NotSent)
	require.Empty(t, report.Unconfirmed)
	require.Zero(t, report.Requests[2].Attempts)
	require.ErrorIs(t, report.Requests[2].Err, ErrUnauthorized, "a request not made says what stopped the send")
}

// A transaction with a string that is not UTF-8 never reaches the network
// (json.Marshal would send U+FFFD in place of its bad bytes: two ordernos
// as one); the others go out byte for byte as given.
func TestWebhookSenderNeverSendsTextNotUTF8(t *testing.T) {
	s, mt, _ := newTestSender(t)
	var bodies [][]byte
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		raw, err := io.ReadAll(req.Body)
		require.NoError(t, err)
		bodies = append(bodies, raw)
		return httpmock.NewStringResponse(200, ""), nil
	})
	txs := validTxs(4)
	txs[0].OrderNo, txs[1].OrderNo = "INV-\xff1", "INV-\xfe1"
	txs[2].Data.Name = "Ahmad \xc0\xaf"

	report, err := s.Send(context.Background(), txs[:3])
	require.Error(t, err)
	require.Zero(t, mt.GetTotalCallCount(), "nothing is sent")
	require.Empty(t, report.Requests)
	require.Len(t, report.Invalid, 3)
	for k, it := range report.Invalid {
		require.Equal(t, k, it.Index)
		require.Len(t, it.Problems, 1)
		require.Contains(t, it.Problems[0].Rule, "must be valid UTF-8")
	}
	require.Equal(t, "/transactions/2/data/zakat_name", report.Invalid[2].Problems[0].Field)

	txs[3].Name = "Siti \xef\xbf\xbd é" // U+FFFD sent as given is UTF-8
	report, err = s.Send(context.Background(), txs)
	require.Error(t, err)
	require.Len(t, report.Invalid, 3)
	require.Equal(t, []string{"ORD-000003"}, report.Accepted)
	require.Len(t, bodies, 1)
	batch, err := zakat.Validator{}.ValidateBatchJSON(bodies[0])
	require.NoError(t, err)
	require.Equal(t, []zakat.Transaction{txs[3]}, normalTimes(batch.Transactions, txs[3].Time.Location()))
}

// normalTimes puts the times of txs in loc, to compare them with what was
// sent.
func normalTimes(txs []zakat.Transaction, loc *time.Location) []zakat.Transaction {
	for i := range txs {
		txs[i].Time = txs[i].Time.In(loc)
	}
	return txs
}

// A time json.Marshal cannot encode (a year past 9999) makes its
// transaction invalid, with its problem, never "not sent" (which would be
// safe to send again, and fail the same way each time) and never holding
// back the others of its request.
func TestWebhookSenderTimeThatCannotBeEncodedIsInvalid(t *testing.T) {
	s, mt, _ := newTestSender(t)
	var sent []string
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		sent = append(sent, decodeBody(t, req)...)
		return httpmock.NewStringResponse(200, ""), nil
	})
	txs := validTxs(3)
	txs[1].Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	report, err := s.Send(context.Background(), txs)
	require.Error(t, err)
	require.Equal(t, []string{"ORD-000000", "ORD-000002"}, sent)
	require.Equal(t, sent, report.Accepted)
	require.Empty(t, report.NotSent)
	require.Equal(t, []zakat.InvalidTransaction{{Index: 1, OrderNo: "ORD-000001", Problems: []zakat.FieldError{
		{Field: "/transactions/1/time", Rule: "must be ISO 8601 with a timezone offset (Z, +08:00 or +0800), e.g. 2026-11-22T10:30:00+08:00", Value: "10000-01-01 00:00:00 +0000 UTC"},
	}}}, report.Invalid)
}

// After the context ends nothing more is sent, and the wait for a retry ends
// at once.
func TestWebhookSenderCancel(t *testing.T) {
	s, mt, _ := newTestSender(t, WithBatchSize(1), WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
		time.AfterFunc(20*time.Millisecond, cancel)
		return httpmock.NewStringResponse(503, ""), nil
	})
	start := time.Now()
	report, err := s.Send(ctx, validTxs(3))
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), 10*time.Second, "the hour-long backoff was cut short")
	require.Equal(t, 1, mt.GetTotalCallCount())
	require.Equal(t, []string{"ORD-000000"}, report.Unconfirmed, "the 503 may have stored it")
	require.Equal(t, []string{"ORD-000001", "ORD-000002"}, report.NotSent)
}

// A request nothing of which reached the service says why it was not
// sent: the context ended before it, or the connection could not be made.
func TestWebhookSenderNotSentSaysWhy(t *testing.T) {
	t.Run("the context ended", func(t *testing.T) {
		s, mt, _ := newTestSender(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		report, err := s.Send(ctx, validTxs(2))
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, mt.GetTotalCallCount())
		require.Equal(t, []string{"ORD-000000", "ORD-000001"}, report.NotSent)
		require.ErrorContains(t, report.Requests[0].Err, "not sent: the context ended before the request reached the service")
	})
	t.Run("no connection", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close() // nothing listens there now
		s, err := NewWebhookSender(srv.URL, testPassword, WithRetry(RetryPolicy{MaxAttempts: 1}))
		require.NoError(t, err)
		report, err := s.Send(context.Background(), validTxs(2))
		require.Error(t, err)
		require.Equal(t, []string{"ORD-000000", "ORD-000001"}, report.NotSent)
		require.ErrorContains(t, report.Requests[0].Err, "not sent: the connection could not be made")
	})
}

// A server that fails half of all requests transiently (some before storing,
// some after storing but before answering) still ends with every transaction
// stored exactly once, counted by orderno on the server side.
func TestWebhookSenderFlakyServerLosesNothing(t *testing.T) {
	s, mt, _ := newTestSender(t, WithBatchSize(10), WithRetry(RetryPolicy{MaxAttempts: 30, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}))
	rng := rand.New(rand.NewPCG(1, 2))
	stored := map[string]int{}
	var mu sync.Mutex
	failures := 0
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
		ids := decodeBody(t, req)
		mu.Lock()
		defer mu.Unlock()
		switch r := rng.IntN(4); r {
		case 0: // fails before storing
			failures++
			return httpmock.NewStringResponse(503, "busy"), nil
		case 1: // stores, then the answer is lost
			failures++
			for _, id := range ids {
				if _, dup := stored[id]; !dup {
					stored[id] = 1
				}
			}
			return nil, errors.New("connection reset by peer")
		}
		for _, id := range ids {
			if _, dup := stored[id]; dup {
				continue // orderno is unique: a repeat is not stored twice
			}
			stored[id] = 1
		}
		return httpmock.NewStringResponse(200, "ok"), nil
	})
	txs := validTxs(500)
	report, err := s.Send(context.Background(), txs)
	require.NoError(t, err)
	require.Len(t, report.Accepted, 500)
	require.Len(t, stored, 500)
	for _, tx := range txs {
		require.Equal(t, 1, stored[tx.OrderNo], tx.OrderNo)
	}
	require.Greater(t, failures, 20, "the server did fail often")
	t.Logf("%d requests, %d transient failures", mt.GetTotalCallCount(), failures)
}

// The password never appears in an error, a log line or a %v of the sender.
func TestWebhookSenderNeverLeaksPassword(t *testing.T) {
	s, mt, logs := newTestSender(t)
	mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
		return nil, errors.New("dial tcp: connection refused")
	})
	_, err := s.Send(context.Background(), validTxs(1))
	require.Error(t, err)
	mt.RegisterResponder(http.MethodPost, testWebhookURL, httpmock.NewStringResponder(403, "denied"))
	_, err2 := s.Send(context.Background(), validTxs(1))
	require.Error(t, err2)
	texts := []string{err.Error(), err2.Error(), logs.String(),
		fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%+v", *s)}
	for _, txt := range texts {
		require.NotContains(t, txt, testPassword)
	}
	require.Contains(t, logs.String(), "path=/api/bank/webhook")
	require.Contains(t, logs.String(), "attempt=4")

	_, err = NewWebhookSender(testWebhookBase, "zq7\nx9k")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "zq7")
}

func TestNewWebhookSenderURLs(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "https://webhook.example", want: "https://webhook.example/api/bank/webhook"},
		{in: "https://webhook.example/", want: "https://webhook.example/api/bank/webhook"},
		{in: "https://webhook.example/api/bank/webhook", want: "https://webhook.example/api/bank/webhook"},
		{in: "https://webhook.example/prefix", want: "https://webhook.example/prefix"},
		{in: "https://pay.tulus.my/api/adb/webhook", want: "https://pay.tulus.my/api/adb/webhook"},
		{in: "https://pay.tulus.my/api/adb/webhook/", want: "https://pay.tulus.my/api/adb/webhook/"},
		{in: "https://pay.tulus.my/api/a%2Fb/webhook", want: "https://pay.tulus.my/api/a%2Fb/webhook"},
		{in: "http://127.0.0.1:8080/api/adb/webhook", want: "http://127.0.0.1:8080/api/adb/webhook"},
		{in: "https://pay.tulus.my/api/adb/webhook?x=1", wantErr: "no query or fragment"},
		{in: "https://pay.tulus.my/api/adb/webhook?", wantErr: "no query or fragment"},
		{in: "https://pay.tulus.my/api/adb/webhook#f", wantErr: "no query or fragment"},
		{in: "https://pay.tulus.my?token=zq7secret", wantErr: "no query or fragment"},
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080/api/bank/webhook"},
		{in: "http://localhost:8080", want: "http://localhost:8080/api/bank/webhook"},
		{in: "http://[::1]:8080", want: "http://[::1]:8080/api/bank/webhook"},
		{in: "http://webhook.example", wantErr: "plain http"},
		{in: "ftp://webhook.example", wantErr: "absolute http(s)"},
		{in: "/api/bank/webhook", wantErr: "absolute http(s)"},
	}
	for _, tt := range tests {
		s, err := NewWebhookSender(tt.in, "pw")
		if tt.wantErr != "" {
			require.ErrorContains(t, err, tt.wantErr, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, s.endpoint)
	}
	_, err := NewWebhookSender("https://pay.tulus.my?token=zq7secret", "pw")
	require.NotContains(t, err.Error(), "zq7secret", "a query's secret is not repeated")
	_, err = NewWebhookSender("https://w.example", "")
	require.Error(t, err)
	_, err = NewWebhookSender("https://w.example", "pw", WithBatchSize(0))
	require.Error(t, err)
	_, err = NewWebhookSender("https://w.example", "pw", WithHTTPClient(nil))
	require.Error(t, err)
}

func TestNewWebhookSenderFromEnv(t *testing.T) {
	t.Setenv(EnvWebhookURL, testWebhookBase)
	t.Setenv(EnvWebhookPassword, testPassword)
	s, err := NewWebhookSenderFromEnv(WithBatchSize(7))
	require.NoError(t, err)
	require.Equal(t, testWebhookURL, s.endpoint)
	require.Equal(t, 7, s.batchSize)
	require.NotContains(t, fmt.Sprintf("%v %+v %#v", s, s, s), testPassword)

	t.Setenv(EnvWebhookURL, "http://user:hunter2@remote.example")
	_, err = NewWebhookSenderFromEnv()
	require.ErrorContains(t, err, EnvWebhookURL)
	requireNoSecret(t, err.Error())

	t.Setenv(EnvWebhookURL, "")
	_, err = NewWebhookSenderFromEnv()
	require.ErrorIs(t, err, ErrNoCredential)
	require.ErrorContains(t, err, EnvWebhookURL)

	t.Setenv(EnvWebhookURL, testWebhookBase)
	t.Setenv(EnvWebhookPassword, "")
	_, err = NewWebhookSenderFromEnv()
	require.ErrorContains(t, err, EnvWebhookPassword)

	t.Setenv(EnvWebhookPassword, testPassword)
	require.Equal(t, zakat.Agencies(), s.rules.Agencies(), "unset: the document's codes")
	t.Setenv(EnvWebhookURL, "https://pay.tulus.my/api/adb/webhook")
	t.Setenv(EnvWebhookAgencies, " ADBLZS, ADBPPZ,ADB ")
	s, err = NewWebhookSenderFromEnv()
	require.NoError(t, err)
	require.Equal(t, "https://pay.tulus.my/api/adb/webhook", s.endpoint)
	require.Equal(t, zakat.ADBAgencies(), s.rules.Agencies())
	s, err = NewWebhookSenderFromEnv(WithWebhookValidator(zakat.Validator{}))
	require.NoError(t, err)
	require.Equal(t, zakat.Agencies(), s.rules.Agencies(), "an option given wins over the environment")
	t.Setenv(EnvWebhookAgencies, "ADB,,ADBPPZ")
	_, err = NewWebhookSenderFromEnv()
	require.ErrorContains(t, err, EnvWebhookAgencies)
	t.Setenv(EnvWebhookAgencies, "")
	t.Setenv(EnvWebhookURL, testWebhookBase)

	t.Setenv("PAYGATE_USERNAME", "old")
	_, err = NewWebhookSenderFromEnv()
	require.ErrorIs(t, err, ErrDeprecatedAuth)
}

// NewWebhookSenderFromEnv names the variable in each of its errors, never
// a secret.
func TestWebhookSenderFromEnvErrorsNameTheVariable(t *testing.T) {
	for _, tc := range []struct {
		name           string
		url, pw, codes string
		want           string
		is             error
	}{
		{name: "nothing set", want: EnvWebhookURL + " is not set", is: ErrNoCredential},
		{name: "no password", url: testWebhookBase, want: EnvWebhookPassword + " is not set", is: ErrNoCredential},
		{name: "URL in clear", url: "http://remote.example", pw: testPassword, want: EnvWebhookURL + `: "http://remote.example": plain http`},
		{name: "URL with userinfo", url: "https://user:hunter2@remote.example", pw: testPassword, want: EnvWebhookURL + ": "},
		{name: "URL with a query", url: testWebhookBase + "?x=1", pw: testPassword, want: EnvWebhookURL + ": "},
		{name: "password with a line break", url: testWebhookBase, pw: "pw\nsecret", want: EnvWebhookPassword + ": empty or holds a line break"},
		{name: "agencies", url: testWebhookBase, pw: testPassword, codes: "ADB,,X", want: EnvWebhookAgencies + `: "": want`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvWebhookURL, tc.url)
			t.Setenv(EnvWebhookPassword, tc.pw)
			t.Setenv(EnvWebhookAgencies, tc.codes)
			_, err := NewWebhookSenderFromEnv()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "hunter2")
			require.NotContains(t, err.Error(), "secret")
			require.NotContains(t, err.Error(), "webhook URL")
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// The report's matrix (docs/assumptions.md A-webhook-answers): a server
// error or a dropped connection never proves that a batch was not stored,
// so its transactions are Unconfirmed with that reason, never Rejected,
// whether it happened once (single attempt) or on every attempt; a 4xx on
// the first attempt proves it, so they are Rejected. A real server, so
// that a dropped connection is a hijacked and closed one.
func TestWebhookSenderReportMatrix(t *testing.T) {
	const (
		serverError = "unconfirmed: retries exhausted on a temporary refusal or a server error"
		noAnswer    = "unconfirmed: no answer (the request may have reached the service)"
		conflict    = "unconfirmed: the service refused the orderno as already stored on its first send"
	)
	drop := -1 // answer: hijack the connection and close it
	tests := []struct {
		name     string
		answer   int // HTTP status, or drop
		attempts int // the sender's MaxAttempts, all used
		want     string
		reason   string // in zakat.RequestReport.Err for Unconfirmed
	}{
		{name: "500 once", answer: 500, attempts: 1, want: "unconfirmed", reason: serverError},
		{name: "502 once", answer: 502, attempts: 1, want: "unconfirmed", reason: serverError},
		{name: "503 once", answer: 503, attempts: 1, want: "unconfirmed", reason: serverError},
		{name: "504 once", answer: 504, attempts: 1, want: "unconfirmed", reason: serverError},
		{name: "dropped connection once", answer: drop, attempts: 1, want: "unconfirmed", reason: noAnswer},
		{name: "500 always", answer: 500, attempts: 4, want: "unconfirmed", reason: serverError},
		{name: "503 always", answer: 503, attempts: 3, want: "unconfirmed", reason: serverError},
		{name: "dropped connection always", answer: drop, attempts: 3, want: "unconfirmed", reason: noAnswer},
		{name: "429 once", answer: 429, attempts: 1, want: "unconfirmed", reason: serverError},
		{name: "409 once", answer: 409, attempts: 1, want: "unconfirmed", reason: conflict},
		{name: "400 first", answer: 400, attempts: 1, want: "rejected"},
		{name: "401 first", answer: 401, attempts: 1, want: "rejected"},
		{name: "403 first", answer: 403, attempts: 1, want: "rejected"},
		{name: "404 first", answer: 404, attempts: 1, want: "rejected"},
		{name: "413 first", answer: 413, attempts: 1, want: "rejected"},
		{name: "422 first", answer: 422, attempts: 1, want: "rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, reqs := testbound.Handler(t, tt.attempts, "the sender makes at most MaxAttempts attempts",
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					if tt.answer == drop {
						conn, _, err := http.NewResponseController(w).Hijack()
						if err != nil {
							t.Errorf("hijack: %v", err)
							return
						}
						conn.Close()
						return
					}
					http.Error(w, `{"error":"answer under test"}`, tt.answer)
				}))
			srv := httptest.NewServer(h)
			defer srv.Close()
			s, err := NewWebhookSender(srv.URL, testPassword,
				WithRetry(RetryPolicy{MaxAttempts: tt.attempts, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}))
			require.NoError(t, err)
			// One transaction: a refusal of several is split (TestSendRefusalSplits).
			report, err := s.Send(context.Background(), validTxs(1))
			require.Error(t, err)
			require.Equal(t, tt.attempts, reqs.Count(), "every attempt used")
			require.Len(t, report.Requests, 1)
			rr := report.Requests[0]
			require.Equal(t, tt.attempts, rr.Attempts)
			require.Empty(t, report.Accepted)
			want := []string{validTx(0).OrderNo}
			if tt.want == "rejected" {
				require.Equal(t, want, report.Rejected)
				require.Empty(t, report.Unconfirmed)
				require.NotContains(t, rr.Err.Error(), "unconfirmed")
				require.Equal(t, tt.answer, rr.StatusCode)
				return
			}
			require.Empty(t, report.Rejected, "a %s never proves the batch was not stored", tt.name)
			require.Equal(t, want, report.Unconfirmed)
			require.ErrorContains(t, rr.Err, tt.reason)
			if tt.answer != drop {
				require.Equal(t, tt.answer, rr.StatusCode)
				var apiErr *APIError
				require.ErrorAs(t, rr.Err, &apiErr)
			}
		})
	}
}

// A nil option, untyped or a nil TransportOption, is an error of
// NewWebhookSender, not a panic.
func TestNewWebhookSenderNilOption(t *testing.T) {
	var transport TransportOption
	for _, tc := range []struct {
		name string
		opts []SenderOption
	}{
		{name: "a nil SenderOption", opts: []SenderOption{WithBatchSize(10), nil}},
		{name: "a nil TransportOption", opts: []SenderOption{transport}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = NewWebhookSender("https://bank.example.my", "pw", tc.opts...) })
			require.ErrorContains(t, err, "nil option")
		})
	}
}

// A 2xx is Accepted whatever its body (docs/assumptions.md
// A-webhook-answers: 2xx, stored): a body past the 4 KiB the sender kept of
// a success was read as no answer, so a stored batch was retried and
// reported Unconfirmed.
func TestWebhookSender2xxWithAnyBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp func() *http.Response
	}{
		{name: "long body", resp: func() *http.Response {
			return httpmock.NewStringResponse(http.StatusOK, "<html>"+strings.Repeat("stored ", 4096)+"</html>")
		}},
		{name: "long body, no Content-Length", resp: func() *http.Response {
			r := httpmock.NewStringResponse(http.StatusAccepted, strings.Repeat("x", 1<<20))
			r.ContentLength = -1
			return r
		}},
		{name: "garbage", resp: func() *http.Response { return httpmock.NewBytesResponse(http.StatusOK, []byte{0xff, 0, '{'}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, mt, _ := newTestSender(t)
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) { return tc.resp(), nil })
			report, err := s.Send(context.Background(), validTxs(2))
			require.NoError(t, err)
			require.Len(t, report.Accepted, 2)
			require.Empty(t, report.Unconfirmed)
			require.Equal(t, 1, mt.GetTotalCallCount(), "an accepted batch is not sent again")
		})
	}
}

// A bank that stalls its answer stops the send at WithSendTimeout's
// deadline, however long each attempt may take: the request under way is
// unconfirmed (it may have been stored), the rest not sent, and the error
// names the deadline. A real server that holds every request until the
// client gives up (loopback, bounded), or a Retry-After wait the deadline
// cuts short.
func TestWebhookSenderDeadline(t *testing.T) {
	stall := func(t *testing.T) (string, *http.Client) {
		h, _ := testbound.Handler(t, 1, "the stalled request is the only one made",
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				<-r.Context().Done() // the client gave up
			}))
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL, srv.Client()
	}
	retryLater := func(t *testing.T) (string, *http.Client) {
		mt := testbound.NewMock(t, 1, "the wait for the retry is cut short")
		mt.RegisterResponder(http.MethodPost, testWebhookURL, func(*http.Request) (*http.Response, error) {
			resp := httpmock.NewStringResponse(503, "busy")
			resp.Header.Set("Retry-After", "30")
			return resp, nil
		})
		return testWebhookBase, &http.Client{Transport: mt}
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) (string, *http.Client)
	}{
		{name: "stalled answer", server: stall},
		{name: "Retry-After wait", server: retryLater},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, client := tc.server(t)
			s, err := NewWebhookSender(url, testPassword, WithHTTPClient(client), WithBatchSize(1), WithSendTimeout(50*time.Millisecond),
				WithAttemptTimeout(time.Hour), WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: time.Hour, MaxDelay: time.Hour}))
			require.NoError(t, err)
			report, err := s.Send(context.Background(), validTxs(3))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.ErrorContains(t, err, "send incomplete: 0 of 3 transactions accepted, 0 rejected, 1 unconfirmed, 2 not sent")
			require.Equal(t, []string{"ORD-000000"}, report.Unconfirmed)
			require.Equal(t, []string{"ORD-000001", "ORD-000002"}, report.NotSent)
			require.ErrorContains(t, report.Requests[0].Err, "unconfirmed: the send's deadline (50ms, WithSendTimeout) passed before an answer proved the outcome")
			require.ErrorContains(t, report.Requests[2].Err, "the send stopped before this request: paygate: the send's deadline passed (50ms, WithSendTimeout)")
			require.Zero(t, report.Requests[2].Attempts)
			require.ErrorIs(t, report.Requests[2].Err, context.DeadlineExceeded, "a request not made because the deadline passed says so")
			require.NotContains(t, err.Error(), testPassword)
		})
	}
	_, err := NewWebhookSender(testWebhookBase, testPassword, WithSendTimeout(0))
	require.ErrorContains(t, err, "WithSendTimeout")
	s, err := NewWebhookSender(testWebhookBase, testPassword, WithSendTimeout(time.Nanosecond))
	require.NoError(t, err, "the shortest deadline is a deadline")
	require.Equal(t, time.Nanosecond, s.sendTimeout)
}

// The cause a passed WithSendTimeout deadline gives the requests not made
// matches context.DeadlineExceeded, as the context's own error does, and
// nothing else.
func TestWebhookSendDeadlineMatchesDeadlineExceeded(t *testing.T) {
	stopped := notSentAfter(batchPart{txs: validTxs(1), idx: []int{0}}, &deadlineError{d: time.Second})
	require.ErrorIs(t, stopped.Err, context.DeadlineExceeded)
	require.NotErrorIs(t, stopped.Err, context.Canceled)
	require.ErrorContains(t, stopped.Err, "the send's deadline passed (1s, WithSendTimeout)")
}

// A failed TLS handshake sent nothing: it is not retried, its transactions
// and every later request's are not sent, and the reason says so, never
// "may have reached the service".
func TestWebhookSenderTLSFailureIsNotSent(t *testing.T) {
	h, reqs := testbound.Handler(t, 1, "no request passes a failed handshake",
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors are the test
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	plain := httptest.NewServer(h)
	defer plain.Close()
	for _, tc := range []struct {
		name   string
		url    string
		client *http.Client
		cause  string
	}{
		{name: "certificate not trusted", url: srv.URL, client: &http.Client{}, cause: "certificate signed by unknown authority"},
		{name: "certificate for another host", url: fmt.Sprintf("https://localhost:%d", port), client: srv.Client(), cause: "certificate is valid for"},
		{name: "a server that does not speak TLS", url: "https://" + plain.Listener.Addr().String(), client: &http.Client{}, cause: "server gave HTTP response to HTTPS client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewWebhookSender(tc.url, testPassword, WithHTTPClient(tc.client), WithBatchSize(1),
				WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}))
			require.NoError(t, err)
			report, err := s.Send(context.Background(), validTxs(3))
			var se *SendError
			require.ErrorAs(t, err, &se)
			require.ErrorContains(t, err, "0 of 3 transactions accepted, 0 rejected, 0 unconfirmed, 3 not sent")
			require.Equal(t, []string{"ORD-000000", "ORD-000001", "ORD-000002"}, report.NotSent)
			require.Equal(t, 1, report.Requests[0].Attempts, "not retried")
			require.Equal(t, 1, report.Attempts(), "the send stopped")
			first := report.Requests[0].Err.Error()
			require.Contains(t, first, "not sent: the TLS handshake failed")
			require.Contains(t, first, tc.cause)
			require.NotContains(t, first, "may have reached")
			require.NotContains(t, err.Error(), testPassword)
		})
	}
	require.Zero(t, reqs.Count(), "the server's handler never ran")
}

// Each webhook request is one call: its attempts send one ID, which its
// log lines, its zakat.RequestReport and its error name; the bank's request ID
// is kept beside it; the next request has another ID; a request never
// made has none. The password is in none of it.
func TestWebhookSenderCallIDPerRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []int // statuses of the first request's attempts
		serverID string
		status   zakat.SendStatus
	}{
		{name: "retried then accepted", answers: []int{503, 500, 200}, serverID: "bank-7", status: zakat.SendAccepted},
		{name: "retried then rejected", answers: []int{429, 400}, serverID: "bank-8", status: zakat.SendRejected},
		{name: "unauthorized stops the send", answers: []int{401}, status: zakat.SendRejected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, mt, logs := newTestSender(t, WithBatchSize(1))
			var sent []string
			mt.RegisterResponder(http.MethodPost, testWebhookURL, func(req *http.Request) (*http.Response, error) {
				sent = append(sent, req.Header.Get("X-Request-Id"))
				status := 200
				if len(sent) <= len(tc.answers) {
					status = tc.answers[len(sent)-1]
				}
				resp := httpmock.NewStringResponse(status, "")
				resp.Header.Set("Request-Id", tc.serverID)
				return resp, nil
			})
			report, err := s.Send(context.Background(), validTxs(2))
			first := report.Requests[0]
			require.Equal(t, tc.status, first.Status)
			require.Regexp(t, `^[0-9a-f]{16}$`, first.CallID)
			require.Equal(t, tc.serverID, first.RequestID)
			for _, id := range sent[:len(tc.answers)] {
				require.Equal(t, first.CallID, id, "every attempt of the request sends its ID")
			}
			logged := callIDLine.FindAllStringSubmatch(logs.String(), -1)
			require.Len(t, logged, len(sent))
			for _, m := range logged[:len(tc.answers)] {
				require.Equal(t, first.CallID, m[1])
			}
			require.NotContains(t, logs.String(), testPassword)
			second := report.Requests[1]
			if tc.answers[len(tc.answers)-1] == 401 {
				require.Equal(t, zakat.SendNotSent, second.Status)
				require.Empty(t, second.CallID, "a request never made has no ID")
			} else {
				require.NotEqual(t, first.CallID, second.CallID)
				require.Equal(t, second.CallID, sent[len(sent)-1])
			}
			if tc.status == zakat.SendAccepted {
				require.NoError(t, err)
				return
			}
			require.Equal(t, first.CallID, CallID(err))
			require.Contains(t, first.Err.Error(), first.CallID)
			require.NotContains(t, err.Error(), testPassword)
		})
	}
}
