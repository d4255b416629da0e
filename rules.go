package paygate

// The rules any field of a decoded input can break: presence, JSON type,
// JSON syntax (docs/protocol.md "Errors") and text encoding (ruleUTF8:
// docs/assumptions.md A-webhook-encoding). FieldError.Rule holds one of these
// texts; the formats take WebhookValidator.WithMaxValueBytes's cap or counts.
const (
	ruleRequired     = "required"
	ruleNotEmpty     = "must not be empty"
	ruleString       = "must be a string"
	ruleNumber       = "must be a number"
	ruleObject       = "must be an object"
	ruleArray        = "must be an array"
	ruleJSON         = "must be valid JSON"
	ruleDuplicateKey = "must not repeat a key"
	ruleTooLong      = "must be at most %d bytes of JSON text (WebhookValidator.WithMaxValueBytes)"
	ruleMoreProblems = "%d more problems, not listed: only the first %d are"
	ruleKeyTooLong   = "must have no key longer than %d bytes of JSON text (WebhookValidator.WithMaxValueBytes)"
	ruleUTF8         = `must be valid UTF-8: no invalid byte and no \u escape of an unpaired surrogate (either would read as U+FFFD)`
)
