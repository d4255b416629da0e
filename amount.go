package paygate

import "github.com/paygate-go/paygate/internal/sen"

// Amount is a sum of money in sen (1/100 ringgit), held in an int64 so that
// no float ever touches money. Its String form always has exactly two
// decimals, which is the order `amount` format of docs/protocol.md A1 ("decimal with
// exactly 2 decimal places"); in JSON it is a number (webhook `amount`, docs/protocol.md
// B2). Amount(1230) is RM 12.30.
type Amount int64

// MinOrderAmount is the smallest order amount the gateway takes (docs/protocol.md "Limits":
// "Minimum order amount 1.00"), checked for every order, pay link and QR
// request.
const MinOrderAmount Amount = 100

// MinB2BAmount is the smallest amount FPX B2B (corporate online banking)
// takes, RM 2.00, from the gateway's developer pages and PayNet. The SDK
// does not refuse a smaller order that preselects B2B (PrefMethod
// "fpx/b2b1"): the gateway is said to hide the method below it and offer
// the buyer the others, so every order is checked against MinOrderAmount
// only (docs/assumptions.md A-b2b-minimum).
const MinB2BAmount Amount = 200

// ParseAmount parses a non-negative decimal with at most two decimals: "10",
// "10.5" and "10.50" are accepted; a sign, an exponent, a thousands separator,
// white space, an empty string, a third decimal, or a value beyond int64 sen
// is an error wrapping ErrInvalidAmount.
func ParseAmount(s string) (Amount, error) {
	v, err := sen.Parse(s)
	return Amount(v), err
}

// String formats a as ringgit with exactly two decimals: "1.00", "12.30".
func (a Amount) String() string { return sen.Format(int64(a)) }

// MarshalJSON writes a as a JSON number with two decimals (12.30), the
// webhook `amount` of docs/protocol.md B2.
func (a Amount) MarshalJSON() ([]byte, error) {
	return sen.Append(make([]byte, 0, 24), int64(a)), nil
}

// UnmarshalJSON reads a JSON number that is >= 0 and exact in sen (docs/protocol.md B2:
// "amount in RM, >= 0"). Strings, negative numbers, fractions finer than a sen
// and values beyond int64 sen are errors wrapping ErrInvalidAmount; trailing
// zeros (12.300), exponents (1.5e2) and negative zero (-0.00) are read exactly. JSON null leaves a
// unchanged, as encoding/json does for its own types.
func (a *Amount) UnmarshalJSON(b []byte) error {
	v, ok, err := sen.ReadJSON(b)
	if ok {
		*a = Amount(v)
	}
	return err
}
