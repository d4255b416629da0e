package zakat

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/paygate-go/paygate/internal/ordernoset"
)

// validateTransactions is Validator.ValidateTransactions.
func validateTransactions(txs []Transaction, rules Validator) error {
	_, err := checkTyped(txs, rules)
	return err
}

// txProblems are the problems of one transaction of a slice.
type txProblems struct {
	index    int
	problems []FieldError
}

// checkTyped applies the rules of ValidateTransactions and returns the
// problems of every transaction that has any, in index order, and all of
// them as one *ValidationError (nil when there are none). A transaction's
// problems are its own: duplicates are reported at the later orderno.
func checkTyped(txs []Transaction, rules Validator) ([]txProblems, error) {
	var v ValidationError
	var byTx []txProblems
	seen := make(orderNoMap, len(txs))
	for i := range txs {
		start := len(v.Problems)
		m := typedMasks(&txs[i])
		checkTypedText(&v, i, &txs[i], &m)
		checkTransaction(&v, i, &txs[i], m, seen, rules)
		if end := len(v.Problems); end > start {
			byTx = append(byTx, txProblems{index: i, problems: v.Problems[start:end:end]})
		}
	}
	return byTx, v.err()
}

// typedMasks says which fields a typed transaction has: an empty string or
// a zero Time is absent.
func typedMasks(tx *Transaction) txMasks {
	m := txMasks{present: txAll}
	for bit, f := range txFields {
		if f.absent != nil && f.absent(tx) {
			m.present &^= 1 << bit
		}
	}
	for bit, f := range zakatFields {
		if *f.ptr(&tx.Data) != "" {
			m.data |= 1 << bit
		}
	}
	return m
}

// checkTypedText reports the string fields of a typed transaction that are
// not valid UTF-8 (ruleUTF8: json.Marshal would send U+FFFD in place of
// the bad bytes, so two ordernos would go out as one) and takes them out of
// m's present fields, so that no other rule reads them: an assumption,
// docs/assumptions.md A-webhook-encoding. A time json.Marshal refuses
// breaks ruleTime: it could never be sent.
func checkTypedText(v *ValidationError, i int, tx *Transaction, m *txMasks) {
	if _, err := tx.Time.MarshalJSON(); err != nil { // a year past 9999, an offset of a day or more
		v.add(txPointer(i, "time"), ruleTime, tx.Time.String())
	}
	for bit := range txFields {
		if f := &txFields[bit]; f.text != nil && m.present&(1<<bit) != 0 && !utf8.ValidString(f.text(tx)) {
			v.add(txPointer(i, f.name), ruleUTF8, "")
			m.present &^= 1 << bit
			m.reported |= 1 << bit
		}
	}
	for bit := range zakatFields {
		if f := &zakatFields[bit]; m.data&(1<<bit) != 0 && !utf8.ValidString(*f.ptr(&tx.Data)) {
			v.add(dataPointer(i, f.name), ruleUTF8, "")
			m.data &^= 1 << bit
		}
	}
}

// txMasks says what was read of one transaction: bit i is txFields[i]
// (zakatFields[i] in data).
type txMasks struct {
	present  uint16 // there, with the right JSON type
	reported uint16 // already reported (wrong type, unreadable, repeated): skipped by the value rules
	data     uint16 // the data fields there as strings
}

// checkTransaction applies the value rules to one transaction; the fields
// m reports are skipped. The fitrah product is a rule of the record, not
// advice (docs/protocol.md B3 says "should equal"; docs/assumptions.md
// A-webhook-fitrah).
func checkTransaction(v *ValidationError, i int, tx *Transaction, m txMasks, seen orderNoSet, rules Validator) {
	checkTxFields(v, i, tx, m, rules)
	if tx.OrderNo != "" && m.present&txOrderNo != 0 {
		checkUnique(v, i, tx.OrderNo, seen)
	}
	if m.present&txData == 0 {
		return
	}
	valid := checkZakat(v, i, &tx.Data, m.data)
	checkFitrah(v, i, tx, m, valid)
}

// checkTxFields reports the transaction fields that are missing, then those
// that break their rule (txFields), in the table's order.
func checkTxFields(v *ValidationError, i int, tx *Transaction, m txMasks, rules Validator) {
	if missing := txAll &^ (m.present | m.reported); missing != 0 {
		for bit := range txFields {
			if missing&(1<<bit) != 0 {
				v.add(txPointer(i, txFields[bit].name), ruleRequired, "")
			}
		}
	}
	checked := m.present &^ m.reported
	for bit := range txFields {
		f := &txFields[bit]
		if f.check == nil || checked&(1<<bit) == 0 {
			continue
		}
		if rule, value := f.check(tx, rules); rule != "" {
			v.add(txPointer(i, f.name), rule, value)
		}
	}
}

// checkZakat reports the data fields present that break their rule
// (zakatFields) and returns the mask of those present and valid.
func checkZakat(v *ValidationError, i int, d *Data, present uint16) (valid uint16) {
	valid = present
	for bit := range zakatFields {
		f, b := &zakatFields[bit], uint16(1)<<bit
		if present&b == 0 || f.valid == nil {
			continue
		}
		if s := *f.ptr(d); !f.valid(s) {
			v.add(dataPointer(i, f.name), f.rule, s)
			valid &^= b
		}
	}
	return valid
}

// checkFitrah applies the fitrah rules: the fitrahOnly fields only for a
// fitrah type, whose amount must be zakat_rate x zakat_dependant when both
// are valid (valid: the data fields present and valid).
func checkFitrah(v *ValidationError, i int, tx *Transaction, m txMasks, valid uint16) {
	d := &tx.Data
	if !d.Type.IsFitrah() {
		for bit, f := range zakatFields {
			if f.fitrahOnly && m.data&(1<<bit) != 0 {
				v.add(dataPointer(i, f.name), ruleFitrahOnly, string(d.Type))
			}
		}
		return
	}
	amountOK := m.present&txAmount != 0 && m.reported&txAmount == 0 && tx.Amount >= 0
	if valid&zdRate == 0 || valid&zdDependant == 0 || !amountOK {
		return
	}
	if !fitrahMatches(d.Rate, d.Dependants, tx.Amount) {
		want := fitrahProduct(d.Rate, d.Dependants)
		v.add(txPointer(i, "amount"), fmt.Sprintf("%s (%s x %s = %s)", ruleFitrahProduct, d.Rate, d.Dependants, want.FloatString(2)), tx.Amount.String())
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

// txPointer is the JSON pointer of a transaction field.
func txPointer(i int, name string) string {
	return "/transactions/" + strconv.Itoa(i) + "/" + name
}

// dataPointer is the JSON pointer of a data field.
func dataPointer(i int, name string) string {
	return "/transactions/" + strconv.Itoa(i) + "/data/" + name
}

// orderNoBudget is the memory the check "orderno is unique" (docs/protocol.md
// B2) of a batch body holds before it spills (ordernoset.Config.Budget):
// about 150,000 ordernos of 20 bytes. Past it, a repeat is reported once
// the whole body is read, after the problems found while reading.
const orderNoBudget = 8 << 20

// newOrderNoSet makes the orderno set of a batch body, spilling past
// orderNoBudget to a temporary file (streamed, so that memory stays
// bounded whatever the batch) or to memory (the body is in memory, and the
// problems are the same as the stream's).
func newOrderNoSet(stream bool) *ordernoset.Set {
	spill := ordernoset.Memory()
	if stream {
		spill = ordernoset.TempFile("")
	}
	return ordernoset.New(ordernoset.Config{Budget: orderNoBudget, Spill: spill, ValueBytes: maxErrorValue + 1})
}

// orderNoSet holds the ordernos of a batch: Add records that transaction
// i carries no, and returns the transaction that first carried it and
// true when it was seen before and the set can tell at once.
type orderNoSet interface {
	Add(no string, i int) (first int, dup bool)
}

// orderNoMap is the orderno set of transactions already in memory
// (ValidateTransactions): it always tells at once.
type orderNoMap map[string]int

// Add records no for transaction i, unless it was seen before.
func (m orderNoMap) Add(no string, i int) (int, bool) {
	if first, ok := m[no]; ok {
		return first, true
	}
	m[no] = i
	return i, false
}

// checkUnique reports an orderno seen before in the batch, when the set
// can tell at once (else reportLateRepeats does).
func checkUnique(v *ValidationError, i int, orderNo string, seen orderNoSet) {
	if first, dup := seen.Add(orderNo, i); dup {
		v.add(txPointer(i, "orderno"), uniqueRule(first), orderNo)
	}
}

// reportLateRepeats reports the repeated ordernos the set found only at
// the end, in index order, within v's limit (counting the rest; decodeBatch
// sets one). An error means the ordernos were not all checked: the batch is
// neither valid nor invalid.
func reportLateRepeats(v *ValidationError, seen *ordernoset.Set) error {
	dups, more, err := seen.Finish(max(0, v.limit-len(v.Problems)))
	if err != nil {
		return fmt.Errorf("paygate: checking that the ordernos are unique: %w", err)
	}
	for _, d := range dups {
		v.add(txPointer(d.Index, "orderno"), uniqueRule(d.First), d.Value)
	}
	v.dropped += more
	return nil
}

// uniqueRule is the problem of an orderno first carried by transaction
// first.
func uniqueRule(first int) string {
	return ruleUnique + " (also at " + txPointer(first, "orderno") + ")"
}
