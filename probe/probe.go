// Package probe checks the SDK's documented guesses (docs/assumptions.md)
// against a live gateway service, without moving money: it reads (reports,
// lookups, the bank list, error answers, the answer's Date), and creates
// orders only when Options.Create says so, at the minimum amount, under
// references it names, never paying any. Each assumption ID gets a verdict:
// it holds, it differs (with what the probe saw), or it cannot be checked
// from here (and why). `paygate probe` runs it from the command line.
//
// The probe sends its requests through the given Client, so it never
// follows a redirect and never sends a credential in clear (the Client's
// hosts are https, or http on a loopback host only), and it sends at most
// one request per Options.Interval (default 500 ms: 2 requests a second).
package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/internal/probeaccess"
)

// Verdict is what the probe found of one assumption.
type Verdict string

// The verdicts.
const (
	// Holds: the service behaved as the SDK assumes.
	Holds Verdict = "holds"
	// Differs: it did not; Result.Saw says what it did.
	Differs Verdict = "differs"
	// Unchecked: the probe cannot check it from here; Result.Reason says why.
	Unchecked Verdict = "cannot be checked from here"
)

// DefaultInterval is the least time between two of the probe's requests:
// at most 2 requests a second.
const DefaultInterval = 500 * time.Millisecond

// Options configures a run. The zero value reads only.
type Options struct {
	// Create lets the probe create orders (never paid) at
	// paygate.MinOrderAmount, under references starting with RefPrefix.
	Create bool
	// RefPrefix starts every reference the probe creates or looks up
	// (default "PROBE-"); the run's ID and a number follow it.
	RefPrefix string
	// Email is the buyer e-mail of created orders and of the transaction
	// history read (default "probe@example.com").
	Email string
	// ReturnURL is the returnUrl of created orders (default
	// "https://example.com/paygate-probe").
	ReturnURL string
	// Since starts the report range read (default 7 days before now); the
	// range ends today.
	Since time.Time
	// PageSize is the report page size the paging check asks for (default 20).
	PageSize int
	// Interval is the least time between two requests (default
	// DefaultInterval).
	Interval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Result is the verdict on one assumption.
type Result struct {
	// ID is the assumption's ID in docs/assumptions.md (A-…).
	ID string `json:"id"`
	// Verdict is holds, differs or cannot be checked from here.
	Verdict Verdict `json:"verdict"`
	// Sent says what the probe sent for it ("" when nothing).
	Sent string `json:"sent,omitempty"`
	// Saw says what the service answered.
	Saw string `json:"saw,omitempty"`
	// Reason says why it cannot be checked.
	Reason string `json:"reason,omitempty"`
}

// Report is a run's outcome, one Result per assumption ID, in the order of
// docs/assumptions.md.
type Report struct {
	// SDKVersion is paygate.Version.
	SDKVersion string `json:"sdk_version"`
	// Started is when the run started, UTC.
	Started time.Time `json:"started"`
	// Service is the reports host's URL.
	Service string `json:"service"`
	// Agency is the client's agency.
	Agency string `json:"agency,omitempty"`
	// RunID names the run; created references are RefPrefix+RunID+"-"+n.
	RunID string `json:"run_id"`
	// Create is Options.Create.
	Create bool `json:"create"`
	// Created lists the references of the orders the run created (unpaid).
	Created []string `json:"created,omitempty"`
	// Requests counts the HTTP requests sent.
	Requests int `json:"requests"`
	// Results holds one Result per assumption ID.
	Results []Result `json:"results"`
}

// Differs reports whether any assumption differs.
func (r *Report) Differs() bool {
	for _, res := range r.Results {
		if res.Verdict == Differs {
			return true
		}
	}
	return false
}

// Count returns how many results have verdict v.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, res := range r.Results {
		if res.Verdict == v {
			n++
		}
	}
	return n
}

// Result returns the result for id.
func (r *Report) Result(id string) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id {
			return res, true
		}
	}
	return Result{}, false
}

// ErrPlainHTTP refuses a client whose hosts would carry a credential in
// clear: http to a host other than a loopback one.
var ErrPlainHTTP = errors.New("probe: plain http to a host that is not loopback")

// Run checks every assumption it can against the service client calls and
// returns the report. An error means the run could not start (a nil or
// misconfigured client); what the service answers is in the report.
func Run(ctx context.Context, client *paygate.Client, opts Options) (*Report, error) {
	info, err := usable(client)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	p := &pacer{interval: opts.Interval}
	paced, _ := probeaccess.Wrapped(client, p.wrap).(*paygate.Client)
	s := &session{client: paced, info: info, opts: opts, runID: runID(opts.Now())}
	rep := &Report{SDKVersion: paygate.Version, Started: opts.Now().UTC(), Service: info.ReportsURL, Agency: info.Agency,
		RunID: s.runID, Create: opts.Create}
	results := s.runChecks(ctx)
	for _, id := range AssumptionIDs() {
		res, ok := results[id]
		if !ok {
			reason, known := unchecked[id]
			if !known {
				reason = "not checked: the run stopped (" + fmt.Sprint(context.Cause(ctx)) + ")"
			}
			res = Result{ID: id, Verdict: Unchecked, Reason: reason}
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Created = s.created
	rep.Requests = p.count()
	return rep, ctx.Err()
}

// usable returns what client is configured with, or why the probe cannot
// use it: not a client, a host in clear, no reports URL, no credential.
func usable(client *paygate.Client) (probeaccess.Info, error) {
	info, ok := probeaccess.Describe(client)
	if !ok {
		return info, errors.New("probe: a *paygate.Client is required")
	}
	for _, u := range []string{info.ReportsURL, info.CheckoutTarget, info.PayBase} {
		if err := checkScheme(u); err != nil {
			return info, err
		}
	}
	if info.ReportsURL == "" {
		return info, fmt.Errorf("probe: the client has no reports URL (%w)", paygate.ErrNoCredential)
	}
	if !info.HasKey && !info.HasToken {
		return info, fmt.Errorf("probe: the client has neither an API key nor an AuthToken: %w", paygate.ErrNoCredential)
	}
	return info, nil
}

// runChecks runs every check in order, until ctx is done, and returns
// their results by ID.
func (s *session) runChecks(ctx context.Context) map[string]Result {
	results := map[string]Result{}
	for _, c := range checks() {
		if ctx.Err() != nil {
			break
		}
		var res Result
		if c.create && !s.opts.Create {
			res = Result{Verdict: Unchecked, Reason: "creates an order: run with -create (Options.Create) to check it"}
		} else {
			res = c.run(ctx, s)
		}
		res.ID = c.id
		if res.Sent == "" && res.Verdict != Unchecked {
			res.Sent = c.sends
		}
		results[c.id] = res
	}
	return results
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	if o.RefPrefix == "" {
		o.RefPrefix = "PROBE-"
	}
	if o.Email == "" {
		o.Email = "probe@example.com"
	}
	if o.ReturnURL == "" {
		o.ReturnURL = "https://example.com/paygate-probe"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Since.IsZero() {
		o.Since = o.Now().AddDate(0, 0, -7)
	}
	if o.PageSize <= 0 {
		o.PageSize = 20
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	return o
}

// checkScheme refuses a URL that would carry a credential in clear.
func checkScheme(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if u.Scheme == "https" || u.Scheme == "http" && loopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%w: %s://%s", ErrPlainHTTP, u.Scheme, u.Host)
}

// loopback reports whether host is localhost or a loopback IP address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// runID names a run: the time and 4 random bytes.
func runID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405") + hex.EncodeToString(b[:])
}

// pacer spaces the round trips it wraps by interval, and counts them.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
	n        int
}

// wrap returns rt paced.
func (p *pacer) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if err := p.wait(r.Context()); err != nil {
			return nil, err
		}
		return rt.RoundTrip(r)
	})
}

// wait blocks until the next request may go, and books its slot.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.interval)
	p.n++
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// count is how many requests went.
func (p *pacer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
