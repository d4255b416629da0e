package paygate

import "github.com/paygate-go/paygate/zakat"

// Validator returns the validator Send checks transactions with
// (WithWebhookValidator, else the zero zakat.Validator), so that a caller
// who keeps transactions to send later (package zakat/outbox) refuses the
// same ones Send would.
func (s *WebhookSender) Validator() zakat.Validator { return s.rules }
