package zakat

import "github.com/paygate-go/paygate/internal/sen"

// Amount is a transaction's `amount` in sen (1/100 ringgit), an int64 so
// that no float touches money: Amount(1230) is RM 12.30, "12.30" in String
// and the JSON number 12.30 (docs/protocol.md B2).
type Amount int64

// ErrInvalidAmount is wrapped by an amount's UnmarshalJSON error; it is
// the same error as paygate.ErrInvalidAmount.
var ErrInvalidAmount = sen.ErrInvalid

// String formats a as ringgit with exactly two decimals: "1.00", "12.30".
func (a Amount) String() string { return sen.Format(int64(a)) }

// MarshalJSON writes a as a JSON number with two decimals (12.30).
func (a Amount) MarshalJSON() ([]byte, error) {
	return sen.Append(make([]byte, 0, 24), int64(a)), nil
}

// UnmarshalJSON reads a JSON number that is >= 0 and exact in sen:
// strings, negative numbers, fractions finer than a sen and values beyond
// int64 sen are errors wrapping ErrInvalidAmount; trailing zeros (12.300),
// exponents (1.5e2) and negative zero (-0.00) are read exactly
// (docs/assumptions.md A-webhook-amount). JSON null leaves a unchanged.
func (a *Amount) UnmarshalJSON(b []byte) error {
	v, ok, err := sen.ReadJSON(b)
	if ok {
		*a = Amount(v)
	}
	return err
}
