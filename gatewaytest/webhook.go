package gatewaytest

import (
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/zakat"
)

// maxWebhookBody caps a webhook request the sandbox reads.
const maxWebhookBody = 32 << 20

// WebhookFaults are the faults the sandbox's webhook injects, to test a
// sender's retries and the truth of its report. Each rate is a share of
// requests; one number is drawn per request and the faults are tried in the
// order listed, so the rates add up (keep their sum below 1).
type WebhookFaults struct {
	// Latency is waited before every answer.
	Latency time.Duration
	// Error500 answers 500 before storing anything.
	Error500 float64
	// Error503 answers 503 with Retry-After before storing anything.
	Error503 float64
	// RetryAfter is the 503's Retry-After, in whole seconds (default 1 s;
	// negative: no Retry-After).
	RetryAfter time.Duration
	// DropBeforeStore closes the connection before storing: no answer.
	DropBeforeStore float64
	// DropAfterStore stores the batch, then closes the connection: the
	// answer is lost, and a retry meets the stored ordernos.
	DropAfterStore float64
	// SlowAfterStore stores the batch and answers only after Slow, so that
	// a client with a shorter timeout gives up first.
	SlowAfterStore float64
	// Slow is SlowAfterStore's wait.
	Slow time.Duration
	// Rand returns a number in [0, 1); nil uses crypto/rand.
	Rand func() float64
}

// WithWebhookFaults makes the webhook inject f.
func WithWebhookFaults(f WebhookFaults) Option { return func(c *config) { c.faults = f } }

// DuplicateAnswer is how the sandbox's webhook answers a batch holding an
// orderno it has stored before. The protocol says orderno is unique and
// prevents duplicates, not how a repeat is answered (docs/assumptions.md
// A-webhook-duplicates).
type DuplicateAnswer int

const (
	// DuplicateStoredOnce answers 200 and stores only the new ordernos (the
	// default).
	DuplicateStoredOnce DuplicateAnswer = iota
	// DuplicateConflict answers 409 and stores nothing of the batch.
	DuplicateConflict
	// DuplicateUnprocessable answers 422 and stores nothing of the batch.
	DuplicateUnprocessable
)

// WithWebhookDuplicates sets how a repeated orderno is answered (default
// DuplicateStoredOnce).
func WithWebhookDuplicates(d DuplicateAnswer) Option { return func(c *config) { c.duplicates = d } }

// WithWebhookPath serves the webhook at path instead of the document's
// path (/api/bank/webhook): "/api/adb/webhook" is the bank
// webhook page's (docs/assumptions.md A-webhook-brand). Server.WebhookURL
// is then the endpoint's URL to give a sender.
func WithWebhookPath(path string) Option { return func(c *config) { c.webhookPath = path } }

// WithWebhookValidator makes the webhook check batches with v, whose agency
// codes are then the ones accepted (default: the document's, BANKLZS,
// BANKPPZ, BANK; docs/assumptions.md A-webhook-brand). Server.WebhookSender
// gives a sender the same validator.
func WithWebhookValidator(v zakat.Validator) Option {
	return func(c *config) { c.webhookRules = v }
}

// validWebhookPath reports whether p can be the webhook's path: absolute,
// not the root (orders are taken there), with no query, fragment, ".." or
// character the router reads as a pattern, clean as http.ServeMux wants it
// (no //, no /./; it panics on a pattern that is not) and with valid
// escapes (a URL a sender takes).
func validWebhookPath(p string) bool {
	if len(p) <= 1 || p[0] != '/' || strings.ContainsAny(p, "?#{} \t\r\n") || strings.Contains(p, "..") {
		return false
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") {
		clean += "/"
	}
	_, err := url.PathUnescape(p)
	return clean == p && err == nil
}

// WebhookURL is the URL of the sandbox's webhook endpoint (URL plus its
// path), for paygate.NewWebhookSender.
func (s *Server) WebhookURL() string { return s.URL + s.cfg.webhookPath }

// WebhookSender returns a paygate.WebhookSender for this sandbox's webhook:
// its URL, its password and its validator (WithWebhookValidator); opts are
// applied after.
func (s *Server) WebhookSender(opts ...paygate.SenderOption) (*paygate.WebhookSender, error) {
	return paygate.NewWebhookSender(s.WebhookURL(), s.WebhookPassword,
		append([]paygate.SenderOption{paygate.WithWebhookValidator(s.cfg.webhookRules)}, opts...)...)
}

// webhookFault is the fault drawn for one request.
type webhookFault int

const (
	faultNone webhookFault = iota
	fault500
	fault503
	faultDropBefore
	faultDropAfter
	faultSlowAfter
)

// draw picks the fault of one request.
func (f WebhookFaults) draw() webhookFault {
	r := f.Rand()
	for _, c := range []struct {
		rate  float64
		fault webhookFault
	}{{f.Error500, fault500}, {f.Error503, fault503}, {f.DropBeforeStore, faultDropBefore}, {f.DropAfterStore, faultDropAfter}, {f.SlowAfterStore, faultSlowAfter}} {
		if r < c.rate {
			return c.fault
		}
		r -= c.rate
	}
	return faultNone
}

// receiveWebhook is POST /api/bank/webhook, or the path of WithWebhookPath
// (docs/protocol.md "Submit transactions"): the password compared in
// constant time (401), the body checked with the validator of
// WithWebhookValidator (400 listing every problem), WithWebhookRefusal's
// rule, then the batch stored by orderno as WithWebhookDuplicates and
// WithWebhookStatusChange say. Faults from WithWebhookFaults are injected
// around the store; WithLog logs each request (message "webhook batch": the count, the first
// orderno, the fault, the status, the ordernos refused as duplicates or for
// WithWebhookRefusal's rule; never the password or other fields).
func (s *Server) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	a := &webhookAnswer{}
	defer a.log(s.cfg.logger)
	f := s.cfg.faults
	if !sleepCtx(r, f.Latency) {
		return
	}
	if !equalSecret(r.Header.Get("X-API-Password"), s.WebhookPassword) {
		a.status = http.StatusUnauthorized
		jsonError(w, http.StatusUnauthorized, "X-API-Password missing or wrong")
		return
	}
	a.fault = f.draw()
	switch a.fault {
	case fault500:
		a.status = http.StatusInternalServerError
		jsonError(w, http.StatusInternalServerError, "injected fault")
		return
	case fault503:
		if f.RetryAfter >= 0 {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(f.RetryAfter/time.Second))))
		}
		a.status = http.StatusServiceUnavailable
		jsonError(w, http.StatusServiceUnavailable, "injected fault")
		return
	case faultDropBefore:
		drop(w)
		return
	}
	status, answer := s.takeBatch(w, r, a)
	switch a.fault {
	case faultDropAfter:
		drop(w)
		return
	case faultSlowAfter:
		if !sleepCtx(r, f.Slow) {
			return
		}
	}
	a.status = status
	writeAnswer(w, status, answer)
}

// takeBatch reads, checks and stores one request's batch and returns the
// answer, noting in a what it took.
func (s *Server) takeBatch(w http.ResponseWriter, r *http.Request, a *webhookAnswer) (int, any) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		return http.StatusRequestEntityTooLarge, map[string]string{"status": "ERROR", "error": "body too large"}
	}
	batch, err := s.cfg.webhookRules.ValidateBatchJSON(body)
	if err != nil {
		var problems []map[string]string
		if ve, ok := err.(*zakat.ValidationError); ok {
			for _, p := range ve.Problems {
				problems = append(problems, map[string]string{"pointer": p.Field, "rule": p.Rule, "value": p.Value})
			}
		}
		return http.StatusBadRequest, map[string]any{"status": "ERROR", "errors": problems}
	}
	if a.count = len(batch.Transactions); a.count > 0 {
		a.first = batch.Transactions[0].OrderNo
	}
	status, answer, refused := s.cfg.refusal.refuse(batch)
	if status != 0 {
		a.refused = refused
		s.mu.Lock()
		s.received += len(batch.Transactions)
		s.mu.Unlock()
		return status, answer
	}
	return s.storeBatch(batch, a)
}

// storeBatch stores a valid batch by orderno and returns the answer. A
// batch holding a duplicate refused (WithWebhookDuplicates) stores nothing.
func (s *Server) storeBatch(batch *zakat.Batch, a *webhookAnswer) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received += len(batch.Transactions)
	if s.cfg.duplicates != DuplicateStoredOnce {
		var dups []int
		for i, tx := range batch.Transactions {
			if old, dup := s.webhook[tx.OrderNo]; dup && (old.Status == tx.Status || s.cfg.statusChange == StatusChangeAsDuplicate) {
				dups = append(dups, i)
				a.duplicates = append(a.duplicates, tx.OrderNo)
			}
		}
		if len(dups) > 0 {
			status := http.StatusConflict
			if s.cfg.duplicates == DuplicateUnprocessable {
				status = http.StatusUnprocessableEntity
			}
			return status, s.cfg.duplicateBody.answer(batch, dups)
		}
	}
	stored := 0
	for _, tx := range batch.Transactions {
		old, dup := s.webhook[tx.OrderNo]
		switch {
		case !dup:
			stored++
		case old.Status == tx.Status || s.cfg.statusChange != StatusChangeUpdated:
			continue
		}
		s.webhook[tx.OrderNo] = tx
	}
	return http.StatusOK, map[string]any{"status": "OK", "received": len(batch.Transactions), "stored": stored}
}

// drop closes the connection without an answer.
func drop(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // not hijackable (HTTP/2): abort the stream
}

// sleepCtx waits d unless the request ends first; false when it did.
func sleepCtx(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// Transactions returns the stored webhook transactions, by orderno.
func (s *Server) Transactions() []zakat.Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]zakat.Transaction, 0, len(s.webhook))
	for _, tx := range s.webhook {
		out = append(out, tx)
	}
	slices.SortFunc(out, func(a, b zakat.Transaction) int {
		switch {
		case a.OrderNo < b.OrderNo:
			return -1
		case a.OrderNo > b.OrderNo:
			return 1
		}
		return 0
	})
	return out
}

// WebhookRequests counts the webhook requests received, faulty ones
// included.
func (s *Server) WebhookRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// WebhookReceived counts the transactions received, repeats included.
func (s *Server) WebhookReceived() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}
