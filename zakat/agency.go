package zakat

import (
	"slices"
	"strings"
)

// Agency is the zakat agency a transaction is posted to (docs/protocol.md
// B2 `agency`). It is not the merchant's agency of the payment gateway,
// which is a plain string in package paygate (WithAgency, Order.Agency).
type Agency string

// The agencies docs/protocol.md B2 lists. The document replaced the brand
// in its codes by `BANK`; the real service's codes carry the brand, ADB
// (the bank webhook page; docs/assumptions.md A-webhook-brand). Which set
// a batch must use is the service's choice: a Validator
// holds it (the zero one: the document's).
const (
	// AgencyLZS: payment to the Selangor zakat agency via the bank; the
	// document's code.
	AgencyLZS Agency = "BANKLZS"
	// AgencyPPZ: payment to the Federal Territory zakat agency via the
	// bank; the document's code.
	AgencyPPZ Agency = "BANKPPZ"
	// AgencyTest: live test entries, to check that data is posted
	// correctly; the document's code.
	AgencyTest Agency = "BANK"

	// AgencyADBLZS is AgencyLZS on the real service.
	AgencyADBLZS Agency = "ADBLZS"
	// AgencyADBPPZ is AgencyPPZ on the real service.
	AgencyADBPPZ Agency = "ADBPPZ"
	// AgencyADBTest is AgencyTest on the real service.
	AgencyADBTest Agency = "ADB"
)

// The two agency sets, in B2's order (Selangor, Federal Territory, test).
var (
	documentAgencies = [...]Agency{AgencyLZS, AgencyPPZ, AgencyTest}
	adbAgencies      = [...]Agency{AgencyADBLZS, AgencyADBPPZ, AgencyADBTest}
)

// agencySuffixes are what follows the brand in B2's codes, in B2's order.
var agencySuffixes = [...]string{"LZS", "PPZ", ""}

// Agencies lists the document's codes, BANKLZS, BANKPPZ and BANK: the set
// a zero Validator accepts. A fresh slice each call.
func Agencies() []Agency { return slices.Clone(documentAgencies[:]) }

// ADBAgencies lists the real service's codes, ADBLZS, ADBPPZ and ADB, for
// NewValidator. A fresh slice each call.
func ADBAgencies() []Agency { return slices.Clone(adbAgencies[:]) }

// BrandAgencies are B2's codes with the document's `BANK` replaced by
// brand: brand+"LZS", brand+"PPZ" and brand (BrandAgencies("ADB") is
// ADBAgencies, BrandAgencies("BANK") is Agencies), for a service under
// another brand. It does not check brand; NewValidator
// checks the codes.
func BrandAgencies(brand string) []Agency {
	codes := make([]Agency, len(agencySuffixes))
	for i, s := range agencySuffixes {
		codes[i] = Agency(brand + s)
	}
	return codes
}

// Valid reports whether a is one of the document's codes (Agencies). On the
// real service, or with any other set, the Validator that
// holds the set decides (its Accepts).
func (a Agency) Valid() bool { return slices.Contains(documentAgencies[:], a) }

// ParseAgencies reads a comma-separated list of agency codes, the form of
// PAYGATE_WEBHOOK_AGENCIES and the CLI's -agencies, for
// NewValidator, which checks them; spaces around a code are
// dropped. A blank list is nil, which NewValidator reads as the
// document's codes; an empty code between commas is kept, as "", for
// NewValidator to refuse.
func ParseAgencies(list string) []Agency {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	var codes []Agency
	for c := range strings.SplitSeq(list, ",") {
		codes = append(codes, Agency(strings.TrimSpace(c)))
	}
	return codes
}
