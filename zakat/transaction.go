package zakat

import (
	_ "embed"
	"time"
)

// Batch is the webhook request body (docs/protocol.md B1).
type Batch struct {
	// Schema is the optional JSON Schema reference ($schema).
	Schema string `json:"$schema,omitempty"`
	// Transactions are the records, required.
	Transactions []Transaction `json:"transactions"`
}

// Transaction is one zakat payment record (docs/protocol.md B2). Its
// Agency and its Data's State and Type take the values this package
// declares.
type Transaction struct {
	Agency  Agency `json:"agency"`  // the zakat agency the payment goes to
	OrderNo string `json:"orderno"` // unique per transaction
	Amount  Amount `json:"amount"`  // RM as a JSON number, >= 0
	Name    string `json:"name"`    // the customer's name
	Email   string `json:"email"`   // the customer's e-mail address (docs/assumptions.md A-email)
	// Time is sent as RFC 3339 with its own offset ("2026-11-22T10:30:00+08:00");
	// ValidateBatchJSON reads the other ISO 8601 forms too
	// (docs/assumptions.md A-webhook-time).
	Time   time.Time `json:"time"`
	Status Status    `json:"status"` // success, pending or failed
	Data   Data      `json:"data"`   // the zakat details (B3)
}

// Data is the transaction `data` object (docs/protocol.md B3): all fields optional
// strings; an empty field is left out of the JSON.
type Data struct {
	Email      string `json:"email,omitempty"`           // an e-mail address (docs/assumptions.md A-email)
	Name       string `json:"zakat_name,omitempty"`      // the name the zakat is paid for
	ICNo       string `json:"zakat_ic_no,omitempty"`     // 12 digits
	State      State  `json:"zakat_state,omitempty"`     // the payer's state
	Type       Type   `json:"zakat_type,omitempty"`      // the kind of zakat
	Year       string `json:"zakat_year,omitempty"`      // 4 digits
	Phone      string `json:"zakat_phone,omitempty"`     // 10 to 12 digits
	Address    string `json:"zakat_address,omitempty"`   // free text
	Postcode   string `json:"zakat_postcode,omitempty"`  // 5 digits
	City       string `json:"zakat_city,omitempty"`      // free text
	Amount     string `json:"zakat_amount,omitempty"`    // numeric, at most 2 decimals
	Rate       string `json:"zakat_rate,omitempty"`      // rice price per kg; fitrah only
	Dependants string `json:"zakat_dependant,omitempty"` // whole number (A-webhook-dependants); fitrah only
}

//go:embed schema.json
var schemaJSON []byte
