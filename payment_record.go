package paygate

import (
	"fmt"
	"strings"
	"time"

	"github.com/paygate-go/paygate/internal/jsonscan"
	"github.com/paygate-go/paygate/internal/sen"
)

// PaymentRecord is one payment as the payment report (ReportRow.Payment)
// or the order lookup (OrderRecord.Payment) shows it, typed. It is opt-in:
// the raw JSON stays available (ReportRow.Raw, OrderRecord.Raw).
//
// The protocol shows the fields of neither answer, so the names read are a
// guess, several names per field, listed in docs/assumptions.md
// A-payment-record with their evidence; the sandbox serves both shapes the
// guess covers (gatewaytest.WithReportRows). As with a Callback, only the
// reference is required: a field that is absent stays zero, and one that
// does not parse or contradicts another is listed in Problems, never
// dropped silently.
type PaymentRecord struct {
	// RefNo is the merchant's base reference: the reference up to its first
	// "~" (SplitRefNo), the key a callback is fulfilled under
	// (docs/assumptions.md A-refno).
	RefNo string
	// ExtraData is what follows the first "~" of the reference, whatever it
	// holds (further "~" included: docs/assumptions.md A-refno-tildes).
	ExtraData string
	// OrderNo is the gateway's order number.
	OrderNo string
	// Agency is the merchant's agency identifier.
	Agency string
	// Amount is the payment's amount in sen; zero when absent or unreadable
	// (then Problems names it).
	Amount Amount
	// Status is the row's status; when the row has none, the status the
	// protocol's table gives its fpx_debit_auth_code (docs/protocol.md A2);
	// "" when it has neither (an outcome nobody can prove: unconfirmed).
	Status Status
	// FPXCode is fpx_debit_auth_code; HasFPXCode tells an empty code from an
	// absent one.
	FPXCode FPXCode
	// HasFPXCode is true when the row named fpx_debit_auth_code.
	HasFPXCode bool
	// FPXTxnID is the payment network's transaction id.
	FPXTxnID string
	// Time is when the payment was made (the FPX transaction time) or,
	// failing that, when the order was created; zero when the row has
	// neither or it did not parse. Times without an offset are Malaysian
	// (MalaysiaTime).
	Time time.Time
	// Problems lists the fields that did not parse or contradict each other.
	Problems []FieldError
}

// SplitRefNo splits a reference as the gateway carries it, refNo~extra, at
// its FIRST "~" into the merchant's base reference and the extra reference;
// everything after that "~" is the extra reference, whatever it holds
// (docs/protocol.md A1 convention; docs/assumptions.md A-refno-tildes for
// several "~"). A reference without "~" has no extra part.
func SplitRefNo(ref string) (base, extra string) {
	base, extra, _ = strings.Cut(ref, "~")
	return base, extra
}

// Consistent reports whether the record parsed cleanly and its status, a
// known one, agrees with its fpx_debit_auth_code by the protocol's table
// (docs/protocol.md A2). Reconciliation may still act on a verified
// record's Status; Consistent is for holding odd ones for review.
func (p *PaymentRecord) Consistent() bool { return len(p.Problems) == 0 }

// recordField is one field of a PaymentRecord.
type recordField uint8

const (
	recRef recordField = iota
	recOrderNo
	recAgency
	recAmount
	recStatus
	recCode
	recTxnID
	recTxnTime
	recCreated
	recFields
)

// recordName is a JSON member a PaymentRecord field is read from, and its
// rank among that field's names (0 wins).
type recordName struct {
	field recordField
	rank  uint8
}

// recordNames are the member names PaymentRecord reads, per field in order
// of preference (docs/assumptions.md A-payment-record): the sandbox's names
// first, then the payment network's FPX message names the public PHP client
// indexes its cache on (fpx_seller_order_no), then the callback's names.
var recordNames = map[string]recordName{
	"seller_order_no":     {recRef, 0},
	"fpx_seller_order_no": {recRef, 1},
	"refno":               {recRef, 2},
	"refNo":               {recRef, 3},
	"order_no":            {recOrderNo, 0},
	"orderNo":             {recOrderNo, 1},
	"agency":              {recAgency, 0},
	"amount":              {recAmount, 0},
	"fpx_txn_amount":      {recAmount, 1},
	"status":              {recStatus, 0},
	"fpx_debit_auth_code": {recCode, 0},
	"fpx_txn_id":          {recTxnID, 0},
	"fpx_fpx_txn_id":      {recTxnID, 1},
	"fpxTxnId":            {recTxnID, 2},
	"fpx_txn_time":        {recTxnTime, 0},
	"fpxTxnTime":          {recTxnTime, 1},
	"created_at":          {recCreated, 0},
	"created_date":        {recCreated, 1},
}

// recordSlot is the value read for one field and the name it came under;
// other names (or repeats) with another value make it conflicted.
type recordSlot struct {
	name, value string
	other       string // the first name that disagreed
	rank        uint8
	set         bool
	conflicted  bool
}

// recordZone is Malaysia time (MalaysiaTime), the zone of record times
// without an offset; a *time.Location is immutable, so one serves every
// decode.
var recordZone = MalaysiaTime()

// decodePaymentRecord reads one JSON object (a report row or a lookup
// record) in one pass with the package's scanner: no reflection, and the
// strings it keeps are substrings of raw unless they held escapes. what
// names the source in errors.
func decodePaymentRecord(raw, what string) (PaymentRecord, error) {
	var p PaymentRecord
	slots, err := p.scan(raw, what)
	if err != nil {
		return PaymentRecord{}, err
	}
	if p.RefNo, p.ExtraData, err = recordRef(slots[recRef], what); err != nil {
		return PaymentRecord{}, err
	}
	p.OrderNo = slots[recOrderNo].value
	p.Agency = slots[recAgency].value
	p.FPXTxnID = slots[recTxnID].value
	p.amount(slots[recAmount])
	code := slots[recCode]
	p.FPXCode, p.HasFPXCode = FPXCode(code.value), code.set
	p.status(slots[recStatus])
	if slots[recStatus].conflicted || slots[recCode].conflicted {
		// Two outcomes in one row: nothing is proved (docs/assumptions.md
		// A-payment-record).
		p.Status = ""
		p.problem("status", "conflicting values: the outcome is unconfirmed", "")
	}
	p.setTime(slots[recTxnTime], slots[recCreated])
	return p, nil
}

// scan reads the members of raw that recordNames lists into one slot per
// field, recording in p the values it ignores and the names that disagree.
func (p *PaymentRecord) scan(raw, what string) (slots [recFields]recordSlot, err error) {
	sc := jsonscan.New(raw)
	if sc.Peek() != '{' {
		return slots, fmt.Errorf("paygate: %s: not a JSON object", what)
	}
	sc.Members(func(key string) {
		n, ok := recordNames[key]
		if !ok {
			sc.Skip()
			return
		}
		if v, ok := p.scalar(sc, key); ok {
			slots[n.field].take(key, n, v, p)
		}
	})
	sc.End()
	if err := sc.Err(); err != nil {
		return slots, fmt.Errorf("paygate: %s: %w", what, err)
	}
	return slots, nil
}

// scalar reads member key's value as text: a string or a number. A null is
// absent (false); anything else is recorded as a problem and ignored.
func (p *PaymentRecord) scalar(sc *jsonscan.Scanner[string], key string) (string, bool) {
	switch c := sc.Peek(); {
	case c == '"':
		return sc.Str(), true
	case c == '-' || '0' <= c && c <= '9':
		return sc.Number(), true
	case c == 'n':
		sc.Skip()
		return "", false
	}
	p.problem(key, "is not a string or a number; ignored", sc.Skip())
	return "", false
}

// take records value v of member key, which is name n of the slot's
// field: the best-ranked name wins, and a name whose value differs makes
// the slot conflicted and is recorded in p. Times never conflict: of their
// names the best-ranked wins without a problem (setTime reads it).
func (s *recordSlot) take(key string, n recordName, v string, p *PaymentRecord) {
	agree := !s.set || s.value == v || n.field == recTxnTime || n.field == recCreated
	switch {
	case !s.set || n.rank < s.rank:
		if !agree {
			p.problem(s.name, "differs from "+key+", which is used", s.value)
		}
		prev := *s
		*s = recordSlot{name: key, value: v, rank: n.rank, set: true, conflicted: prev.conflicted || !agree}
		if !agree {
			s.other = prev.name
		}
	case !agree:
		p.problem(key, "differs from "+s.name+", which is used", v)
		if !s.conflicted {
			s.conflicted, s.other = true, key
		}
	}
}

// recordRef splits the reference slot into the merchant's base reference
// and the extra part; none, two different ones or an empty base (a
// reference starting with ~, docs/assumptions.md A-refno-leading-tilde) is
// an error: the payment cannot be attributed to one order.
func recordRef(ref recordSlot, what string) (base, extra string, err error) {
	if ref.conflicted {
		return "", "", &ValidationError{Problems: []FieldError{newFieldError(ref.name,
			"differs from "+ref.other+": the "+what+" names two references", ref.value)}}
	}
	if ref.value == "" {
		return "", "", &ValidationError{Problems: []FieldError{newFieldError("seller_order_no",
			"required: a "+what+" needs the merchant's reference (seller_order_no, fpx_seller_order_no, refno or refNo)", "")}}
	}
	base, extra = SplitRefNo(ref.value)
	if base == "" {
		return "", "", &ValidationError{Problems: []FieldError{newFieldError(ref.name, "must have a reference before ~", ref.value)}}
	}
	return base, extra, nil
}

// amount sets Amount from its slot; a value that is not an amount is a
// problem and reads as 0.
func (p *PaymentRecord) amount(a recordSlot) {
	if a.value == "" {
		return
	}
	amt, err := ParseAmount(a.value)
	if err != nil {
		p.problem(a.name, "is not a decimal with at most two places; read as 0", a.value)
	}
	p.Amount = amt
}

// setTime sets Time from the first of the slots that holds a time the SDK
// reads; each one before it that does not parse is a problem.
func (p *PaymentRecord) setTime(slots ...recordSlot) {
	for _, t := range slots {
		if t.value == "" {
			continue
		}
		if p.Time = parseRecordTime(t.value); !p.Time.IsZero() {
			return
		}
		p.problem(t.name, "is not a time the SDK reads (RFC 3339, or a Malaysian 2006-01-02 15:04:05, 2006-01-02T15:04:05, 20060102150405 or 2006-01-02)", t.value)
	}
}

// status sets Status from the status member or, without one, from the FPX
// code by the protocol's table, and records a status that is not one of the
// three or contradicts the code.
func (p *PaymentRecord) status(s recordSlot) {
	switch {
	case s.value != "":
		p.Status = Status(s.value)
	case p.HasFPXCode:
		p.Status = p.FPXCode.Status()
		return
	default:
		p.problem("status", "absent, and no fpx_debit_auth_code: the outcome is unconfirmed", "")
		return
	}
	switch {
	case !p.Status.Valid():
		p.problem(s.name, "is not success, pending or failed: the outcome is unconfirmed", s.value)
	case p.HasFPXCode && p.FPXCode.Status() != p.Status:
		p.problem("fpx_debit_auth_code", "contradicts status "+s.value+" (docs/protocol.md A2 table)", string(p.FPXCode))
	}
}

// parseRecordTime reads a time in RFC 3339, or a Malaysian
// 2006-01-02 15:04:05, 2006-01-02T15:04:05, FPX 20060102150405 or
// 2006-01-02 (docs/assumptions.md A-payment-record, and A-replay-bound for
// a callback's fpxTxnTime); zero when none fits. The layout is chosen by the text's
// shape, so a row costs one parse, not a failed one per layout.
func parseRecordTime(s string) time.Time {
	var layout string
	switch {
	case len(s) == 14 && sen.NonDigit(s) < 0:
		layout = "20060102150405"
	case len(s) == 10:
		layout = time.DateOnly
	case len(s) == 19 && s[10] == ' ':
		layout = time.DateTime
	case len(s) == 19 && s[10] == 'T':
		layout = "2006-01-02T15:04:05"
	default:
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}
		}
		return t
	}
	t, err := time.ParseInLocation(layout, s, recordZone)
	if err != nil {
		return time.Time{}
	}
	return t
}

// problem records a field that did not parse.
func (p *PaymentRecord) problem(field, rule, value string) {
	p.Problems = append(p.Problems, newFieldError(field, rule, value))
}

// Payment decodes the row into a PaymentRecord (docs/assumptions.md
// A-payment-record). It fails only when the row is not a JSON object, names
// no merchant reference, or names two different ones (the payment cannot be
// attributed); anything else odd is in Problems, and two different statuses
// or FPX codes leave Status "" (unconfirmed).
func (r ReportRow) Payment() (PaymentRecord, error) { return decodePaymentRecord(r.raw, "report row") }

// Payment decodes the lookup's record into a PaymentRecord, by the same
// rules as ReportRow.Payment (docs/assumptions.md A-payment-record,
// A-lookup).
func (r *OrderRecord) Payment() (PaymentRecord, error) {
	return decodePaymentRecord(string(r.Raw), "order record")
}
