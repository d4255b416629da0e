package gatewaytest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paygate-go/paygate"
)

// Delivery is one direct callback event and its attempts (docs/protocol.md "Events and callback delivery").
type Delivery struct {
	OrderNo   string         // the gateway's order number
	RefNo     string         // the order's refNo as received (refNo~extraData)
	Status    paygate.Status // the status the callback carries (WithCallbackStatus may differ from the order's)
	Attempts  []Attempt      // every POST of this callback, in order
	Delivered bool           // a 2xx was received
	Dropped   bool           // never sent: WithCallbackLoss matched the order
	Stale     bool           // sent after the order's success was delivered (WithStaleCallbacks)
}

// Attempt is one POST of a direct callback.
type Attempt struct {
	At         time.Time     // when it was sent
	StatusCode int           // 0 when no answer came
	Err        string        // the transport error, if any
	Took       time.Duration // from sending to the answer (or the error), in real time
}

// Callbacks returns a copy of the delivery log, oldest event first.
func (s *Server) Callbacks() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, len(s.log))
	for i, d := range s.log {
		out[i] = *d
		out[i].Attempts = slices.Clone(d.Attempts)
	}
	return out
}

// Settle waits until no direct callback is being delivered or retried and
// no late settlement (WithLateSettlement) is still due. With WithTestClock
// it waits only for the work under way now, not for retries and late
// settlements the clock has not reached: TestClock.Advance runs those,
// and settles before it returns.
func (s *Server) Settle() { s.pending.Wait() }

// sendCallback starts the signed direct callback of an order's current
// status.
func (s *Server) sendCallback(o Order) { s.deliver(o, false) }

// deliver logs a direct callback of o and, unless WithCallbackLoss drops
// it, POSTs it to returnUrl at once, then every RetryInterval until a 2xx,
// up to MaxAttempts, or until the server closes; nothing is sent once Close
// has begun. A success delivered is followed by the stale callback of
// WithStaleCallbacks when it matches.
func (s *Server) deliver(o Order, stale bool) {
	fields := s.callbackFields(o)
	sent := s.cfg.recovery.sentStatus(o.RefNo, o.Status)
	fields.Set("status", string(sent))
	signed, err := s.signCallback(fields)
	if err != nil {
		panic(fmt.Sprintf("gatewaytest: signing a callback: %v", err)) // the fields are single-valued by construction
	}
	d := &Delivery{OrderNo: o.OrderNo, RefNo: o.RefNo, Status: sent, Stale: stale, Dropped: s.cfg.recovery.lost(o.RefNo)}
	s.mu.Lock()
	s.log = append(s.log, d)
	s.mu.Unlock()
	if d.Dropped {
		s.logf("callback", "refNo", d.RefNo, "status", string(sent), "lost", true)
		return
	}
	body := signed.Encode()
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		for n := 1; n <= s.cfg.maxAttempts; n++ {
			select {
			case <-s.closed:
				return
			default:
			}
			attempts := s.post(o.ReturnURL, body)
			s.logAttempts(d, n, attempts)
			ok := slices.ContainsFunc(attempts, Attempt.ok)
			s.mu.Lock()
			d.Attempts = append(d.Attempts, attempts...)
			d.Delivered = ok
			s.mu.Unlock()
			if ok {
				if !stale && o.Status == paygate.StatusSuccess && s.cfg.recovery.followedByStale(o.RefNo) {
					s.sendStale(o)
				}
				return
			}
			if n == s.cfg.maxAttempts || !s.sleep(s.cfg.retryInterval, nil) {
				return
			}
		}
	}()
}

// post POSTs a callback body to url once, or WithDuplicateCallbacks' n
// times (at once or one after the other), and returns the attempts, one
// per copy.
func (s *Server) post(url, body string) []Attempt {
	dup := s.cfg.dupCallbacks
	attempts := make([]Attempt, max(dup.n, 1))
	if !dup.concurrent {
		for i := range attempts {
			attempts[i] = s.postOnce(url, body)
		}
		return attempts
	}
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() { attempts[i] = s.postOnce(url, body) })
	}
	wg.Wait()
	return attempts
}

// postOnce is one POST of a callback body.
func (s *Server) postOnce(url, body string) Attempt {
	a := Attempt{At: s.cfg.now()}
	began := time.Now()
	resp, err := s.client.Post(url, "application/x-www-form-urlencoded", strings.NewReader(body))
	a.Took = time.Since(began)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	a.StatusCode = resp.StatusCode
	return a
}

// ok reports whether the attempt was answered 2xx.
func (a Attempt) ok() bool { return a.StatusCode/100 == 2 }

// dupCallbacks is WithDuplicateCallbacks' setting; the zero value sends
// each callback once.
type dupCallbacks struct {
	n          int // 0 without the option
	concurrent bool
	set        bool // the option was given: n must be 1 or more
}

// WithDuplicateCallbacks sends every attempt of every direct callback n
// times (n >= 1; 1 is the default), all at once when concurrent, else one
// after the other, as a gateway retrying too eagerly or a proxy repeating
// requests would, so that a merchant can test that each event is acted on
// exactly once (paygate.CallbackHandler with its Deduper). Each copy is an
// Attempt in Callbacks; the event counts as delivered when any copy was
// answered 2xx, and is retried otherwise.
func WithDuplicateCallbacks(n int, concurrent bool) Option {
	return func(c *config) { c.dupCallbacks = dupCallbacks{n: n, concurrent: concurrent, set: true} }
}

// sortedKeys lists the keys of v in order.
func sortedKeys(v url.Values) []string {
	ks := make([]string, 0, len(v))
	for k := range v {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// String is the attempt's outcome: the status text or the error.
func (a Attempt) String() string {
	if a.Err != "" {
		return a.Err
	}
	return http.StatusText(a.StatusCode)
}

// maxDuplicateCallbacks bounds WithDuplicateCallbacks' n: enough to race
// a merchant's replicas, few enough not to flood its handler.
const maxDuplicateCallbacks = 100
