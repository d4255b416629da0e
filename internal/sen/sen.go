// Package sen reads and writes money in sen (1/100 ringgit) as int64,
// never a float: the parsing and formatting behind paygate.Amount and
// zakat.Amount, so that the two amounts behave alike and the code is
// written once.
package sen

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/paygate-go/paygate/internal/fielderr"
)

// ErrInvalid is wrapped by every error of this package: paygate's
// ErrInvalidAmount (and zakat's) is this value.
var ErrInvalid = errors.New("paygate: invalid amount")

// Parse reads a non-negative decimal with at most two decimals: "10",
// "10.5" and "10.50" are accepted; a sign, an exponent, a thousands
// separator, white space, an empty string, a third decimal, or a value
// beyond int64 sen is an error wrapping ErrInvalid.
func Parse(s string) (int64, error) {
	if s == "" {
		return 0, amountError(s, "empty")
	}
	whole, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			whole, frac = s[:i], s[i+1:]
			if frac == "" {
				return 0, amountError(s, "no digit after the decimal point")
			}
			break
		}
	}
	if whole == "" {
		return 0, amountError(s, "no digit before the decimal point")
	}
	if i := NonDigit(whole); i >= 0 {
		return 0, amountError(s, fmt.Sprintf("unexpected %q; want digits and one decimal point", whole[i]))
	}
	if i := NonDigit(frac); i >= 0 {
		return 0, amountError(s, fmt.Sprintf("unexpected %q; want digits and one decimal point", frac[i]))
	}
	if len(frac) > 2 {
		return 0, amountError(s, "more than two decimals")
	}
	return decimalToSen(s, whole+frac, 2-len(frac))
}

// Append appends the two-decimal form of v sen to b: "1.00", "12.30".
func Append(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/100, 10)
	return append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
}

// Format is the two-decimal form of v sen.
func Format(v int64) string { return string(Append(make([]byte, 0, 24), v)) }

// ReadJSON reads a JSON value as sen: a number >= 0 and exact in sen
// (FromJSONNumber). null gives ok false and no error (the value is left
// as it was, as encoding/json does); a string is an error.
func ReadJSON(b []byte) (v int64, ok bool, err error) {
	switch {
	case string(b) == "null":
		return 0, false, nil
	case len(b) > 0 && b[0] == '"':
		return 0, false, amountError(string(b), "a JSON number is required, not a string")
	}
	v, err = FromJSONNumber(string(b))
	return v, err == nil, err
}

// FromJSONNumber reads a JSON number token as sen: >= 0 (negative zero
// is zero, as JSON Schema's minimum 0 has it) and exact in sen, never
// rounded (docs/assumptions.md A-webhook-amount).
func FromJSONNumber(s string) (int64, error) {
	switch {
	case s == "":
		return 0, amountError(s, "empty")
	case s[0] == '-':
		if v, err := parseJSONAmount(s[1:]); err == nil && v == 0 {
			return 0, nil
		}
		return 0, amountError(s, "must be >= 0")
	}
	return parseJSONAmount(s)
}

// parseJSONAmount reads the grammar of a non-negative JSON number exactly:
// int [frac] [exp].
func parseJSONAmount(s string) (int64, error) {
	n := numberText{s: s}
	whole := n.digits()
	frac, fracOK := n.fraction()
	if whole == "" || !fracOK {
		return 0, amountError(s, "not a JSON number")
	}
	exp, ok := n.exponent()
	if !ok {
		return 0, amountError(s, "exponent out of range")
	}
	if n.i != len(s) {
		return 0, amountError(s, "not a JSON number")
	}
	return decimalToSen(s, whole+frac, 2-len(frac)+exp)
}

// numberText reads a JSON number's parts from s, from byte i on.
type numberText struct {
	s string
	i int
}

// digits reads a run of digits, maybe empty.
func (n *numberText) digits() string {
	start := n.i
	for n.i < len(n.s) && '0' <= n.s[n.i] && n.s[n.i] <= '9' {
		n.i++
	}
	return n.s[start:n.i]
}

// next reads one byte when it is one of set, and returns it (0 when not).
func (n *numberText) next(set string) byte {
	if n.i < len(n.s) && strings.IndexByte(set, n.s[n.i]) >= 0 {
		n.i++
		return n.s[n.i-1]
	}
	return 0
}

// fraction reads "." and its digits; "" when there is no ".", and false when
// the "." has no digit after it.
func (n *numberText) fraction() (string, bool) {
	if n.next(".") == 0 {
		return "", true
	}
	frac := n.digits()
	return frac, frac != ""
}

// exponent reads "e" or "E", a sign and digits, as a power of ten; 0 when
// there is no exponent, and false when it has no digits or is beyond
// ±1000 (no amount in sen needs more).
func (n *numberText) exponent() (int, bool) {
	if n.next("eE") == 0 {
		return 0, true
	}
	sign := n.next("+-")
	digits := n.digits()
	e, err := strconv.Atoi(digits)
	if digits == "" || err != nil || e > 1000 {
		return 0, false
	}
	if sign == '-' {
		e = -e
	}
	return e, true
}

// decimalToSen turns digits × 10^shift into sen, refusing lost precision and
// overflow. src is the text being parsed, for errors.
func decimalToSen(src, digits string, shift int) (int64, error) {
	for shift < 0 {
		if digits == "" || digits[len(digits)-1] != '0' {
			if allZero(digits) {
				return 0, nil
			}
			return 0, amountError(src, "finer than one sen (more than two decimals)")
		}
		digits = digits[:len(digits)-1]
		shift++
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		d := uint64(digits[i] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, amountError(src, "too large")
		}
		v = v*10 + d
	}
	for ; shift > 0 && v != 0; shift-- {
		if v > math.MaxInt64/10 {
			return 0, amountError(src, "too large")
		}
		v *= 10
	}
	return int64(v), nil
}

// allZero reports whether s has only '0' digits (or none).
func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// NonDigit returns the index of the first byte of s that is not 0-9, or -1.
func NonDigit(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return i
		}
	}
	return -1
}

// amountError wraps ErrInvalid with the text (cut at fielderr.MaxValue)
// and the reason.
func amountError(s, why string) error {
	if len(s) > fielderr.MaxValue {
		s = s[:fielderr.MaxValue] + "…"
	}
	return fmt.Errorf("%w %q: %s", ErrInvalid, s, why)
}
