package paygate

import (
	"bytes"
	"fmt"
	"strconv"
)

// ValidateBatchJSON reads a raw webhook body (docs/protocol.md B1) and checks every rule
// of B1-B3 and Errors, reporting all problems at once, each named by its JSON
// pointer: a field of the wrong JSON type is a problem of that field, not a
// failure of the whole decode, and unknown fields are tolerated. Keys match
// exactly (not case-insensitively, as encoding/json would), and a known key
// given twice in one object is a problem rather than a silent choice between
// two values (docs/assumptions.md A-webhook-keys). It returns the typed batch when there is no problem (its
// strings are copies: body is not retained), and a *ValidationError
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
	p := &byteScanner{s: body}
	batch, _ := decodeBatch(p, &v, true, rules)
	p.end()
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
func decodeBatch(p *byteScanner, v *ValidationError, keep bool, rules WebhookValidator) (batch *Batch, count int) {
	p.maxValue, p.head, p.onLong = rules.maxValueBytes(), maxErrorValue+1, longValueProblem(v, rules.maxValueBytes())
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
		hint := bytes.Count(p.s, []byte{'{'}) / 2 // a transaction and its data object
		batch = &Batch{Transactions: make([]Transaction, 0, hint)}
		seen = newOrderNoSet(hint)
	} else {
		batch = &Batch{}
		seen = newOrderNoSet(0)
	}
	var keys uint8
	p.eachMember(func(key []byte) {
		switch string(key) {
		case "transactions":
			if keys&1 != 0 {
				v.add("/transactions", ruleDuplicateKey, "")
				p.skip()
				return
			}
			keys |= 1
			if p.peek() != '[' {
				v.add("/transactions", ruleArray, p.skipText())
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
					v.add("/transactions/"+strconv.Itoa(i), ruleObject, p.skipText())
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
				if s := p.str(); keep {
					batch.Schema = p.keep(s)
				}
			} else {
				v.add("/$schema", ruleString, p.skipText())
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
func decodeTransaction(p *byteScanner, i int, tx *Transaction, v *ValidationError, seen *orderNoSet, rules WebhookValidator) {
	var present, reported, keys, dataPresent uint16
	p.eachMember(func(raw []byte) {
		b := txBit(string(raw))
		if b == 0 {
			p.skip()
			return
		}
		key := string(raw) // a known key: short, copied on the stack
		if keys&b != 0 {
			v.add(txPointer(i, key), ruleDuplicateKey, p.skipText())
			reported |= b
			return
		}
		keys |= b
		c := p.peek()
		switch {
		case b == txAmount && (c == '-' || '0' <= c && c <= '9'):
			num := p.keep(p.number())
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
			v.add(txPointer(i, key), ruleNumber, p.skipText())
			reported |= b
		case b == txData && c == '{':
			present |= b
			dataPresent = decodeZakat(p, i, &tx.Data, v)
		case b == txData:
			v.add(txPointer(i, key), ruleObject, p.skipText())
			reported |= b
		case c != '"':
			v.add(txPointer(i, key), ruleString, p.skipText())
			reported |= b
		default:
			raw := p.str()
			if p.long {
				reported |= b
				return
			}
			present |= b
			if b == txTime {
				t, ok := parseWebhookTime(string(raw))
				if !ok {
					v.add(txPointer(i, key), ruleTime, string(raw))
					reported |= b
				}
				tx.Time = t
				return
			}
			s := p.keep(raw)
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
			}
		}
	})
	if p.err == nil {
		checkTransaction(v, i, tx, present, reported, dataPresent, seen, rules)
	}
}

// decodeZakat reads a data object into d and returns the mask of the fields
// present as strings; wrong types and repeated keys are reported.
func decodeZakat(p *byteScanner, i int, d *ZakatData, v *ValidationError) uint16 {
	var present, keys uint16
	p.eachMember(func(key []byte) {
		bit := zakatIndex(string(key))
		if bit < 0 {
			p.skip()
			return
		}
		b := uint16(1) << bit
		switch {
		case keys&b != 0:
			v.add(dataPointer(i, string(key)), ruleDuplicateKey, p.skipText())
			present &^= b
		case p.peek() != '"':
			v.add(dataPointer(i, string(key)), ruleString, p.skipText())
		default:
			if s := p.str(); !p.long {
				*zakatFields[bit].ptr(d) = p.keep(s)
				present |= b
			}
		}
		keys |= b
	})
	return present
}
