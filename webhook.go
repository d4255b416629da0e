package paygate

import (
	_ "embed"
	"slices"
	"time"
)

// Batch is the webhook request body (docs/protocol.md B1).
type Batch struct {
	// Schema is the optional JSON Schema reference ($schema).
	Schema string `json:"$schema,omitempty"`
	// Transactions are the records, required.
	Transactions []Transaction `json:"transactions"`
}

// Transaction is one zakat payment record (docs/protocol.md B2).
type Transaction struct {
	Agency  ZakatAgency `json:"agency"`  // the zakat agency the payment goes to
	OrderNo string      `json:"orderno"` // unique per transaction
	Amount  Amount      `json:"amount"`  // RM as a JSON number, >= 0
	Name    string      `json:"name"`    // the customer's name
	Email   string      `json:"email"`   // the customer's e-mail address (ValidEmail)
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
	Email      string     `json:"email,omitempty"`           // an e-mail address (ValidEmail)
	Name       string     `json:"zakat_name,omitempty"`      // the name the zakat is paid for
	ICNo       string     `json:"zakat_ic_no,omitempty"`     // 12 digits
	State      ZakatState `json:"zakat_state,omitempty"`     // the payer's state
	Type       ZakatType  `json:"zakat_type,omitempty"`      // the kind of zakat
	Year       string     `json:"zakat_year,omitempty"`      // 4 digits
	Phone      string     `json:"zakat_phone,omitempty"`     // 10 to 12 digits
	Address    string     `json:"zakat_address,omitempty"`   // free text
	Postcode   string     `json:"zakat_postcode,omitempty"`  // 5 digits
	City       string     `json:"zakat_city,omitempty"`      // free text
	Amount     string     `json:"zakat_amount,omitempty"`    // numeric, at most 2 decimals
	Rate       string     `json:"zakat_rate,omitempty"`      // rice price per kg; fitrah only
	Dependants string     `json:"zakat_dependant,omitempty"` // whole number (A-webhook-dependants); fitrah only
}

// ZakatAgency is the zakat agency a transaction is posted to
// (docs/protocol.md B2 `agency`). It is not the merchant's agency of the
// payment gateway, which is a plain string (WithAgency, Order.Agency).
type ZakatAgency string

// The agencies docs/protocol.md B2 lists, with the document's `BANK` in
// place of the brand: the default set of a WebhookValidator, which takes
// the real codes (docs/assumptions.md A-webhook-brand).
const (
	// ZakatAgencyLZS: payment to the Selangor zakat agency via the bank.
	ZakatAgencyLZS ZakatAgency = "BANKLZS"
	// ZakatAgencyPPZ: payment to the federal-territory zakat agency via the bank.
	ZakatAgencyPPZ ZakatAgency = "BANKPPZ"
	// ZakatAgencyTest: live test entries, to check that data is posted correctly.
	ZakatAgencyTest ZakatAgency = "BANK"
)

// ZakatAgencies lists every ZakatAgency value docs/protocol.md B2 allows:
// the agency codes of the zero WebhookValidator.
func ZakatAgencies() []ZakatAgency {
	return []ZakatAgency{ZakatAgencyLZS, ZakatAgencyPPZ, ZakatAgencyTest}
}

// Valid reports whether a is one of the agencies of docs/protocol.md B2.
func (a ZakatAgency) Valid() bool { return slices.Contains(ZakatAgencies(), a) }

// ZakatState is a `zakat_state` value (docs/protocol.md B3).
type ZakatState string

// The states docs/protocol.md B3 lists.
const (
	StateJohor          ZakatState = "johor"
	StateKedah          ZakatState = "kedah"
	StateKelantan       ZakatState = "kelantan"
	StateMelaka         ZakatState = "melaka"
	StateNegeriSembilan ZakatState = "negeri_sembilan"
	StatePahang         ZakatState = "pahang"
	StatePulauPinang    ZakatState = "pulau_pinang"
	StatePerak          ZakatState = "perak"
	StatePerlis         ZakatState = "perlis"
	StateSabah          ZakatState = "sabah"
	StateSarawak        ZakatState = "sarawak"
	StateSelangor       ZakatState = "selangor"
	StateTerengganu     ZakatState = "terengganu"
	StateKualaLumpur    ZakatState = "kuala_lumpur"
	StateLabuan         ZakatState = "labuan"
	StatePutrajaya      ZakatState = "putrajaya"
)

// ZakatStates lists every ZakatState value docs/protocol.md B3 allows.
func ZakatStates() []ZakatState {
	return []ZakatState{
		StateJohor, StateKedah, StateKelantan, StateMelaka, StateNegeriSembilan, StatePahang,
		StatePulauPinang, StatePerak, StatePerlis, StateSabah, StateSarawak, StateSelangor,
		StateTerengganu, StateKualaLumpur, StateLabuan, StatePutrajaya,
	}
}

// Valid reports whether s is one of the states of docs/protocol.md B3.
func (s ZakatState) Valid() bool { return slices.Contains(ZakatStates(), s) }

// ZakatType is a `zakat_type` value (docs/protocol.md B3).
type ZakatType string

// The zakat types docs/protocol.md B3 lists.
const (
	TypeFitrah      ZakatType = "fitrah"
	TypeEmas        ZakatType = "zakat_emas"
	TypeZakatFitrah ZakatType = "zakat_fitrah"
	TypeKWSP        ZakatType = "zakat_kwsp"
	TypePadi        ZakatType = "zakat_padi"
	TypePendapatan  ZakatType = "zakat_pendapatan"
	TypePerak       ZakatType = "zakat_perak"
	TypePerniagaan  ZakatType = "zakat_perniagaan"
	TypePertanian   ZakatType = "zakat_pertanian"
	TypeQada        ZakatType = "zakat_qada"
	TypeRikaz       ZakatType = "zakat_rikaz"
	TypeSaham       ZakatType = "zakat_saham"
	TypeSimpanan    ZakatType = "zakat_simpanan"
	TypeTernakan    ZakatType = "zakat_ternakan"
)

// ZakatTypes lists every ZakatType value docs/protocol.md B3 allows.
func ZakatTypes() []ZakatType {
	return []ZakatType{
		TypeFitrah, TypeEmas, TypeZakatFitrah, TypeKWSP, TypePadi, TypePendapatan, TypePerak,
		TypePerniagaan, TypePertanian, TypeQada, TypeRikaz, TypeSaham, TypeSimpanan, TypeTernakan,
	}
}

// Valid reports whether t is one of the types of docs/protocol.md B3.
func (t ZakatType) Valid() bool { return slices.Contains(ZakatTypes(), t) }

// IsFitrah reports whether t is a fitrah type (`fitrah` or `zakat_fitrah`),
// the only types that may carry zakat_rate and zakat_dependant (docs/protocol.md B3
// says `zakat_fitrah`; `fitrah` is read as the same type, docs/assumptions.md
// A-webhook-fitrah).
func (t ZakatType) IsFitrah() bool { return t == TypeFitrah || t == TypeZakatFitrah }

//go:embed webhook_schema.json
var webhookSchema []byte

// WebhookSchema returns the JSON Schema (draft 2020-12) of the webhook body,
// for banks' own tooling. It expresses every per-field rule of docs/protocol.md B1-B3; the
// cross-item rules (unique orderno, the fitrah product) are named in its
// $comment and checked by ValidateBatchJSON. Its `agency` enum is the
// document's codes; WebhookValidator.Schema has a validator's.
func WebhookSchema() []byte { return slices.Clone(webhookSchema) }
