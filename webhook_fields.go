package paygate

// The rules a webhook field can break (docs/protocol.md B2, B3, Errors). FieldError.Rule
// holds one of these texts.
const (
	ruleStatus        = "must be one of success, pending, failed"
	ruleState         = "must be one of johor, kedah, kelantan, melaka, negeri_sembilan, pahang, pulau_pinang, perak, perlis, sabah, sarawak, selangor, terengganu, kuala_lumpur, labuan, putrajaya"
	ruleType          = "must be one of fitrah, zakat_emas, zakat_fitrah, zakat_kwsp, zakat_padi, zakat_pendapatan, zakat_perak, zakat_perniagaan, zakat_pertanian, zakat_qada, zakat_rikaz, zakat_saham, zakat_simpanan, zakat_ternakan"
	ruleUnique        = "must be unique in the batch"
	ruleAmountMin     = "must be >= 0"
	ruleAmountSen     = "must be exact in sen (at most 2 decimals)"
	ruleTime          = "must be ISO 8601 with a timezone offset (Z, +08:00 or +0800), e.g. 2026-11-22T10:30:00+08:00"
	ruleICNo          = "must be 12 digits"
	ruleYear          = "must be 4 digits"
	rulePhone         = "must be 10 to 12 digits"
	rulePostcode      = "must be 5 digits"
	ruleZakatAmount   = "must be numeric with at most 2 decimals"
	ruleRate          = "must be numeric"
	ruleDependant     = "must be a whole number"
	ruleFitrahOnly    = "allowed only when zakat_type is fitrah or zakat_fitrah"
	ruleFitrahProduct = "must equal zakat_rate x zakat_dependant"
)

// Bits of a transaction's fields, for the masks that say which are present
// and which were already reported.
const (
	txAgency uint16 = 1 << iota
	txOrderNo
	txAmount
	txName
	txEmail
	txTime
	txStatus
	txData
	txAll uint16 = 1<<iota - 1
)

// txFields names the fields of docs/protocol.md B2 in the order of their bits.
var txFields = [...]string{"agency", "orderno", "amount", "name", "email", "time", "status", "data"}

// zakatField is one string field of the data object (docs/protocol.md B3) with its rule.
type zakatField struct {
	name  string
	ptr   func(*ZakatData) *string
	valid func(string) bool
	rule  string
}

// zakatFields lists the data fields in JSON order; bit i of a data mask is
// zakatFields[i]. Read-only.
var zakatFields = [...]zakatField{
	{"email", func(d *ZakatData) *string { return &d.Email }, ValidEmail, ruleEmail},
	{"zakat_name", func(d *ZakatData) *string { return &d.Name }, nil, ""},
	{"zakat_ic_no", func(d *ZakatData) *string { return &d.ICNo }, digits(12, 12), ruleICNo},
	{"zakat_state", func(d *ZakatData) *string { return (*string)(&d.State) }, func(s string) bool { return ZakatState(s).Valid() }, ruleState},
	{"zakat_type", func(d *ZakatData) *string { return (*string)(&d.Type) }, func(s string) bool { return ZakatType(s).Valid() }, ruleType},
	{"zakat_year", func(d *ZakatData) *string { return &d.Year }, digits(4, 4), ruleYear},
	{"zakat_phone", func(d *ZakatData) *string { return &d.Phone }, digits(10, 12), rulePhone},
	{"zakat_address", func(d *ZakatData) *string { return &d.Address }, nil, ""},
	{"zakat_postcode", func(d *ZakatData) *string { return &d.Postcode }, digits(5, 5), rulePostcode},
	{"zakat_city", func(d *ZakatData) *string { return &d.City }, nil, ""},
	{"zakat_amount", func(d *ZakatData) *string { return &d.Amount }, decimal(2), ruleZakatAmount},
	{"zakat_rate", func(d *ZakatData) *string { return &d.Rate }, decimal(-1), ruleRate},
	{"zakat_dependant", func(d *ZakatData) *string { return &d.Dependants }, digits(1, -1), ruleDependant}, // A-webhook-dependants
}

// Bits of the data fields that the fitrah rules look at.
const (
	zdType      = 1 << 4
	zdRate      = 1 << 11
	zdDependant = 1 << 12
)

// digits returns a check for lo to hi ASCII digits (hi < 0: no upper bound).
func digits(lo, hi int) func(string) bool {
	return func(s string) bool {
		return len(s) >= lo && (hi < 0 || len(s) <= hi) && nonDigit(s) < 0
	}
}

// decimal returns a check for digits with an optional fraction of at most
// places digits (places < 0: any number of them, at least one).
func decimal(places int) func(string) bool {
	return func(s string) bool {
		whole, frac, dot := cutByte(s, '.')
		if whole == "" || nonDigit(whole) >= 0 {
			return false
		}
		if !dot {
			return true
		}
		return frac != "" && nonDigit(frac) < 0 && (places < 0 || len(frac) <= places)
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

// txBit is the bit of a transaction field name, or 0 for an unknown key.
func txBit(key string) uint16 {
	switch key {
	case "agency":
		return txAgency
	case "orderno":
		return txOrderNo
	case "amount":
		return txAmount
	case "name":
		return txName
	case "email":
		return txEmail
	case "time":
		return txTime
	case "status":
		return txStatus
	case "data":
		return txData
	}
	return 0
}

// zakatIndex is the index in zakatFields of a data field name, or -1.
func zakatIndex(key string) int {
	switch key {
	case "email":
		return 0
	case "zakat_name":
		return 1
	case "zakat_ic_no":
		return 2
	case "zakat_state":
		return 3
	case "zakat_type":
		return 4
	case "zakat_year":
		return 5
	case "zakat_phone":
		return 6
	case "zakat_address":
		return 7
	case "zakat_postcode":
		return 8
	case "zakat_city":
		return 9
	case "zakat_amount":
		return 10
	case "zakat_rate":
		return 11
	case "zakat_dependant":
		return 12
	}
	return -1
}
