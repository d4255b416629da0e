package main

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
	"github.com/paygate-go/paygate/zakat"
)

// callbackLog is a merchant endpoint that answers 200 and records each
// callback as "refNo status".
type callbackLog struct {
	mu  sync.Mutex
	got []string
}

func (l *callbackLog) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, r.PostForm.Get("refNo")+" "+r.PostForm.Get("status"))
}

// count is how many callbacks of refNo with status arrived.
func (l *callbackLog) count(refNo, status string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, g := range l.got {
		if g == refNo+" "+status {
			n++
		}
	}
	return n
}

// The fault flags become the sandbox's recovery switches: every 2nd order
// paid loses its callbacks, each callback comes twice, a success settles
// late. Run on a test clock here, so that the outcome is exact.
func TestSandboxFaultOptions(t *testing.T) {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	faults := addSandboxFaults(fs)
	require.NoError(t, fs.Parse([]string{"-lose-every", "2", "-duplicates", "2", "-duplicates-concurrent=false", "-late-settlement", "2h"}))
	opts, err := faults.options()
	require.NoError(t, err)
	clock := gatewaytest.NewTestClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	sb := gatewaytest.NewServer(append(opts, gatewaytest.WithTestClock(clock))...)
	t.Cleanup(sb.Close)
	shop := &callbackLog{}
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	client, err := sb.Client()
	require.NoError(t, err)
	for _, ref := range []string{"R-1", "R-2", "R-3", "R-4"} {
		_, err := client.CreateOrder(context.Background(), paygate.Order{RefNo: ref, Amount: 100, Email: "a@example.com", ReturnURL: srv.URL})
		require.NoError(t, err)
		require.NoError(t, sb.Pay(ref, paygate.StatusSuccess))
	}
	sb.Settle()
	clock.Advance(time.Hour)
	require.Equal(t, 2, shop.count("R-1", "pending"), "two copies of each callback")
	require.Zero(t, shop.count("R-1", "success"), "not settled before its delay")
	clock.Advance(time.Hour)
	for _, ref := range []string{"R-1", "R-3"} {
		require.Equal(t, 2, shop.count(ref, "pending"), ref)
		require.Equal(t, 2, shop.count(ref, "success"), ref)
	}
	for _, ref := range []string{"R-2", "R-4"} {
		require.Zero(t, shop.count(ref, "pending")+shop.count(ref, "success"), "%s: every 2nd order's callbacks lost", ref)
	}
	for _, o := range sb.Orders() {
		require.Equal(t, paygate.StatusSuccess, o.Status, "%s settled, lost callbacks or not", o.RefNo)
	}
}

// The webhook's fault flags: a refused orderno is rejected alone (the
// list's spaces around a comma trimmed), and a repeat answered 422 on a
// first send is unconfirmed, held by the service.
func TestWebhookFaultOptions(t *testing.T) {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	faults := addWebhookFaults(fs)
	require.NoError(t, fs.Parse([]string{"-webhook-repeats", "422", "-webhook-refuse", "W9, W2"}))
	opts, err := faults.options()
	require.NoError(t, err)
	sb := gatewaytest.NewServer(opts...)
	t.Cleanup(sb.Close)
	sender, err := sb.WebhookSender()
	require.NoError(t, err)
	txs := []zakat.Transaction{cliTx("W1"), cliTx("W2"), cliTx("W3")}
	report, _ := sender.Send(context.Background(), txs)
	require.Equal(t, []string{"W1", "W3"}, report.Accepted)
	require.Equal(t, []string{"W2"}, report.Rejected)
	report, _ = sender.Send(context.Background(), txs[:1])
	require.Equal(t, []string{"W1"}, report.Unconfirmed)
	require.ErrorIs(t, report.Outcomes()[0].Err, zakat.ErrHeldAtFirstSend)
}

// -webhook-drop-after-store is a share from 0 to 1, both included: 1
// loses every answer, 0 none.
func TestWebhookDropAfterStoreRange(t *testing.T) {
	for _, tc := range []struct {
		rate  string
		valid bool
	}{
		{rate: "0", valid: true},
		{rate: "0.5", valid: true},
		{rate: "1", valid: true},
		{rate: "-0.1"},
		{rate: "1.01"},
		{rate: "NaN"}, // no share: never silently none
	} {
		fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
		faults := addWebhookFaults(fs)
		require.NoError(t, fs.Parse([]string{"-webhook-drop-after-store", tc.rate}))
		_, err := faults.options()
		if tc.valid {
			require.NoError(t, err, tc.rate)
			continue
		}
		require.ErrorContains(t, err, "want 0 to 1", tc.rate)
	}
}

// everyNth matches every n-th reference, the same way every time.
func TestEveryNth(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []bool
	}{
		{n: 1, want: []bool{true, true, true, true, true}},
		{n: 2, want: []bool{false, true, false, true, false}},
		{n: 3, want: []bool{false, false, true, false, false}},
	} {
		lose := everyNth(tc.n)
		var got []bool
		for _, ref := range []string{"A", "B", "C", "D", "E"} {
			got = append(got, lose(ref))
		}
		require.Equal(t, tc.want, got, "n %d", tc.n)
		again := slices.Clone(got)
		for i, ref := range []string{"A", "B", "C", "D", "E"} {
			again[i] = lose(ref)
		}
		require.Equal(t, got, again, "n %d: a reference asked again keeps its answer", tc.n)
	}
}

// Bad fault flags are usage errors; -h documents each.
func TestSandboxFaultFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"-lose-every", "-1"}, want: "-lose-every -1: want 0 or more"},
		{args: []string{"-duplicates", "0"}, want: "-duplicates 0: want 1 to 100"},
		{args: []string{"-duplicates", "101"}, want: "-duplicates 101: want 1 to 100"},
		{args: []string{"-late-settlement", "-1s"}, want: "-late-settlement -1s: want zero or more"},
		{args: []string{"-webhook-drop-after-store", "1.5"}, want: "-webhook-drop-after-store 1.5: want 0 to 1"},
		{args: []string{"-webhook-repeats", "410"}, want: `-webhook-repeats "410": want stored, 409 or 422`},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"sandbox"}, tc.args...)...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Contains(t, errOut, tc.want)
	}
	code, _, errOut := runCLI(t, "", "sandbox", "-h")
	require.Equal(t, exitOK, code)
	for _, f := range []string{"-lose-every", "-duplicates", "-duplicates-concurrent", "-late-settlement", "-webhook-drop-after-store", "-webhook-repeats", "-webhook-refuse"} {
		require.Regexp(t, `(?m)^  `+f+`( |$)`, errOut, "-h documents %s", f)
	}
}

// The command with its fault flags, in real time: a late settlement and
// duplicates reach the merchant; the lost order's callbacks never do.
func TestSandboxCommandFaults(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- dispatch(env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errOut},
			[]string{"sandbox", "-retry-interval", "10ms", "-lose-every", "2", "-duplicates", "3", "-late-settlement", "20ms"})
	}()
	defer func() {
		cancel()
		require.Equal(t, exitOK, <-done)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "PAYGATE_WEBHOOK_PASSWORD=") }, 5*time.Second, 10*time.Millisecond)
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		t.Setenv(k, v)
	}
	shop := &callbackLog{}
	srv := httptest.NewServer(shop)
	defer srv.Close()
	for _, ref := range []string{"R-1", "R-2", "R-3"} {
		code, _, stderr := runCLI(t, "", "sandbox", "order", "create", "-refno", ref, "-amount", "1.00", "-return-url", srv.URL)
		require.Equal(t, exitOK, code, stderr)
		code, _, stderr = runCLI(t, "", "sandbox", "order", "settle", "-refno", ref)
		require.Equal(t, exitOK, code, stderr)
	}
	require.Eventually(t, func() bool { return shop.count("R-1", "success") == 3 && shop.count("R-3", "success") == 3 },
		10*time.Second, 10*time.Millisecond, "the late successes, three copies each")
	require.Equal(t, 3, shop.count("R-1", "pending"))
	require.Zero(t, shop.count("R-2", "pending")+shop.count("R-2", "success"), "the 2nd order's callbacks are lost")
}
