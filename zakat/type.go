package zakat

import "slices"

// Type is a `zakat_type` value (docs/protocol.md B3): the kind of zakat.
type Type string

// The types docs/protocol.md B3 lists, each its JSON value in CamelCase:
// the list has both Fitrah and ZakatFitrah, and ZakatPerak (silver) is not
// the state Perak.
const (
	Fitrah          Type = "fitrah"
	ZakatEmas       Type = "zakat_emas"
	ZakatFitrah     Type = "zakat_fitrah"
	ZakatKWSP       Type = "zakat_kwsp"
	ZakatPadi       Type = "zakat_padi"
	ZakatPendapatan Type = "zakat_pendapatan"
	ZakatPerak      Type = "zakat_perak"
	ZakatPerniagaan Type = "zakat_perniagaan"
	ZakatPertanian  Type = "zakat_pertanian"
	ZakatQada       Type = "zakat_qada"
	ZakatRikaz      Type = "zakat_rikaz"
	ZakatSaham      Type = "zakat_saham"
	ZakatSimpanan   Type = "zakat_simpanan"
	ZakatTernakan   Type = "zakat_ternakan"
)

// types are the types in B3's order.
var types = [...]Type{
	Fitrah, ZakatEmas, ZakatFitrah, ZakatKWSP, ZakatPadi, ZakatPendapatan, ZakatPerak,
	ZakatPerniagaan, ZakatPertanian, ZakatQada, ZakatRikaz, ZakatSaham, ZakatSimpanan, ZakatTernakan,
}

// fitrahTypes are the types that may carry zakat_rate and zakat_dependant.
var fitrahTypes = [...]Type{Fitrah, ZakatFitrah}

// Types lists every Type docs/protocol.md B3 allows, in its order. A fresh
// slice each call.
func Types() []Type { return slices.Clone(types[:]) }

// Valid reports whether t is one of Types.
func (t Type) Valid() bool { return slices.Contains(types[:], t) }

// IsFitrah reports whether t is a fitrah type (Fitrah or ZakatFitrah), the
// only types that may carry zakat_rate and zakat_dependant, and whose
// transaction amount must be their product (docs/protocol.md B3 says
// `zakat_fitrah`; `fitrah` is read as the same type, docs/assumptions.md
// A-webhook-fitrah).
func (t Type) IsFitrah() bool { return slices.Contains(fitrahTypes[:], t) }
