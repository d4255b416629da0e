package paygate

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
)

// ValidateTransactions checks typed transactions against every rule of docs/protocol.md
// B2, B3 and Errors, reporting all problems at once in a *ValidationError
// whose fields are JSON pointers (/transactions/3/data/zakat_ic_no). An empty
// string (or zero Time) counts as absent: required fields must be set,
// optional data fields are checked only when set.
//
// It checks the document's agency codes; WebhookValidator.ValidateTransactions
// checks others.
func ValidateTransactions(txs []Transaction) error {
	return validateTransactions(txs, WebhookValidator{})
}

// validateTransactions is ValidateTransactions with the agency codes of rules.
func validateTransactions(txs []Transaction, rules WebhookValidator) error {
	var v ValidationError
	seen := newOrderNoSet(len(txs))
	for i := range txs {
		tx := &txs[i]
		present := txAll
		for bit, empty := range [...]bool{tx.Agency == "", tx.OrderNo == "", false, tx.Name == "", tx.Email == "", tx.Time.IsZero(), tx.Status == ""} {
			if empty {
				present &^= 1 << bit
			}
		}
		var dataPresent uint16
		for bit, f := range zakatFields {
			if *f.ptr(&tx.Data) != "" {
				dataPresent |= 1 << bit
			}
		}
		checkTransaction(&v, i, tx, present, 0, dataPresent, seen, rules)
	}
	return v.err()
}

// checkTransaction applies the value rules to one transaction. present has
// the fields that are there with the right JSON type; reported has those
// already reported (wrong type, unreadable value), which are skipped. The
// fitrah product is a rule of the record, not advice (docs/protocol.md B3
// says "should equal"; docs/assumptions.md A-webhook-fitrah).
func checkTransaction(v *ValidationError, i int, tx *Transaction, present, reported, dataPresent uint16, seen *orderNoSet, rules WebhookValidator) {
	for bit, name := range txFields {
		b := uint16(1) << bit
		if present&b == 0 && reported&b == 0 {
			v.add(txPointer(i, name), ruleRequired, "")
		}
	}
	failed := func(b uint16, ok bool) bool { return present&b != 0 && reported&b == 0 && !ok }
	if failed(txAgency, rules.Accepts(tx.Agency)) {
		v.add(txPointer(i, "agency"), rules.agencyRule(), string(tx.Agency))
	}
	if failed(txOrderNo, tx.OrderNo != "") {
		v.add(txPointer(i, "orderno"), ruleNotEmpty, "")
	}
	if failed(txAmount, tx.Amount >= 0) {
		v.add(txPointer(i, "amount"), ruleAmountMin, tx.Amount.String())
	}
	if failed(txName, tx.Name != "") {
		v.add(txPointer(i, "name"), ruleNotEmpty, "")
	}
	if failed(txEmail, ValidEmail(tx.Email)) {
		v.add(txPointer(i, "email"), ruleEmail, tx.Email)
	}
	if failed(txStatus, tx.Status.Valid()) {
		v.add(txPointer(i, "status"), ruleStatus, string(tx.Status))
	}
	if tx.OrderNo != "" && present&txOrderNo != 0 {
		wasFull := seen.full
		if first, dup := seen.firstOrAdd(tx.OrderNo, i); dup {
			v.add(txPointer(i, "orderno"), ruleUnique+" (also at "+txPointer(first, "orderno")+")", tx.OrderNo)
		} else if seen.full && !wasFull {
			v.add(txPointer(i, "orderno"), ruleUniqueUnchecked, "")
		}
	}
	if present&txData == 0 {
		return
	}
	d := &tx.Data
	valid := dataPresent
	for bit, f := range zakatFields {
		b := uint16(1) << bit
		if dataPresent&b == 0 || f.valid == nil {
			continue
		}
		if s := *f.ptr(d); !f.valid(s) {
			v.add(dataPointer(i, f.name), f.rule, s)
			valid &^= b
		}
	}
	if !d.Type.IsFitrah() {
		for _, b := range [...]uint16{zdRate, zdDependant} {
			if dataPresent&b != 0 {
				v.add(dataPointer(i, zakatFields[bitIndex(b)].name), ruleFitrahOnly, string(d.Type))
			}
		}
		return
	}
	amountOK := present&txAmount != 0 && reported&txAmount == 0 && tx.Amount >= 0
	if valid&zdRate != 0 && valid&zdDependant != 0 && amountOK {
		if !fitrahMatches(d.Rate, d.Dependants, tx.Amount) {
			want := fitrahProduct(d.Rate, d.Dependants)
			v.add(txPointer(i, "amount"), fmt.Sprintf("%s (%s x %s = %s)", ruleFitrahProduct, d.Rate, d.Dependants, want.FloatString(2)), tx.Amount.String())
		}
	}
}

// fitrahMatches reports whether amount == rate x dependants exactly (docs/protocol.md B3,
// fitrah rule), given a decimal rate and a whole dependants count: with s
// the rate's decimals, rate x 10^s x dependants x 100 must equal amount in
// sen x 10^s. Integer arithmetic, with exact big.Rat arithmetic when a
// product would overflow 64 bits.
func fitrahMatches(rate, dependants string, amount Amount) bool {
	whole, frac, _ := cutByte(rate, '.')
	w, ok1 := parseUint(whole)
	f, okf := uint64(0), true
	if frac != "" {
		f, okf = parseUint(frac)
	}
	n, ok2 := parseUint(dependants)
	scale := uint64(1)
	for range frac {
		scale, ok1 = mulUint(scale, 10, ok1)
	}
	r, ok1 := mulUint(w, scale, ok1 && okf)
	r += f
	ok1 = ok1 && r >= f // no wrap
	lhs, ok := mulUint(r, n, ok1 && ok2)
	lhs, ok = mulUint(lhs, 100, ok)
	rhs, ok := mulUint(uint64(amount), scale, ok)
	if ok {
		return lhs == rhs
	}
	return fitrahProduct(rate, dependants).Cmp(big.NewRat(int64(amount), 100)) == 0
}

// parseUint reads ASCII digits into a uint64, reporting false on overflow.
func parseUint(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// mulUint multiplies when ok, reporting false on overflow.
func mulUint(a, b uint64, ok bool) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, ok && hi == 0
}

// fitrahProduct is zakat_rate x zakat_dependant as an exact rational, for
// messages and for products beyond 64 bits. Its inputs passed the numeric
// rules, so they parse.
func fitrahProduct(rate, dependants string) *big.Rat {
	r, _ := new(big.Rat).SetString(rate)
	n, _ := new(big.Rat).SetString(dependants)
	return r.Mul(r, n)
}

// bitIndex is the position of the single set bit of b.
func bitIndex(b uint16) int {
	i := 0
	for b > 1 {
		b >>= 1
		i++
	}
	return i
}

// txPointer is the JSON pointer of a transaction field.
func txPointer(i int, name string) string {
	return "/transactions/" + strconv.Itoa(i) + "/" + name
}

// dataPointer is the JSON pointer of a data field.
func dataPointer(i int, name string) string {
	return "/transactions/" + strconv.Itoa(i) + "/data/" + name
}

// ruleUniqueUnchecked is the problem of the first orderno the orderNoSet
// cannot hold.
var ruleUniqueUnchecked = fmt.Sprintf("cannot be checked for uniqueness: the batch has more than %d ordernos or %d MiB of them (from here on)", maxOrderNos, maxArenaBlocks)
