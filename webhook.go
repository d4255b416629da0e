package paygate

import (
	_ "embed"
	"slices"
	"time"

	"github.com/paygate-go/paygate/zakat"
)

// Batch is the webhook request body (docs/protocol.md B1).
type Batch struct {
	// Schema is the optional JSON Schema reference ($schema).
	Schema string `json:"$schema,omitempty"`
	// Transactions are the records, required.
	Transactions []Transaction `json:"transactions"`
}

// Transaction is one zakat payment record (docs/protocol.md B2). Its
// Agency and its Data's State and Type take the values of package zakat.
type Transaction struct {
	Agency  zakat.Agency `json:"agency"`  // the zakat agency the payment goes to
	OrderNo string       `json:"orderno"` // unique per transaction
	Amount  Amount       `json:"amount"`  // RM as a JSON number, >= 0
	Name    string       `json:"name"`    // the customer's name
	Email   string       `json:"email"`   // the customer's e-mail address (docs/assumptions.md A-email)
	// Time is sent as RFC 3339 with its own offset ("2026-11-22T10:30:00+08:00");
	// ValidateBatchJSON reads the other ISO 8601 forms too
	// (docs/assumptions.md A-webhook-time).
	Time   time.Time `json:"time"`
	Status Status    `json:"status"` // success, pending or failed
	Data   ZakatData `json:"data"`   // the zakat details (B3)
}

// ZakatData is the transaction `data` object (docs/protocol.md B3): all fields optional
// strings; an empty field is left out of the JSON.
type ZakatData struct {
	Email      string      `json:"email,omitempty"`           // an e-mail address (docs/assumptions.md A-email)
	Name       string      `json:"zakat_name,omitempty"`      // the name the zakat is paid for
	ICNo       string      `json:"zakat_ic_no,omitempty"`     // 12 digits
	State      zakat.State `json:"zakat_state,omitempty"`     // the payer's state
	Type       zakat.Type  `json:"zakat_type,omitempty"`      // the kind of zakat
	Year       string      `json:"zakat_year,omitempty"`      // 4 digits
	Phone      string      `json:"zakat_phone,omitempty"`     // 10 to 12 digits
	Address    string      `json:"zakat_address,omitempty"`   // free text
	Postcode   string      `json:"zakat_postcode,omitempty"`  // 5 digits
	City       string      `json:"zakat_city,omitempty"`      // free text
	Amount     string      `json:"zakat_amount,omitempty"`    // numeric, at most 2 decimals
	Rate       string      `json:"zakat_rate,omitempty"`      // rice price per kg; fitrah only
	Dependants string      `json:"zakat_dependant,omitempty"` // whole number (A-webhook-dependants); fitrah only
}

//go:embed webhook_schema.json
var webhookSchema []byte

// WebhookSchema returns the JSON Schema (draft 2020-12) of the webhook body,
// for banks' own tooling. It expresses every per-field rule of docs/protocol.md B1-B3; the
// cross-item rules (unique orderno, the fitrah product) are named in its
// $comment and checked by ValidateBatchJSON. Its `agency` enum is the
// document's codes; WebhookValidator.Schema has a validator's.
func WebhookSchema() []byte { return slices.Clone(webhookSchema) }
