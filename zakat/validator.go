package zakat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// Validator checks webhook records against docs/protocol.md B1-B3
// with a set of agency codes: the zero value the document's (BANKLZS,
// BANKPPZ, BANK), NewValidator others, such as the real service's
// (docs/assumptions.md A-webhook-brand; Agencies and ADBAgencies). Its
// Schema, a paygate.WebhookSender given it and the sandbox then agree on the set.
// Reading JSON it caps each value at DefaultMaxValueBytes
// (WithMaxValueBytes) and nesting at 10,000 levels
// (docs/assumptions.md A-webhook-value-cap). A value, safe to copy and
// for concurrent use.
type Validator struct {
	agencies []Agency // nil: Agencies()
	maxValue int      // 0: DefaultMaxValueBytes
}

// DefaultMaxValueBytes is the longest string or number, in bytes of JSON
// text (quotes excluded), a Validator reads as a value: 64 KiB. The
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
func (v Validator) WithMaxValueBytes(n int) Validator {
	v.maxValue = max(n, 0)
	return v
}

// maxValueBytes is the value cap in force.
func (v Validator) maxValueBytes() int {
	if v.maxValue == 0 {
		return DefaultMaxValueBytes
	}
	return v.maxValue
}

// maxAgencyCode bounds the length of an agency code NewValidator
// takes.
const maxAgencyCode = 64

// NewValidator makes a validator whose `agency` rule accepts
// exactly the given codes, in that order in messages and in the schema; no
// codes at all means the document's (Agencies). Each code is 1 to 64
// ASCII letters, digits, '_' or '-', and none is given twice; anything else
// is an error naming the code. ADBAgencies are the real service's
// codes; ParseAgencies reads a comma-separated list of codes
// (PAYGATE_WEBHOOK_AGENCIES).
func NewValidator(agencies ...Agency) (Validator, error) {
	if len(agencies) == 0 {
		return Validator{}, nil
	}
	for i, a := range agencies {
		if !validAgencyCode(string(a)) {
			return Validator{}, fmt.Errorf("paygate: webhook agency %q: want 1 to %d ASCII letters, digits, '_' or '-'", string(a), maxAgencyCode)
		}
		if slices.Contains(agencies[:i], a) {
			return Validator{}, fmt.Errorf("paygate: webhook agency %q: given twice", string(a))
		}
	}
	return Validator{agencies: slices.Clone(agencies)}, nil
}

// validAgencyCode is NewValidator's rule for one code.
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
func (v Validator) Agencies() []Agency {
	if v.agencies == nil {
		return Agencies()
	}
	return slices.Clone(v.agencies)
}

// Accepts reports whether a is one of the configured agency codes.
func (v Validator) Accepts(a Agency) bool {
	if v.agencies == nil {
		return a.Valid()
	}
	return slices.Contains(v.agencies, a)
}

// agencyRule is the text of a broken `agency` rule: the codes in force,
// whose they are, and how to set others (agencyRuleHow).
func (v Validator) agencyRule() string {
	which := "the codes in force"
	if v.agencies == nil {
		which = "the document's placeholders, the default; the real service's are " + joinAgencies(ADBAgencies())
	}
	return "must be one of " + joinAgencies(v.Agencies()) + " (" + which + "; " + agencyRuleHow + ")"
}

// agencyRuleHow names every way to set the agency codes, for agencyRule.
const agencyRuleHow = "set them with zakat.NewValidator, PAYGATE_WEBHOOK_AGENCIES or the CLI's -agencies"

// joinAgencies lists codes, comma-separated.
func joinAgencies(codes []Agency) string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// ValidateTransactions checks typed transactions against every rule of docs/protocol.md
// B2, B3 and Errors, reporting all problems at once in a *ValidationError
// whose fields are JSON pointers (/transactions/3/data/zakat_ic_no). An empty
// string (or zero Time) counts as absent: required fields must be set,
// optional data fields are checked only when set. A string that is not
// valid UTF-8 is a problem of its field (json.Marshal would send U+FFFD in
// place of its bad bytes: an assumption, docs/assumptions.md
// A-webhook-encoding).
func (v Validator) ValidateTransactions(txs []Transaction) error {
	return validateTransactions(txs, v)
}

// ValidateBatchJSON reads a raw webhook body (docs/protocol.md B1) and
// checks every rule of B1-B3, reporting all problems at once in a
// *ValidationError, each named by its JSON pointer (field "" for a body
// that is not JSON). Keys match exactly, a key given twice is a problem
// (A-webhook-keys), and a kept string that is not valid UTF-8 is a problem
// of its field, never read as U+FFFD (A-webhook-encoding). With no problem
// it returns the typed batch, whose strings are copies.
func (v Validator) ValidateBatchJSON(body []byte) (*Batch, error) {
	return validateBatchJSON(body, v)
}

// ValidateBatchReader is ValidateBatchJSON for a body read from r a window
// at a time: it reports exactly the same problems, in the same order, and
// returns the number of transactions read. Its memory is bounded whatever
// the bytes: about two 256 KiB windows, at most 8 MiB of ordernos (the
// rest spilled, sorted, to a temporary file removed before it returns),
// and the first 1,000 problems (docs/assumptions.md A-webhook-value-cap).
// An error reading r or the temporary file is returned as it is, not a
// *ValidationError: the batch was not wholly checked.
func (v Validator) ValidateBatchReader(r io.Reader) (int, error) {
	return validateStream(r, jsonscan.Chunk, v)
}

// defaultAgencyEnum is the agency enum of the embedded schema, which Schema
// replaces.
const defaultAgencyEnum = `"enum": [
            "BANKLZS",
            "BANKPPZ",
            "BANK"
          ]`

// Schema returns the JSON Schema (draft 2020-12) of the webhook body, for
// banks' own tooling, with v's agency codes in the `agency` enum. It
// expresses every per-field rule of docs/protocol.md B1-B3; the cross-item
// rules (unique orderno, the fitrah product) are named in its $comment and
// checked by ValidateBatchJSON. Each call returns a new slice.
func (v Validator) Schema() []byte {
	if v.agencies == nil {
		return slices.Clone(schemaJSON)
	}
	return v.schemaFrom(schemaJSON)
}

// schemaFrom is Schema over base, the embedded schema, its line ends made
// LF first: a checkout by Git for Windows (core.autocrlf) embeds CRLF,
// where the enum was not found and the document's codes came back as this
// validator's.
func (v Validator) schemaFrom(base []byte) []byte {
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

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
