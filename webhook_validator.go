package paygate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/internal/jsonscan"
	"github.com/paygate-go/paygate/zakat"
)

// WebhookValidator checks webhook records against docs/protocol.md B1-B3
// with a set of agency codes: the zero value the document's (BANKLZS,
// BANKPPZ, BANK), NewWebhookValidator others, such as the real service's
// (docs/assumptions.md A-webhook-brand; both sets in package zakat). Its
// Schema, a WebhookSender given it and the sandbox then agree on the set.
// Reading JSON it caps each value at DefaultMaxValueBytes
// (WithMaxValueBytes) and nesting at 10,000 levels
// (docs/assumptions.md A-webhook-value-cap). A value, safe to copy and
// for concurrent use.
type WebhookValidator struct {
	agencies []zakat.Agency // nil: zakat.Agencies()
	maxValue int            // 0: DefaultMaxValueBytes
}

// DefaultMaxValueBytes is the longest string or number, in bytes of JSON
// text (quotes excluded), a WebhookValidator reads as a value: 64 KiB. The
// protocol gives webhook fields no length (docs/protocol.md B2, B3); 64 KiB
// is 256 times what an order field may hold. An assumption:
// docs/assumptions.md A-webhook-value-cap.
const DefaultMaxValueBytes = 64 << 10

// WithMaxValueBytes returns a copy of v whose ValidateBatchJSON and
// ValidateBatchReader report any string or number (key included) longer
// than n bytes of JSON text, quotes excluded, as a problem at its JSON
// pointer ("must be at most n bytes ...") and read through it without
// keeping it; n < 1 means DefaultMaxValueBytes. ValidateBatchReader's
// memory grows with n (about n plus two 256 KiB windows).
func (v WebhookValidator) WithMaxValueBytes(n int) WebhookValidator {
	v.maxValue = max(n, 0)
	return v
}

// maxValueBytes is the value cap in force.
func (v WebhookValidator) maxValueBytes() int {
	if v.maxValue == 0 {
		return DefaultMaxValueBytes
	}
	return v.maxValue
}

// maxAgencyCode bounds the length of an agency code NewWebhookValidator
// takes.
const maxAgencyCode = 64

// NewWebhookValidator makes a validator whose `agency` rule accepts
// exactly the given codes, in that order in messages and in the schema; no
// codes at all means the document's (zakat.Agencies). Each code is 1 to 64
// ASCII letters, digits, '_' or '-', and none is given twice; anything else
// is an error naming the code. zakat.ADBAgencies are the real service's
// codes; zakat.ParseAgencies reads a comma-separated list of codes
// (PAYGATE_WEBHOOK_AGENCIES).
func NewWebhookValidator(agencies ...zakat.Agency) (WebhookValidator, error) {
	if len(agencies) == 0 {
		return WebhookValidator{}, nil
	}
	for i, a := range agencies {
		if !validAgencyCode(string(a)) {
			return WebhookValidator{}, fmt.Errorf("paygate: webhook agency %q: want 1 to %d ASCII letters, digits, '_' or '-'", string(a), maxAgencyCode)
		}
		if slices.Contains(agencies[:i], a) {
			return WebhookValidator{}, fmt.Errorf("paygate: webhook agency %q: given twice", string(a))
		}
	}
	return WebhookValidator{agencies: slices.Clone(agencies)}, nil
}

// validAgencyCode is NewWebhookValidator's rule for one code.
func validAgencyCode(s string) bool {
	if s == "" || len(s) > maxAgencyCode {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Agencies lists the codes the `agency` rule accepts.
func (v WebhookValidator) Agencies() []zakat.Agency {
	if v.agencies == nil {
		return zakat.Agencies()
	}
	return slices.Clone(v.agencies)
}

// Accepts reports whether a is one of the configured agency codes.
func (v WebhookValidator) Accepts(a zakat.Agency) bool {
	if v.agencies == nil {
		return a.Valid()
	}
	return slices.Contains(v.agencies, a)
}

// agencyRule is the text of a broken `agency` rule: the codes in force,
// whose they are, and how to set others (agencyRuleHow).
func (v WebhookValidator) agencyRule() string {
	which := "the codes in force"
	if v.agencies == nil {
		which = "the document's placeholders, the default; the real service's are " + joinAgencies(zakat.ADBAgencies())
	}
	return "must be one of " + joinAgencies(v.Agencies()) + " (" + which + "; " + agencyRuleHow + ")"
}

// agencyRuleHow names every way to set the agency codes, for agencyRule.
const agencyRuleHow = "set them with NewWebhookValidator, PAYGATE_WEBHOOK_AGENCIES or the CLI's -agencies"

// joinAgencies lists codes, comma-separated.
func joinAgencies(codes []zakat.Agency) string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// ValidateTransactions is the package's ValidateTransactions with this
// validator's agency codes.
func (v WebhookValidator) ValidateTransactions(txs []Transaction) error {
	return validateTransactions(txs, v)
}

// ValidateBatchJSON is the package's ValidateBatchJSON with this
// validator's agency codes.
func (v WebhookValidator) ValidateBatchJSON(body []byte) (*Batch, error) {
	return validateBatchJSON(body, v)
}

// ValidateBatchReader is the package's ValidateBatchReader with this
// validator's agency codes.
func (v WebhookValidator) ValidateBatchReader(r io.Reader) (int, error) {
	return validateStream(r, jsonscan.Chunk, v)
}

// defaultAgencyEnum is the agency enum of the embedded schema, which Schema
// replaces.
const defaultAgencyEnum = `"enum": [
            "BANKLZS",
            "BANKPPZ",
            "BANK"
          ]`

// Schema is WebhookSchema with this validator's agency codes in the
// `agency` enum; the rest of the schema is the same.
func (v WebhookValidator) Schema() []byte {
	if v.agencies == nil {
		return WebhookSchema()
	}
	return v.schemaFrom(webhookSchema)
}

// schemaFrom is Schema over base, the embedded schema, its line ends made
// LF first: a checkout by Git for Windows (core.autocrlf) embeds CRLF,
// where the enum was not found and the document's codes came back as this
// validator's.
func (v WebhookValidator) schemaFrom(base []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`"enum": [`)
	for i, a := range v.agencies {
		if i > 0 {
			b.WriteByte(',')
		}
		code, _ := json.Marshal(string(a)) // a string always encodes
		b.WriteString("\n            ")
		b.Write(code)
	}
	b.WriteString("\n          ]")
	base = bytes.ReplaceAll(base, []byte("\r\n"), []byte("\n"))
	return bytes.Replace(base, []byte(defaultAgencyEnum), b.Bytes(), 1)
}
