package paygate

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// Callback is a payment result the gateway POSTs to the merchant's returnUrl
// (docs/protocol.md "Payment callback"): the direct, signed server callback
// or the buyer's unsigned browser return.
//
// Only `status` and `refNo` are needed to act on a callback, and only they
// are required. The protocol does not show the types of the other fields nor
// the inside of `fpx` (docs/assumptions.md A-fields), so whatever of them
// does not parse is listed in Problems, its raw text stays in Form, and the
// callback is still acted on.
type Callback struct {
	// Status is the `status` field: success, pending, failed, or whatever
	// the gateway sent.
	Status Status
	// OrderNo is the gateway's order number (`orderNo`).
	OrderNo string
	// RefNo is the merchant's base reference: the `refNo` field up to its
	// first "~". Fulfilment is keyed on it, so a callback whose refNo arrives
	// joined ("INV-1~cart-7") and one whose refNo arrives split ("INV-1"
	// plus extraData "cart-7") are one event (docs/assumptions.md A-refno).
	RefNo string
	// ExtraData is the extra merchant reference: everything after the first
	// "~" of a joined refNo, further "~" included (docs/assumptions.md
	// A-refno-tildes), else the `extraData` field.
	ExtraData string
	// Amount is the `amount` field in sen; zero when it did not parse (then
	// Problems names it and Form holds the raw text).
	Amount Amount
	// AddCharge is the `addCharge` field in sen; zero when it did not parse.
	AddCharge Amount
	// FPXTxnID is the payment network's transaction id (`fpxTxnId`).
	FPXTxnID string
	// FPXTxnTime is the payment network's transaction time (`fpxTxnTime`),
	// as received: its format is not shown.
	FPXTxnTime string
	// Agency is the merchant's agency identifier (`agency`).
	Agency string
	// FPX is what was read of the `fpx` JSON string; zero when it is absent.
	FPX FPXDetail
	// Problems lists the fields that did not parse or contradict each other.
	// The callback is still handled; see Consistent.
	Problems []FieldError
	// Form holds every field as received, signature included.
	Form url.Values
	// Verified is true only when the signature was checked against a key,
	// or the event was read back from the gateway's authenticated API
	// (Source SourceLookup or SourceReport).
	Verified bool
	// Source says how the event reached the handler: a callback, or a
	// reconciliation's lookup or report row (CallbackHandler.Reconcile).
	Source Source
	// Stale is set on a pending, failed or unknown status that came after
	// the refNo was fulfilled: the order stays paid; never regress it
	// (docs/assumptions.md A-stale-status).
	Stale bool

	// fpxUnread is set while FPX.Raw is not yet read into FPX and Problems
	// (parseCallbackFields; readFPX reads it).
	fpxUnread bool
}

// Source says how a verified event reached the CallbackHandler.
type Source uint8

// The sources of a verified event.
const (
	// SourceCallback: the gateway's signed callback.
	SourceCallback Source = iota
	// SourceLookup: the order lookup, read by CallbackHandler.Reconcile.
	SourceLookup
	// SourceReport: a payment report row, read by
	// CallbackHandler.ReconcileReport.
	SourceReport
)

// sourceNames names each Source.
var sourceNames = [...]string{SourceCallback: "callback", SourceLookup: "lookup", SourceReport: "report"}

// String names the source.
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// FPXDetail is the payment-network detail of a callback: the `fpx` field, a
// JSON string whose inner structure the protocol does not show beyond
// `fpx_debit_auth_code` (docs/assumptions.md A-fpx). Only that code is read.
type FPXDetail struct {
	// Present is true when the callback carried a non-empty fpx field.
	Present bool
	// DebitAuthCode is fpx_debit_auth_code; its Status and Reason map it per
	// the protocol's table and the public FPX code list. Empty when the code
	// is absent, null, not a string or given more than once.
	DebitAuthCode FPXCode
	// HasDebitAuthCode is true when the JSON named fpx_debit_auth_code at
	// all (with any value, null included).
	HasDebitAuthCode bool
	// Raw is the fpx field as received.
	Raw string
}

// ParseCallback reads the fields of a payment callback (docs/protocol.md
// "Payment callback"). It does not verify the signature (VerifyCallback
// does; CallbackHandler does both).
//
// It fails only when the callback cannot be routed: `status` or `refNo`
// missing, empty, or given several times (a *ValidationError naming each).
// Every other field that does not parse (an amount such as "1,000.00", an
// fpx that is not a JSON object, a fpx_debit_auth_code that is not a string
// or appears twice, several values of one field (docs/assumptions.md
// A-multiple-values), an extraData that disagrees
// with a joined refNo) is listed in Callback.Problems and the callback is
// returned: a verified payment is never dropped for a field the protocol
// does not define.
func ParseCallback(form url.Values) (*Callback, error) {
	cb, err := parseCallbackFields(form)
	if err != nil {
		return nil, err
	}
	cb.readFPX()
	return cb, nil
}

// parseCallbackFields is ParseCallback but for the inside of the fpx field,
// which is left for readFPX: the handler reads it only for an event it
// acts on, never for a verified duplicate.
func parseCallbackFields(form url.Values) (*Callback, error) {
	cb := &Callback{Form: form}
	var routing ValidationError
	get := func(name string, required bool) string {
		vals := form[name]
		switch {
		case len(vals) > 1 && required:
			routing.add(name, "must have one value", "")
		case len(vals) > 1:
			cb.problem(name, "has several values; the first is used", "")
		case len(vals) == 0 || vals[0] == "":
			if required {
				routing.add(name, ruleRequired, "")
			}
			return ""
		}
		return vals[0]
	}
	cb.Status = Status(get("status", true))
	refNo := get("refNo", true)
	cb.OrderNo = get("orderNo", false)
	cb.FPXTxnID = get("fpxTxnId", false)
	cb.FPXTxnTime = get("fpxTxnTime", false)
	cb.Agency = get("agency", false)
	extra := get("extraData", false)
	base, joined, isJoined := strings.Cut(refNo, "~")
	switch {
	case refNo != "" && base == "":
		// Nothing to key fulfilment by (docs/assumptions.md A-refno-leading-tilde).
		routing.add("refNo", "must have a reference before ~", refNo)
	case !isJoined:
		cb.RefNo, cb.ExtraData = refNo, extra
	default:
		cb.RefNo, cb.ExtraData = base, joined
		if extra != "" && extra != joined {
			cb.problem("extraData", "differs from the extra reference joined to refNo, which is used", extra)
		}
	}
	if len(routing.Problems) > 0 {
		failed := routing // only a refused callback's error is on the heap
		return nil, failed.err()
	}
	cb.Amount = cb.amount("amount", get("amount", false))
	cb.AddCharge = cb.amount("addCharge", get("addCharge", false))
	if raw := get("fpx", false); raw != "" {
		cb.FPX.Present, cb.FPX.Raw, cb.fpxUnread = true, raw, true
	}
	return cb, nil
}

// problem records a field that did not parse.
func (cb *Callback) problem(field, rule, value string) {
	cb.Problems = append(cb.Problems, newFieldError(field, rule, value))
}

// amount parses an optional money field, recording a problem when it is not
// a decimal with at most two places.
func (cb *Callback) amount(field, s string) Amount {
	if s == "" {
		return 0
	}
	a, err := ParseAmount(s)
	if err != nil {
		cb.problem(field, "is not a decimal with at most two places; read as 0", s)
		return 0
	}
	return a
}

// readFPX reads fpx_debit_auth_code from the fpx JSON (FPX.Raw) with the
// package's scanner, skipping every other member without decoding it, once:
// it does nothing for a callback whose fpx was read or that had none.
func (cb *Callback) readFPX() {
	if !cb.fpxUnread {
		return
	}
	cb.fpxUnread = false
	raw := cb.FPX.Raw
	p := jsonscan.New(raw)
	if p.Peek() != '{' {
		cb.problem("fpx", "is not a JSON object", raw)
		return
	}
	var code string
	var seen int
	valid := true
	p.Members(func(key string) {
		if key != "fpx_debit_auth_code" {
			p.Skip()
			return
		}
		seen++
		switch c := p.Peek(); c {
		case '"':
			code = p.Str()
		case 'n':
			p.Skip()
			code = ""
		default:
			valid = false
			cb.problem("fpx", "fpx_debit_auth_code is not a string", p.Skip())
		}
	})
	p.End()
	switch err := p.Err(); {
	case err != nil:
		cb.problem("fpx", "is not valid JSON: "+err.Error(), "")
		return
	case seen == 0:
		return
	case seen > 1:
		cb.problem("fpx", "fpx_debit_auth_code appears more than once; the code is unknown", "")
	case valid:
		cb.FPX.DebitAuthCode = FPXCode(code)
	}
	cb.FPX.HasDebitAuthCode = true
}

// Consistent reports whether the callback parsed cleanly and, for a success,
// agrees with the protocol's table, which pairs success with
// fpx_debit_auth_code 00. A success whose code is present but empty, null,
// unreadable or another code, or any callback with Problems, is
// inconsistent: CallbackHandler still fulfils a verified success (the
// receiver rule keys on status alone) and logs a warning, so that a Fulfil
// can hold such an order for review. A success without an fpx field, or
// without the code in it, has nothing to disagree with.
func (cb *Callback) Consistent() bool {
	if len(cb.Problems) > 0 {
		return false
	}
	return cb.Status != StatusSuccess || !cb.FPX.HasDebitAuthCode || cb.FPX.DebitAuthCode == "00"
}

// CreatedRefNo is the reference the order was created with, which the
// gateway's lookups take (Client.LookupOrderByRefNo, CallbackHandler.
// Reconcile, paygate lookup): RefNo, then "~" and ExtraData when the order
// had extra data (docs/protocol.md A1 convention). Keep it beside the
// order to reconcile it later; RefNo alone finds only an order created
// without extra data.
func (cb *Callback) CreatedRefNo() string {
	if cb.ExtraData == "" {
		return cb.RefNo
	}
	return cb.RefNo + "~" + cb.ExtraData
}

// String describes the callback without its form: status, references, amount.
func (cb *Callback) String() string {
	return fmt.Sprintf("callback %s refNo=%q orderNo=%q amount=%s verified=%t", cb.Status, cb.RefNo, cb.OrderNo, cb.Amount, cb.Verified)
}
