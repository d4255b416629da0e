package gatewaytest

import (
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/paygate-go/paygate"
)

// maxWebhookBody caps a webhook request the sandbox reads.
const maxWebhookBody = 32 << 20

// receiveWebhook is POST /api/bank/webhook (spec, endpoint 7): the password
// compared in constant time (401), the body checked with
// paygate.ValidateBatchJSON (400 listing every problem), then each
// transaction stored by orderno: a repeat of a stored orderno is accepted and
// not stored twice. Faults from WithWebhookFaults come first.
func (s *Server) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	if s.cfg.latency > 0 {
		select {
		case <-time.After(s.cfg.latency):
		case <-r.Context().Done():
			return
		}
	}
	if !equalSecret(r.Header.Get("X-API-Password"), s.WebhookPassword) {
		jsonError(w, http.StatusUnauthorized, "X-API-Password missing or wrong")
		return
	}
	if s.cfg.errorRate > 0 && s.cfg.rand() < s.cfg.errorRate {
		jsonError(w, http.StatusServiceUnavailable, "injected fault")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		jsonError(w, http.StatusRequestEntityTooLarge, "body too large")
		return
	}
	batch, err := paygate.ValidateBatchJSON(body)
	if err != nil {
		var problems []map[string]string
		if ve, ok := err.(*paygate.ValidationError); ok {
			for _, p := range ve.Problems {
				problems = append(problems, map[string]string{"pointer": p.Field, "rule": p.Rule, "value": p.Value})
			}
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"status": "ERROR", "errors": problems})
		return
	}
	stored := 0
	s.mu.Lock()
	for _, tx := range batch.Transactions {
		s.received++
		if _, dup := s.webhook[tx.OrderNo]; !dup {
			s.webhook[tx.OrderNo] = tx
			stored++
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "OK", "received": len(batch.Transactions), "stored": stored})
}

// Transactions returns the stored webhook transactions, by orderno.
func (s *Server) Transactions() []paygate.Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]paygate.Transaction, 0, len(s.webhook))
	for _, tx := range s.webhook {
		out = append(out, tx)
	}
	slices.SortFunc(out, func(a, b paygate.Transaction) int {
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

// WebhookReceived counts the transactions received, repeats included.
func (s *Server) WebhookReceived() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}
