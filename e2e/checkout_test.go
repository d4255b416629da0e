// Package e2e drives a real headless Chromium through the whole payment:
// the example shop, its auto-submitted checkout form, the sandbox's hosted
// page, Pay, and the return page. It is its own module so that the browser
// driver stays out of the SDK's go.mod.
package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate-go/paygate/examples/merchant/shop"
	"github.com/paygate-go/paygate/gatewaytest"
)

// chromium finds the browser: $CHROMIUM, or Debian's /usr/bin/chromium. In
// CI (CI=true) a missing browser fails the test; elsewhere it skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium: .ci/run installs Debian's chromium")
	}
	t.Skip("no Chromium here (apt-get install chromium, or set CHROMIUM)")
	return ""
}

// failFirstSignedCallback answers 503 to the first signed callback, so that
// the buyer's browser comes back before any verified payment has landed.
type failFirstSignedCallback struct {
	next   http.Handler
	mu     sync.Mutex
	failed bool
	landed chan struct{}
}

func (f *failFirstSignedCallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/paygate/return" {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body)) // the handler reads it again
		form, _ := url.ParseQuery(string(body))
		if form.Has("signature") {
			f.mu.Lock()
			first := !f.failed
			f.failed = true
			f.mu.Unlock()
			if first {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			defer func() {
				select {
				case f.landed <- struct{}{}:
				default:
				}
			}()
		}
	}
	f.next.ServeHTTP(w, r)
}

func TestBrowserCheckout(t *testing.T) {
	exe := chromium(t)
	const retry = 2 * time.Second
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(retry))
	defer sb.Close()
	client, err := sb.Client()
	if err != nil {
		t.Fatal(err)
	}
	gate := &failFirstSignedCallback{landed: make(chan struct{}, 1)}
	srv := httptest.NewServer(gate)
	defer srv.Close()
	gate.next = shop.New(client, sb.Key(), srv.URL)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}

	do(chromedp.Navigate(srv.URL + "/"))
	product := text("body")
	// The checkout form submits itself; the sandbox's hosted page follows.
	do(chromedp.Click(chromedp.ID("buy")), chromedp.WaitVisible(chromedp.ID("pay")))
	hosted := text("#order")
	if !strings.Contains(product, "RM 25.90") || !strings.Contains(hosted, "RM 25.90") {
		t.Fatalf("product %q, hosted %q", product, hosted)
	}
	// The return form submits itself; the shop redirects to the buyer's
	// orders (never to a page chosen by the unsigned refNo).
	do(chromedp.Click(chromedp.ID("pay")), chromedp.WaitVisible(chromedp.CSS("td.status")))
	// The first signed callback was refused, so nothing verified has landed:
	// the page must not say paid, whatever the browser posted.
	if status := text("td.status"); status == "paid" {
		t.Fatalf("the return page showed %q before the signed callback landed", status)
	}

	select {
	case <-gate.landed: // the gateway's retry got through
	case <-time.After(3 * retry): // the retry is due after one interval
		t.Fatalf("the sandbox did not retry the signed callback refused with 503 within %v (retry interval %v): %+v", 3*retry, retry, sb.Callbacks())
	}
	do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("td.status")))
	if status := text("td.status"); status != "paid" {
		t.Fatalf("after the signed callback the page says %q", status)
	}
	do(chromedp.Navigate(srv.URL+"/orders"), chromedp.WaitVisible(chromedp.CSS("td.fulfils")))
	if f := text("td.fulfils"); f != "1" {
		t.Fatalf("fulfilled %s times", f)
	}
	sb.Settle()
	log := sb.Callbacks()
	if len(log) != 1 || !log[0].Delivered || len(log[0].Attempts) != 2 {
		t.Fatalf("delivery log %+v", log)
	}
}
