package gatewaytest

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/paygate-go/paygate/internal/paths"
	"github.com/paygate-go/paygate/zakat"
)

// DuplicateBody is how the body of the sandbox's duplicate refusal (409 or
// 422, WithWebhookDuplicates) names the ordernos already stored: each
// reading the service might use (docs/assumptions.md A-webhook-duplicates).
type DuplicateBody int

const (
	// DuplicateBodyListed: {"status":"ERROR","message":"orderno already
	// stored","duplicates":["A","B"]} (the default).
	DuplicateBodyListed DuplicateBody = iota
	// DuplicateBodyPointers: {"status":"ERROR","errors":[{"pointer":
	// "/transactions/<i>/orderno","rule":"must be unique","value":"A"}]},
	// pointers relative to the request.
	DuplicateBodyPointers
	// DuplicateBodyText: text/plain, "orderno already stored: A, B".
	DuplicateBodyText
	// DuplicateBodyUnnamed: {"status":"ERROR","message":"duplicate
	// orderno"}, naming none of them.
	DuplicateBodyUnnamed
)

// WithWebhookDuplicateBody sets how a duplicate refusal's body names the
// stored ordernos (default DuplicateBodyListed).
func WithWebhookDuplicateBody(b DuplicateBody) Option {
	return func(c *config) { c.duplicateBody = b }
}

// WebhookRefusal makes the sandbox's webhook refuse chosen transactions
// for a server-side rule that the SDK's validator cannot know (a limit, a
// blocked payer): a batch holding one is answered Status and stores
// nothing (docs/assumptions.md A-webhook-refusals).
type WebhookRefusal struct {
	// Refuse reports whether tx breaks the rule; nil refuses none. It is
	// called from the server's goroutines, concurrently.
	Refuse func(tx zakat.Transaction) bool
	// Field and Rule name the field and the rule in the answer (default
	// "amount" and "exceeds the server-side limit").
	Field, Rule string
	// Status is the answer's status: 400 (the default) or 422.
	Status int
	// Unattributed answers {"status":"ERROR","message":"batch refused"},
	// pointing at no transaction; otherwise each refused one is named by a
	// pointer /transactions/<i>/<Field> relative to the request.
	Unattributed bool
}

// WithWebhookRefusal makes the webhook refuse the transactions r chooses.
func WithWebhookRefusal(r WebhookRefusal) Option { return func(c *config) { c.refusal = r } }

// StatusChange is what the sandbox's webhook does with a repeated orderno
// whose status differs from the stored one (a transaction posted pending,
// later success or failed): docs/protocol.md does not show it (docs/assumptions.md
// A-webhook-status-change).
type StatusChange int

const (
	// StatusChangeAsDuplicate answers it as any repeat, as
	// WithWebhookDuplicates says (the default).
	StatusChangeAsDuplicate StatusChange = iota
	// StatusChangeUpdated answers 200 and replaces the stored record.
	StatusChangeUpdated
	// StatusChangeIgnored answers 200 and keeps the stored record as it
	// was, whatever WithWebhookDuplicates says.
	StatusChangeIgnored
)

// WithWebhookStatusChange sets how a repeated orderno with another status
// is answered (default StatusChangeAsDuplicate).
func WithWebhookStatusChange(c StatusChange) Option {
	return func(cfg *config) { cfg.statusChange = c }
}

// webhookAnswer is what the webhook answered one request, for its log.
type webhookAnswer struct {
	count               int
	first               string
	fault               webhookFault
	status              int
	duplicates, refused []string
}

// faultNames name the faults in the log.
var faultNames = [...]string{faultNone: "none", fault500: "500", fault503: "503", faultDropBefore: "drop-before-store",
	faultDropAfter: "drop-after-store", faultSlowAfter: "slow-after-store"}

// log writes a's line to l, if any.
func (a *webhookAnswer) log(l *slog.Logger) {
	if l == nil {
		return
	}
	l.Info("webhook batch", slog.Int("count", a.count), slog.String("first", a.first), slog.String("fault", faultNames[a.fault]),
		slog.Int("status", a.status), slog.String("duplicates", strings.Join(a.duplicates, ",")), slog.String("refused", strings.Join(a.refused, ",")))
}

// refuse applies WithWebhookRefusal to a valid batch: the status and body
// to answer and the ordernos refused, or status 0 when none is.
func (r WebhookRefusal) refuse(batch *zakat.Batch) (int, any, []string) {
	if r.Refuse == nil {
		return 0, nil, nil
	}
	field, rule, status := r.Field, r.Rule, r.Status
	if field == "" {
		field = "amount"
	}
	if rule == "" {
		rule = "exceeds the server-side limit"
	}
	if status == 0 {
		status = http.StatusBadRequest
	}
	var refused []string
	var problems []map[string]string
	for i, tx := range batch.Transactions {
		if r.Refuse(tx) {
			refused = append(refused, tx.OrderNo)
			problems = append(problems, map[string]string{"pointer": fmt.Sprintf("/transactions/%d/%s", i, field), "rule": rule})
		}
	}
	switch {
	case refused == nil:
		return 0, nil, nil
	case r.Unattributed:
		return status, map[string]any{"status": "ERROR", "message": "batch refused"}, refused
	}
	return status, map[string]any{"status": "ERROR", "errors": problems}, refused
}

// duplicateAnswer is the body of a duplicate refusal of batch naming dups
// (positions in the batch), as WithWebhookDuplicateBody says; a string is
// written as text/plain.
func (b DuplicateBody) answer(batch *zakat.Batch, dups []int) any {
	names := make([]string, len(dups))
	for k, i := range dups {
		names[k] = batch.Transactions[i].OrderNo
	}
	switch b {
	case DuplicateBodyPointers:
		problems := make([]map[string]string, len(dups))
		for k, i := range dups {
			problems[k] = map[string]string{"pointer": fmt.Sprintf("/transactions/%d/orderno", i), "rule": "must be unique", "value": names[k]}
		}
		return map[string]any{"status": "ERROR", "errors": problems}
	case DuplicateBodyText:
		return "orderno already stored: " + strings.Join(names, ", ")
	case DuplicateBodyUnnamed:
		return map[string]any{"status": "ERROR", "message": "duplicate orderno"}
	}
	return map[string]any{"status": "ERROR", "message": "orderno already stored", "duplicates": names}
}

// writeAnswer writes v as JSON, or as text/plain when it is a string.
func writeAnswer(w http.ResponseWriter, status int, v any) {
	if s, ok := v.(string); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(s + "\n"))
		return
	}
	writeJSON(w, status, v)
}

// WithADBBrand serves the webhook as the real service does (paygate's
// WithADBBrand, docs/assumptions.md A-webhook-brand): at /api/adb/webhook,
// taking the agency codes ADBLZS, ADBPPZ and ADB (zakat.ADBAgencies).
// Server.WebhookURL and Server.WebhookSender follow it.
func WithADBBrand() Option {
	return func(c *config) {
		c.webhookPath = paths.ADBWebhook
		c.webhookRules, _ = zakat.NewValidator(zakat.ADBAgencies()...) // valid codes: no error
	}
}

// validateWebhookReadings refuses a webhook switch out of its range.
func (cfg *config) validateWebhookReadings() error {
	switch {
	case cfg.duplicateBody < DuplicateBodyListed || cfg.duplicateBody > DuplicateBodyUnnamed:
		return fmt.Errorf("WithWebhookDuplicateBody: %d: want one of the DuplicateBody values", cfg.duplicateBody)
	case cfg.statusChange < StatusChangeAsDuplicate || cfg.statusChange > StatusChangeIgnored:
		return fmt.Errorf("WithWebhookStatusChange: %d: want one of the StatusChange values", cfg.statusChange)
	case cfg.refusal.Status != 0 && cfg.refusal.Status != http.StatusBadRequest && cfg.refusal.Status != http.StatusUnprocessableEntity:
		return fmt.Errorf("WithWebhookRefusal: Status %d: want 400 or 422", cfg.refusal.Status)
	}
	return nil
}
