package paygate

import (
	"fmt"
	"strconv"
	"strings"
)

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
