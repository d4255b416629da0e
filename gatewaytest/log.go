package gatewaytest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"
)

// WithLog makes the sandbox write one line to l for each thing it does
// that a merchant's code meets: each direct-callback attempt (reference,
// attempt, lost or duplicated, the handler's status and time) and each
// order lookup it answers, and each webhook batch it takes. It is the
// sandbox's one log: every part of it writes here (paygate sandbox gives
// a text logger on standard error). Nil, the default, is silent.
func WithLog(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// logf writes one line to WithLog's logger, if any.
func (s *Server) logf(msg string, args ...any) {
	if l := s.cfg.logger; l != nil {
		l.Log(context.Background(), slog.LevelInfo, msg, args...)
	}
}

// WithLookupFailures answers 503, with no record, each order lookup whose
// reference (as asked, refNo~extraData) fail matches at that moment: a
// gateway whose reports host is failing, for testing a reconciliation's
// retries and budget. fail is called from the sandbox's own goroutines.
func WithLookupFailures(fail func(refNo string) bool) Option {
	return func(c *config) { c.failLookup = fail }
}

// Lookup is one order lookup the sandbox answered.
type Lookup struct {
	At         time.Time // when it was answered
	RefNo      string    // the reference asked for
	StatusCode int       // the answer's status
}

// Lookups returns every order lookup answered so far, oldest first.
func (s *Server) Lookups() []Lookup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lookups)
}

// lookedUp records and logs a lookup of ref answered code.
func (s *Server) lookedUp(ref string, code int, began time.Time) {
	l := Lookup{At: s.cfg.now(), RefNo: ref, StatusCode: code}
	s.mu.Lock()
	s.lookups = append(s.lookups, l)
	s.mu.Unlock()
	s.logf("lookup", "refNo", ref, "status", code, "answer", http.StatusText(code), "took", time.Since(began).Round(time.Microsecond))
}

// logAttempts writes one line per copy of attempt n of d's callback.
func (s *Server) logAttempts(d *Delivery, n int, attempts []Attempt) {
	for i, a := range attempts {
		args := []any{"refNo", d.RefNo, "status", string(d.Status), "attempt", n}
		if len(attempts) > 1 {
			args = append(args, "duplicate", fmt.Sprintf("%d/%d", i+1, len(attempts)))
		}
		if d.Stale {
			args = append(args, "stale", true)
		}
		if a.Err != "" {
			args = append(args, "answer", "no answer", "err", a.Err)
		} else {
			args = append(args, "answer", a.StatusCode)
		}
		s.logf("callback", append(args, "took", a.Took.Round(time.Microsecond))...)
	}
}
