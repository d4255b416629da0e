package gatewaytest

import "net/http"

// The lost-create switches model an order POST whose answer never reaches
// the merchant (docs/assumptions.md A-create-or-find): the connection is
// closed without an answer (the handler panics with http.ErrAbortHandler)
// at a chosen instant of the create, so that a test sees what the merchant
// sees, a reset after sending, while the sandbox holds, or does not hold,
// the order. An order "in flight" is kept aside and lands (is stored) just
// after the next lookup of its reference has been read, before that
// lookup's answer is written, or before the next create of its reference:
// the create the merchant gave up on reached the service late.

// CreateLoss is when WithLostCreateAnswers loses a create's answer.
type CreateLoss int

// The instants of a lost answer, after the create passed every check.
const (
	// KeepAnswer: the create is answered as usual.
	KeepAnswer CreateLoss = iota
	// LoseBeforeStore: the connection closes before the order is stored:
	// no order.
	LoseBeforeStore
	// LoseAfterStore: the order is stored (or refused, its reference being
	// taken), then the connection closes without an answer.
	LoseAfterStore
	// LoseInFlight: the connection closes at once and the order lands
	// later: after the next lookup of its reference has been read, or
	// before the next create of it.
	LoseInFlight
)

// WithLostCreateAnswers makes the sandbox lose the answer of an order
// POST (CreateOrder; not a pay link) at the instant lose gives for it,
// called once per create with the reference as sent (refNo~extraData),
// from the sandbox's goroutines, concurrently; it must not call the
// Server. An order that does not pass the checks is answered as usual.
func WithLostCreateAnswers(lose func(refNo string) CreateLoss) Option {
	return func(c *config) { c.loseCreate = lose }
}

// WithRepeatedRefNos makes the sandbox store an order under a reference
// that an order already holds, as a service that does not refuse a
// reference twice would (the protocol does not say whether it does); the
// lookup then finds the latest. By default a second order with the same
// reference is refused (409) unless the first failed.
func WithRepeatedRefNos() Option { return func(c *config) { c.repeatedRefNos = true } }

// loseCreate applies WithLostCreateAnswers to a checked order before it is
// stored: it aborts the request for LoseBeforeStore and LoseInFlight (the
// latter keeping the order aside), and otherwise lands an earlier create
// of the reference still in flight and returns the instant, for the
// caller to abort after storing.
func (s *Server) loseCreate(o *Order) CreateLoss {
	loss := KeepAnswer
	if s.cfg.loseCreate != nil {
		loss = s.cfg.loseCreate(o.RefNo)
	}
	if loss == LoseInFlight {
		s.mu.Lock()
		if s.inFlight == nil {
			s.inFlight = map[string]*Order{}
		}
		s.inFlight[o.RefNo] = o
		s.mu.Unlock()
	}
	if loss == LoseBeforeStore || loss == LoseInFlight {
		panic(http.ErrAbortHandler)
	}
	s.land(o.RefNo)
	return loss
}

// land stores the create of refNo still in flight, if any; one refused
// (its reference taken meanwhile) is dropped, as the service would refuse
// it.
func (s *Server) land(refNo string) {
	s.mu.Lock()
	o, ok := s.inFlight[refNo]
	delete(s.inFlight, refNo)
	s.mu.Unlock()
	if ok {
		_ = s.store(o)
	}
}
