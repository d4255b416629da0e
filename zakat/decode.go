package zakat

import (
	"bytes"
	"fmt"
	"strconv"

	"io"

	"github.com/paygate-go/paygate/internal/jsonscan"
	"github.com/paygate-go/paygate/internal/ordernoset"
)

// validateBatchJSON is Validator.ValidateBatchJSON.
func validateBatchJSON(body []byte, rules Validator) (*Batch, error) {
	var v ValidationError
	p := jsonscan.New(body)
	batch, _, err := decodeBatch(p, &v, body, rules)
	p.End()
	if err := p.Err(); err != nil {
		v.Problems = append(v.Problems[:0], newFieldError("", ruleJSON+": "+err.Error(), ""))
		return nil, &v
	}
	if err != nil {
		return nil, err
	}
	if v.err() != nil {
		return nil, &v
	}
	return batch, nil
}

// decodeBatch reads the top-level object from p, whose whole input is body
// when the transactions are kept (ValidateBatchJSON). With body nil
// (streaming) the transactions are checked one at a time and not kept: the
// batch holds only their count. rules holds the agency codes. An error
// means the ordernos could not all be checked (reportLateRepeats).
func decodeBatch(p *jsonscan.Scanner[[]byte], v *ValidationError, body []byte, rules Validator) (batch *Batch, count int, err error) {
	p.SetLimits(jsonscan.Limits{MaxValue: rules.maxValueBytes(), Head: maxErrorValue + 1, OnLong: longValueProblem(v, rules.maxValueBytes())})
	v.limit = maxBatchProblems
	defer v.countDropped()
	if p.Peek() != '{' {
		p.Skip()
		v.add("", ruleObject, "")
		return nil, 0, nil
	}
	d := newBatchDecoder(p, v, body, rules)
	defer d.seen.Close()
	var keys uint8
	p.Members(func(key []byte) {
		switch string(key) {
		case "transactions":
			if keys&1 != 0 {
				v.add("/transactions", ruleDuplicateKey, "")
				p.Skip()
				return
			}
			keys |= 1
			d.transactions()
		case "$schema":
			if keys&2 != 0 {
				v.add("/$schema", ruleDuplicateKey, "")
			}
			keys |= 2
			d.schema()
		default:
			p.Skip() // unknown fields are tolerated
		}
	})
	if keys&1 == 0 && p.Err() == nil {
		v.add("/transactions", ruleRequired, "")
	}
	if p.Err() == nil {
		err = reportLateRepeats(v, d.seen)
	}
	return d.batch, d.count, err
}

// batchDecoder holds what decodeBatch builds while it reads a body.
type batchDecoder struct {
	p     *jsonscan.Scanner[[]byte]
	v     *ValidationError
	keep  bool // keep the transactions (ValidateBatchJSON), or only count them (streaming)
	rules Validator
	batch *Batch
	seen  *ordernoset.Set
	one   Transaction // the transaction being read, when they are not kept
	count int
}

// minTransactionJSON is less than the JSON text of any valid transaction
// (the smallest is 119 bytes: {"agency":"A","orderno":"1","amount":0,
// "name":"a","email":"a@b","time":"0000-01-01T00:00Z","status":"failed",
// "data":{}}), so that body length / minTransactionJSON bounds how many a
// valid body holds.
const minTransactionJSON = 100

// newBatchDecoder sizes the batch for the likely number of transactions
// when they are kept (body is not nil), not to grow it while reading a
// large batch. (Counting one byte is far cheaper than counting a key.) The count
// of '{' is capped by what the body's length can hold of valid
// transactions: braces inside strings cost nothing to write, and sized from
// them alone a 4 MB body allocated 640 MB.
func newBatchDecoder(p *jsonscan.Scanner[[]byte], v *ValidationError, body []byte, rules Validator) *batchDecoder {
	d := &batchDecoder{p: p, v: v, keep: body != nil, rules: rules, batch: &Batch{}}
	// Half the '{' (a transaction and its data object); none when streaming.
	d.batch.Transactions = make([]Transaction, 0, min(bytes.Count(body, []byte{'{'})/2, len(body)/minTransactionJSON))
	d.seen = newOrderNoSet(!d.keep)
	return d
}

// transactions reads the value of `transactions`.
func (d *batchDecoder) transactions() {
	p, v := d.p, d.v
	if p.Peek() != '[' {
		v.add("/transactions", ruleArray, p.SkipText())
		return
	}
	p.Elements(func(i int) {
		d.count++
		tx := d.next()
		if p.Peek() != '{' {
			v.add("/transactions/"+strconv.Itoa(i), ruleObject, p.SkipText())
			return
		}
		decodeTransaction(p, i, tx, v, d.seen, d.rules)
	})
}

// next returns where the next transaction is read: a new element of the
// batch while the batch has no problem, else the one scratch transaction.
// A batch with a problem is not returned, so its transactions are dropped
// at the first: an invalid body of many tiny transactions ([{},{},...], 3
// bytes for a 320-byte Transaction) costs what the stream costs, not a
// hundred times its size.
func (d *batchDecoder) next() *Transaction {
	if d.keep && len(d.v.Problems) > 0 {
		d.keep, d.batch.Transactions = false, nil
	}
	if d.keep {
		d.batch.Transactions = append(d.batch.Transactions, Transaction{})
		return &d.batch.Transactions[len(d.batch.Transactions)-1]
	}
	d.one = Transaction{}
	return &d.one
}

// schema reads the value of `$schema`, kept only with the transactions.
func (d *batchDecoder) schema() {
	p := d.p
	if p.Peek() != '"' {
		d.v.add("/$schema", ruleString, p.SkipText())
		return
	}
	s := p.Str()
	if p.NotUTF8() && !p.Long() {
		d.v.add("/$schema", ruleUTF8, "")
		return
	}
	if d.keep {
		d.batch.Schema = p.Keep(s)
	}
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
func decodeTransaction(p *jsonscan.Scanner[[]byte], i int, tx *Transaction, v *ValidationError, seen *ordernoset.Set, rules Validator) {
	var m txMasks
	var keys uint16
	p.Members(func(key []byte) {
		bit := txIndex(key)
		if bit < 0 {
			p.Skip()
			return
		}
		b := uint16(1) << bit
		if keys&b != 0 {
			v.add(txPointer(i, txFields[bit].name), ruleDuplicateKey, p.SkipText())
			m.reported |= b
			return
		}
		keys |= b
		decodeTxField(p, i, &txFields[bit], b, tx, v, &m)
	})
	if p.Err() == nil {
		checkTransaction(v, i, tx, m, seen, rules)
	}
}

// decodeTxField reads the value of field f (bit b) into tx and records in
// m whether it is there or was reported: a value of the wrong JSON type, too
// long, not valid UTF-8, or that f.parse refuses.
func decodeTxField(p *jsonscan.Scanner[[]byte], i int, f *txField, b uint16, tx *Transaction, v *ValidationError, m *txMasks) {
	var raw []byte
	switch c := p.Peek(); {
	case f.kind == kindString && c == '"':
		raw = p.Str()
	case f.kind == kindNumber && (c == '-' || '0' <= c && c <= '9'):
		if raw = p.Number(); p.Err() != nil { // a syntax error: the whole body is reported as such
			m.reported |= b
			return
		}
	case f.kind == kindObject && c == '{':
		m.present |= b
		m.data = decodeZakat(p, i, &tx.Data, v)
		return
	default:
		v.add(txPointer(i, f.name), kindRules[f.kind], p.SkipText())
		m.reported |= b
		return
	}
	keepTxValue(p, i, f, b, tx, v, m, raw)
}

// keepTxValue keeps raw, the string or number just read as field f (bit
// b), in tx, unless it is too long (already reported), not valid UTF-8, or
// f.parse refuses it, and records which in m.
func keepTxValue(p *jsonscan.Scanner[[]byte], i int, f *txField, b uint16, tx *Transaction, v *ValidationError, m *txMasks, raw []byte) {
	var rule string
	switch {
	case p.Long(): // reported as too long
		m.reported |= b
		return
	case p.NotUTF8(): // read as U+FFFD: not the text sent
		rule, raw = ruleUTF8, nil
	case f.parse == nil:
		f.store(tx, p.Keep(raw))
	default:
		rule = f.parse(tx, p, raw)
	}
	if rule != "" {
		v.add(txPointer(i, f.name), rule, string(raw))
		m.reported |= b
		return
	}
	m.present |= b
}

// kindRules is the rule of a value of the wrong JSON type, by the kind
// wanted.
var kindRules = [...]string{kindString: ruleString, kindNumber: ruleNumber, kindObject: ruleObject}

// decodeZakat reads a data object into d and returns the mask of the fields
// present as strings; wrong types, repeated keys and text that is not
// valid UTF-8 are reported.
func decodeZakat(p *jsonscan.Scanner[[]byte], i int, d *Data, v *ValidationError) uint16 {
	var present, keys uint16
	p.Members(func(key []byte) {
		bit := zakatIndex(key)
		if bit < 0 {
			p.Skip()
			return
		}
		b := uint16(1) << bit
		switch {
		case keys&b != 0:
			v.add(dataPointer(i, zakatFields[bit].name), ruleDuplicateKey, p.SkipText())
			present &^= b
		case p.Peek() != '"':
			v.add(dataPointer(i, zakatFields[bit].name), ruleString, p.SkipText())
		default:
			switch s := p.Str(); {
			case p.Long(): // reported as too long
			case p.NotUTF8():
				v.add(dataPointer(i, zakatFields[bit].name), ruleUTF8, "")
			default:
				*zakatFields[bit].ptr(d) = p.Keep(s)
				present |= b
			}
		}
		keys |= b
	})
	return present
}

// validateStream is Validator.ValidateBatchReader with windows of about chunk bytes
// (tests use tiny ones, to put window ends everywhere) and the agency codes
// and value cap of rules.
func validateStream(r io.Reader, chunk int, rules Validator) (int, error) {
	p := jsonscan.NewStream(r, chunk)
	var v ValidationError
	_, count, err := decodeBatch(p, &v, nil, rules)
	p.End()
	if err := p.ReadErr(); err != nil {
		return count, fmt.Errorf("paygate: reading the batch: %w", err)
	}
	if err != nil {
		return count, err
	}
	if err := p.Err(); err != nil {
		v.Problems = append(v.Problems[:0], newFieldError("", ruleJSON+": "+err.Error(), ""))
		return 0, &v
	}
	return count, v.err()
}

// longValueProblem reports, into v, a value or key longer than the cap max
// (a jsonscan.Limits.OnLong).
func longValueProblem(v *ValidationError, max int) func(pointer string, key bool) {
	return func(pointer string, key bool) {
		if key {
			v.add(pointer, fmt.Sprintf(ruleKeyTooLong, max), "")
			return
		}
		v.add(pointer, fmt.Sprintf(ruleTooLong, max), "")
	}
}
