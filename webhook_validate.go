package paygate

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
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

// ValidateBatchJSON reads a raw webhook body (docs/protocol.md B1) and checks every rule
// of B1-B3 and Errors, reporting all problems at once, each named by its JSON
// pointer: a field of the wrong JSON type is a problem of that field, not a
// failure of the whole decode, and unknown fields are tolerated. Keys match
// exactly (not case-insensitively, as encoding/json would), and a known key
// given twice in one object is a problem rather than a silent choice between
// two values (docs/assumptions.md A-webhook-keys). It returns the typed batch when there is no problem (its
// strings may share memory with one copy of body), and a *ValidationError
// otherwise (field "" for a body that is not JSON at all).
//
// It checks the document's agency codes; WebhookValidator.ValidateBatchJSON
// checks others.
func ValidateBatchJSON(body []byte) (*Batch, error) {
	return validateBatchJSON(body, WebhookValidator{})
}

// validateBatchJSON is ValidateBatchJSON with the agency codes of rules.
func validateBatchJSON(body []byte, rules WebhookValidator) (*Batch, error) {
	var v ValidationError
	p := &jsonScanner{s: string(body)}
	batch, _ := decodeBatch(p, &v, true, rules)
	if p.err == nil && p.peek() != 0 {
		p.fail("data after the top-level value")
	}
	if p.err != nil {
		v.Problems = append(v.Problems[:0], newFieldError("", ruleJSON+": "+p.err.Error(), ""))
		return nil, &v
	}
	if v.err() != nil {
		return nil, &v
	}
	return batch, nil
}

// decodeBatch reads the top-level object. With keep false (streaming) the
// transactions are checked one at a time and not kept: the batch holds only
// their count. rules holds the agency codes.
func decodeBatch(p *jsonScanner, v *ValidationError, keep bool, rules WebhookValidator) (batch *Batch, count int) {
	p.maxValue, p.problems = rules.maxValueBytes(), v
	v.limit = maxBatchProblems
	defer v.countDropped()
	if p.peek() != '{' {
		p.skip()
		v.add("", ruleObject, "")
		return nil, 0
	}
	// Size for the likely number of transactions, to grow neither the slice
	// nor the orderno set while reading a large batch. (Counting one byte is
	// far cheaper than counting a key.)
	var seen *orderNoSet
	var one Transaction // the transaction being read, when they are not kept
	if keep {
		hint := strings.Count(p.s, "{") / 2 // a transaction and its data object
		batch = &Batch{Transactions: make([]Transaction, 0, hint)}
		seen = newOrderNoSet(hint)
	} else {
		batch = &Batch{}
		seen = newOrderNoSet(0)
	}
	var keys uint8
	p.eachMember(func(key string) {
		switch key {
		case "transactions":
			if keys&1 != 0 {
				v.add("/transactions", ruleDuplicateKey, "")
				p.skip()
				return
			}
			keys |= 1
			if p.peek() != '[' {
				v.add("/transactions", ruleArray, p.skip())
				return
			}
			p.eachElement(func(i int) {
				count++
				tx := &one
				if keep {
					batch.Transactions = append(batch.Transactions, Transaction{})
					tx = &batch.Transactions[i]
				} else {
					one = Transaction{}
				}
				if p.peek() != '{' {
					v.add("/transactions/"+strconv.Itoa(i), ruleObject, p.skip())
					return
				}
				decodeTransaction(p, i, tx, v, seen, rules)
			})
		case "$schema":
			if keys&2 != 0 {
				v.add("/$schema", ruleDuplicateKey, "")
			}
			keys |= 2
			if p.peek() == '"' {
				batch.Schema = p.str()
				if !keep {
					batch.Schema = ""
				}
			} else {
				v.add("/$schema", ruleString, p.skip())
			}
		default:
			p.skip() // unknown fields are tolerated
		}
	})
	if keys&1 == 0 && p.err == nil {
		v.add("/transactions", ruleRequired, "")
	}
	return batch, count
}

// ruleUniqueUnchecked is the problem of the first orderno the orderNoSet
// cannot hold.
var ruleUniqueUnchecked = fmt.Sprintf("cannot be checked for uniqueness: the batch has more than %d ordernos or %d MiB of them (from here on)", maxOrderNos, maxArenaBlocks)

// countDropped adds, after the problems listed, one that counts those
// dropped past the limit.
func (e *ValidationError) countDropped() {
	if e.dropped > 0 {
		e.Problems = append(e.Problems, newFieldError("", fmt.Sprintf(ruleMoreProblems, e.dropped, e.limit), ""))
	}
}

// maxBatchProblems is how many problems ValidateBatchJSON and
// ValidateBatchReader list; past it they count the rest, in one last
// problem, so that memory stays bounded whatever the input.
const maxBatchProblems = 1000

// decodeTransaction reads one transaction object, reporting wrong JSON types,
// repeated keys and unreadable values, then applies the value rules.
func decodeTransaction(p *jsonScanner, i int, tx *Transaction, v *ValidationError, seen *orderNoSet, rules WebhookValidator) {
	var present, reported, keys, dataPresent uint16
	p.eachMember(func(key string) {
		b := txBit(key)
		if b == 0 {
			p.skip()
			return
		}
		if keys&b != 0 {
			v.add(txPointer(i, key), ruleDuplicateKey, p.skip())
			reported |= b
			return
		}
		keys |= b
		c := p.peek()
		switch {
		case b == txAmount && (c == '-' || '0' <= c && c <= '9'):
			num := p.number()
			if p.err != nil || p.long {
				reported |= b // a syntax error (the whole body is reported as such) or reported as too long
				return
			}
			a, err := amountFromJSONNumber(num)
			switch {
			case err == nil:
				tx.Amount, present = a, present|b
			case num[0] == '-':
				v.add(txPointer(i, key), ruleAmountMin, num)
				reported |= b
			default:
				v.add(txPointer(i, key), ruleAmountSen, num)
				reported |= b
			}
		case b == txAmount:
			v.add(txPointer(i, key), ruleNumber, p.skip())
			reported |= b
		case b == txData && c == '{':
			present |= b
			dataPresent = decodeZakat(p, i, &tx.Data, v)
		case b == txData:
			v.add(txPointer(i, key), ruleObject, p.skip())
			reported |= b
		case c != '"':
			v.add(txPointer(i, key), ruleString, p.skip())
			reported |= b
		default:
			s := p.str()
			if p.long {
				reported |= b
				return
			}
			present |= b
			switch b {
			case txAgency:
				tx.Agency = ZakatAgency(s)
			case txOrderNo:
				tx.OrderNo = s
			case txName:
				tx.Name = s
			case txEmail:
				tx.Email = s
			case txStatus:
				tx.Status = Status(s)
			case txTime:
				t, ok := parseWebhookTime(s)
				if !ok {
					v.add(txPointer(i, key), ruleTime, s)
					reported |= b
				}
				tx.Time = t
			}
		}
	})
	if p.err == nil {
		checkTransaction(v, i, tx, present, reported, dataPresent, seen, rules)
	}
}

// decodeZakat reads a data object into d and returns the mask of the fields
// present as strings; wrong types and repeated keys are reported.
func decodeZakat(p *jsonScanner, i int, d *ZakatData, v *ValidationError) uint16 {
	var present, keys uint16
	p.eachMember(func(key string) {
		bit := zakatIndex(key)
		if bit < 0 {
			p.skip()
			return
		}
		b := uint16(1) << bit
		switch {
		case keys&b != 0:
			v.add(dataPointer(i, key), ruleDuplicateKey, p.skip())
			present &^= b
		case p.peek() != '"':
			v.add(dataPointer(i, key), ruleString, p.skip())
		default:
			if s := p.str(); !p.long {
				*zakatFields[bit].ptr(d) = s
				present |= b
			}
		}
		keys |= b
	})
	return present
}
