package zakat

import (
	"time"

	"github.com/paygate-go/paygate/internal/webhooktime"
)

// parseWebhookTime reads a webhook `time` (docs/protocol.md B2: "ISO 8601
// with a time-zone offset") in the forms docs/assumptions.md A-webhook-time
// lists, by internal/webhooktime's rule, which the schema's `time` pattern
// (Validator.Schema) states too.
func parseWebhookTime(s string) (time.Time, bool) { return webhooktime.Parse(s) }
