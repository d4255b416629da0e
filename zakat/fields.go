package zakat

import (
	"github.com/paygate-go/paygate/internal/jsonscan"
	"github.com/paygate-go/paygate/internal/sen"
)

//go:generate go test -run TestGeneratedLookups -update-lookups .

// The rules of a webhook transaction that are not one field's own
// (docs/protocol.md B2, B3, Errors): FieldError.Rule holds one of these
// texts, or the rule of a row of txFields or zakatFields.
const (
	ruleUnique        = "must be unique in the batch"
	ruleFitrahOnly    = "allowed only when zakat_type is fitrah or zakat_fitrah"
	ruleFitrahProduct = "must equal zakat_rate x zakat_dependant"
)

// The rules of the transaction fields (docs/protocol.md B2), which tests
// and the amount's decoding share.
const (
	ruleStatus    = "must be one of success, pending, failed"
	ruleAmountMin = "must be >= 0"
	ruleAmountSen = "must be exact in sen (at most 2 decimals)"
	ruleTime      = "must be ISO 8601 with a timezone offset (Z, +08:00 or +0800), e.g. 2026-11-22T10:30:00+08:00"
)

// jsonKind is the JSON type a transaction field must have.
type jsonKind uint8

const (
	kindString jsonKind = iota
	kindNumber
	kindObject
)

// The webhook fields are declared once, as rows of txFields and
// zakatFields: a row holds the JSON key, how the value is read and stored
// and its rule, and the bits, the key lookups and the rule texts derive
// from the rows. A new field or rule is a row, plus its property in
// schema.json (TestSchemaNamesTheTableFields holds the schema's
// names to the rows, TestWebhookSchemaAgreement its rules to the
// validator's), then `go generate` for the lookups (TestGeneratedLookups).

// txField is one field of a transaction (docs/protocol.md B2): its JSON key
// and type, how a value read from JSON is stored, when a typed
// transaction leaves it out, and its value rule. Bit i of a transaction's
// masks is txFields[i].
type txField struct {
	name string
	kind jsonKind
	// store keeps a string read from JSON (kindString, when parse is nil).
	store func(tx *Transaction, s string)
	// parse reads a value from its JSON text (kindNumber, or a kindString
	// not stored as it is), keeping in p what must outlive the text, and
	// returns the rule it breaks, or "".
	parse func(tx *Transaction, p *jsonscan.Scanner[[]byte], text []byte) (rule string)
	// absent reports whether a typed transaction leaves the field out
	// (ValidateTransactions); nil: never.
	absent func(tx *Transaction) bool
	// text is a typed transaction's string, which must be valid UTF-8
	// (ValidateTransactions, ruleUTF8); nil: the field is not a string.
	text func(tx *Transaction) string
	// check returns the rule a present value breaks and the value to
	// show, or "" (it builds neither when the value is good: it runs on
	// every transaction); nil: no rule beyond reading it.
	check func(tx *Transaction, rules Validator) (rule, value string)
}

// txFields lists the fields of docs/protocol.md B2 in JSON order, every one
// required; orderno and name must not be empty either (docs/assumptions.md
// A-webhook-nonempty). Read-only. After a change, `go generate` rewrites txIndex.
var txFields = [...]txField{
	{
		name:   "agency",
		text:   func(tx *Transaction) string { return string(tx.Agency) },
		store:  func(tx *Transaction, s string) { tx.Agency = Agency(s) },
		absent: func(tx *Transaction) bool { return tx.Agency == "" },
		check: func(tx *Transaction, rules Validator) (string, string) {
			if rules.Accepts(tx.Agency) {
				return "", ""
			}
			return rules.agencyRule(), string(tx.Agency)
		},
	},
	{
		name:   "orderno",
		text:   func(tx *Transaction) string { return tx.OrderNo },
		store:  func(tx *Transaction, s string) { tx.OrderNo = s },
		absent: func(tx *Transaction) bool { return tx.OrderNo == "" },
		check: func(tx *Transaction, _ Validator) (string, string) {
			return ruleIf(tx.OrderNo == "", ruleNotEmpty), ""
		},
	},
	{
		name:  "amount",
		kind:  kindNumber,
		parse: parseAmount,
		check: func(tx *Transaction, _ Validator) (string, string) {
			if tx.Amount >= 0 {
				return "", ""
			}
			return ruleAmountMin, tx.Amount.String()
		},
	},
	{
		name:   "name",
		text:   func(tx *Transaction) string { return tx.Name },
		store:  func(tx *Transaction, s string) { tx.Name = s },
		absent: func(tx *Transaction) bool { return tx.Name == "" },
		check: func(tx *Transaction, _ Validator) (string, string) {
			return ruleIf(tx.Name == "", ruleNotEmpty), ""
		},
	},
	{
		name:   "email",
		text:   func(tx *Transaction) string { return tx.Email },
		store:  func(tx *Transaction, s string) { tx.Email = s },
		absent: func(tx *Transaction) bool { return tx.Email == "" },
		check: func(tx *Transaction, _ Validator) (string, string) {
			return ruleIf(!validEmail(tx.Email), ruleEmail), tx.Email
		},
	},
	{
		name:   "time",
		parse:  parseTime,
		absent: func(tx *Transaction) bool { return tx.Time.IsZero() },
	},
	{
		name:   "status",
		text:   func(tx *Transaction) string { return string(tx.Status) },
		store:  func(tx *Transaction, s string) { tx.Status = Status(s) },
		absent: func(tx *Transaction) bool { return tx.Status == "" },
		check: func(tx *Transaction, _ Validator) (string, string) {
			return ruleIf(!tx.Status.Valid(), ruleStatus), string(tx.Status)
		},
	},
	{name: "data", kind: kindObject}, // the rows of zakatFields
}

// ruleIf is rule when broken, else "".
func ruleIf(broken bool, rule string) string {
	if broken {
		return rule
	}
	return ""
}

// parseAmount reads an amount from its JSON number: RM, exact in sen, not
// negative (docs/protocol.md B2).
func parseAmount(tx *Transaction, p *jsonscan.Scanner[[]byte], text []byte) string {
	num := p.Keep(text) // in the arena: converted, it would escape with the error
	v, err := sen.FromJSONNumber(num)
	switch {
	case err == nil:
		tx.Amount = Amount(v)
		return ""
	case num[0] == '-':
		return ruleAmountMin
	}
	return ruleAmountSen
}

// parseTime reads a time from its JSON string (parseWebhookTime).
func parseTime(tx *Transaction, _ *jsonscan.Scanner[[]byte], text []byte) string {
	t, ok := parseWebhookTime(string(text))
	tx.Time = t
	return ruleIf(!ok, ruleTime)
}

// zakatField is one string field of the data object (docs/protocol.md B3)
// with its rule.
type zakatField struct {
	name  string
	ptr   func(*Data) *string
	valid func(string) bool // nil: any string
	rule  string            // the text of a broken valid
	// fitrahOnly: allowed only for a fitrah zakat_type (ruleFitrahOnly).
	fitrahOnly bool
}

// zakatFields lists the data fields in JSON order, every one optional; bit i
// of a data mask is zakatFields[i]. Read-only. After a change, `go
// generate` rewrites zakatIndex.
var zakatFields = [...]zakatField{
	{name: "email", ptr: func(d *Data) *string { return &d.Email }, valid: validEmail, rule: ruleEmail},
	{name: "zakat_name", ptr: func(d *Data) *string { return &d.Name }},
	{name: "zakat_ic_no", ptr: func(d *Data) *string { return &d.ICNo }, valid: digits(12, 12), rule: "must be 12 digits"},
	{name: "zakat_state", ptr: func(d *Data) *string { return (*string)(&d.State) }, valid: func(s string) bool { return State(s).Valid() },
		rule: "must be one of johor, kedah, kelantan, melaka, negeri_sembilan, pahang, pulau_pinang, perak, perlis, sabah, sarawak, selangor, terengganu, kuala_lumpur, labuan, putrajaya"},
	{name: "zakat_type", ptr: func(d *Data) *string { return (*string)(&d.Type) }, valid: func(s string) bool { return Type(s).Valid() },
		rule: "must be one of fitrah, zakat_emas, zakat_fitrah, zakat_kwsp, zakat_padi, zakat_pendapatan, zakat_perak, zakat_perniagaan, zakat_pertanian, zakat_qada, zakat_rikaz, zakat_saham, zakat_simpanan, zakat_ternakan"},
	{name: "zakat_year", ptr: func(d *Data) *string { return &d.Year }, valid: digits(4, 4), rule: "must be 4 digits"},
	{name: "zakat_phone", ptr: func(d *Data) *string { return &d.Phone }, valid: digits(10, 12), rule: "must be 10 to 12 digits"},
	{name: "zakat_address", ptr: func(d *Data) *string { return &d.Address }},
	{name: "zakat_postcode", ptr: func(d *Data) *string { return &d.Postcode }, valid: digits(5, 5), rule: "must be 5 digits"},
	{name: "zakat_city", ptr: func(d *Data) *string { return &d.City }},
	{name: "zakat_amount", ptr: func(d *Data) *string { return &d.Amount }, valid: decimal(2), rule: "must be numeric with at most 2 decimals"},
	{name: "zakat_rate", ptr: func(d *Data) *string { return &d.Rate }, valid: decimal(-1), rule: "must be numeric", fitrahOnly: true},
	{name: "zakat_dependant", ptr: func(d *Data) *string { return &d.Dependants }, valid: digits(1, -1), rule: "must be a whole number", fitrahOnly: true}, // A-webhook-dependants
}

// The bits the rules of more than one field read, derived from the tables.
// Read-only.
var (
	txOrderNo   = rowBit(txFields[:], "orderno")
	txAmount    = rowBit(txFields[:], "amount")
	txData      = rowBit(txFields[:], "data")
	txAll       = uint16(1)<<len(txFields) - 1
	zdRate      = rowBit(zakatFields[:], "zakat_rate")
	zdDependant = rowBit(zakatFields[:], "zakat_dependant")
)

// rowBit is the mask bit of the row of rows with the JSON key name. A
// name missing from its table is a programming error of the package's own
// tables, so it panics: the package does not start with a broken table, and
// every test run shows it.
func rowBit[R interface{ key() string }](rows []R, name string) uint16 {
	for i, r := range rows {
		if r.key() == name {
			return 1 << i
		}
	}
	panic("paygate: " + name + " is not a field of its table")
}

func (f txField) key() string    { return f.name }
func (f zakatField) key() string { return f.name }

// digits returns a check for lo to hi ASCII digits (hi < 0: no upper bound).
func digits(lo, hi int) func(string) bool {
	return func(s string) bool {
		return len(s) >= lo && (hi < 0 || len(s) <= hi) && sen.NonDigit(s) < 0
	}
}

// decimal returns a check for digits with an optional fraction of at most
// places digits (places < 0: any number of them, at least one).
func decimal(places int) func(string) bool {
	return func(s string) bool {
		whole, frac, dot := cutByte(s, '.')
		if whole == "" || sen.NonDigit(whole) >= 0 {
			return false
		}
		if !dot {
			return true
		}
		return frac != "" && sen.NonDigit(frac) < 0 && (places < 0 || len(frac) <= places)
	}
}

// cutByte is strings.Cut for one byte.
func cutByte(s string, c byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
