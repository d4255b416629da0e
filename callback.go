package paygate

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// Callback is a payment result the gateway POSTs to the merchant's returnUrl
// (spec A2): the direct, signed server callback or the buyer's unsigned
// browser return.
type Callback struct {
	Status     Status // success, pending, failed (or whatever the gateway sent)
	OrderNo    string // the gateway's order number
	RefNo      string // the merchant's reference as sent, extra data included
	ExtraData  string
	Amount     Amount
	AddCharge  Amount
	FPXTxnID   string
	FPXTxnTime string
	Agency     string
	// FPX is the parsed `fpx` JSON string; zero when the field is absent.
	FPX FPXDetail
	// Form holds every field as received, signature included.
	Form url.Values
	// Verified is true only when the signature was checked against a key.
	Verified bool
}

// FPXDetail is the payment-network detail of a callback (the `fpx` field of
// spec A2, a JSON string whose inner structure the spec does not show).
type FPXDetail struct {
	// Present is true when the callback carried an fpx field.
	Present bool
	// DebitAuthCode is fpx_debit_auth_code; its Status and Reason map it per
	// the spec's table and the public FPX code list.
	DebitAuthCode FPXCode
	// HasDebitAuthCode is true when the JSON held fpx_debit_auth_code.
	HasDebitAuthCode bool
	// Raw is the whole JSON object as received.
	Raw json.RawMessage
}

// ParseCallback reads the fields of spec A2 from a callback form. It does
// not verify the signature (VerifyCallback does; CallbackHandler does both).
// `status` and `refNo` are required, amounts must be decimals with at most
// two places, `fpx` must be a JSON object whose fpx_debit_auth_code, if
// present, is a string, and no field may have several values. Every problem
// is reported at once, by field name, in a *ValidationError.
func ParseCallback(form url.Values) (*Callback, error) {
	var v ValidationError
	get := func(name string) string {
		vals := form[name]
		if len(vals) > 1 {
			v.add(name, "must have one value", "")
		}
		if len(vals) == 0 {
			return ""
		}
		return vals[0]
	}
	cb := &Callback{
		Status:     Status(get("status")),
		OrderNo:    get("orderNo"),
		RefNo:      get("refNo"),
		ExtraData:  get("extraData"),
		FPXTxnID:   get("fpxTxnId"),
		FPXTxnTime: get("fpxTxnTime"),
		Agency:     get("agency"),
		Form:       form,
	}
	if cb.Status == "" {
		v.add("status", ruleRequired, "")
	}
	if cb.RefNo == "" {
		v.add("refNo", ruleRequired, "")
	}
	for _, f := range []struct {
		name string
		dst  *Amount
	}{{"amount", &cb.Amount}, {"addCharge", &cb.AddCharge}} {
		if s := get(f.name); s != "" {
			a, err := ParseAmount(s)
			if err != nil {
				v.add(f.name, "must be a decimal with at most two places", s)
			}
			*f.dst = a
		}
	}
	if raw := get("fpx"); raw != "" {
		cb.FPX.Present, cb.FPX.Raw = true, json.RawMessage(raw)
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(cb.FPX.Raw, &inner); err != nil || inner == nil {
			v.add("fpx", "must be a JSON object", raw)
		} else if code, ok := inner["fpx_debit_auth_code"]; ok {
			var s string
			if err := json.Unmarshal(code, &s); err != nil {
				v.add("fpx", "fpx_debit_auth_code must be a string", string(code))
			}
			cb.FPX.DebitAuthCode, cb.FPX.HasDebitAuthCode = FPXCode(s), true
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return cb, nil
}

// Consistent reports whether a success callback's FPX code agrees with its
// status: the spec's table pairs success with fpx_debit_auth_code 00. A
// callback without an fpx field, or without the code in it (card and
// DuitNow payments), has nothing to disagree with.
func (cb *Callback) Consistent() bool {
	return cb.Status != StatusSuccess || !cb.FPX.HasDebitAuthCode || cb.FPX.DebitAuthCode == "00"
}

// String describes the callback without its form: status, references, amount.
func (cb *Callback) String() string {
	return fmt.Sprintf("callback %s refNo=%q orderNo=%q amount=%s verified=%t", cb.Status, cb.RefNo, cb.OrderNo, cb.Amount, cb.Verified)
}
