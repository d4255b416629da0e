package paygate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestZZPanics(t *testing.T) {
	key := mustKey(t, testKeyUUID)
	hostile := []string{"", "\x00", "%", "%zz", "~", "~~", "\xff\xfe", strings.Repeat("a", 100000), "a=1&a=2", ";", "exp", "signature", "fpx", "{", `{"fpx_debit_auth_code":`, "null", "[]", "-1", "1e400", "\u2028", "\ufeff{}"}
	try := func(name string, f func()) {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic %v", name, r)
			}
		}()
		f()
	}
	for _, s := range hostile {
		for _, s2 := range hostile[:8] {
			form := url.Values{s: {s2}, "signature": {s2}, "fpx": {s}, "status": {s2}, "refNo": {s}, "amount": {s}}
			try("ParseCallback", func() { cb, _ := ParseCallback(form); if cb != nil { _ = cb.String(); _ = fmt.Sprintf("%v %+v %#v", cb, cb, cb) } })
			try("Explain", func() { ExplainCallback(form, key) })
			try("Explain0", func() { ExplainCallback(form, Key{}) })
			try("Verify0", func() { VerifyCallback(form) ; VerifyCallback(form, Key{})})
			try("VerifySignedForm", func() { VerifySignedForm(form, time.Now(), key) })
			try("VerifySignedFormWithPath", func() { VerifySignedFormWithPath(s, form, time.Now(), key) })
			try("FormMessage", func() { FormMessage(form, time.Now()); FormMessageWithPath(s, form, time.Now()) })
			try("CallbackMessages", func() { CallbackMessages(form) })
			try("URLMessage", func() { URLMessage(s+s2, time.Now()); URLMessage("https://x/"+s+"?"+s2, time.Now()) })
			try("NewCallbackRequest", func() { NewCallbackRequest(key, s, form); NewReturnRequest(s, form) })
			try("VerifySignedURL", func() { u, err := url.Parse("https://x/?" + s + "=" + s2); if err == nil { VerifySignedURL(u, time.Now(), key) } })
		}
		try("ParseAmount", func() { ParseAmount(s) })
		try("Amount.Unmarshal", func() { var a Amount; a.UnmarshalJSON([]byte(s)) })
		try("FPX", func() { c := FPXCode(s); c.Describe(); c.Reason(); c.Status() })
		try("ValidEmail", func() { ValidEmail(s) })
		try("ParseKey", func() { ParseKey(s) })
		try("ParseAgencies", func() { ParseAgencies(s) })
		try("BrandAgencies", func() { v, err := NewWebhookValidator(BrandAgencies(s)...); if err == nil { v.Schema() } })
		try("ValidateBatchJSON", func() { ValidateBatchJSON([]byte(s)) })
		try("Row", func() { r := ReportRow{raw: s}; r.Payment(); r.Decode(new(any)) })
		try("OrderRecord", func() { r := &OrderRecord{Raw: []byte(s)}; r.Payment() })
		try("History", func() { h := &TransactionHistory{Raw: []byte(s)}; h.Payments() })
		try("SplitRefNo", func() { SplitRefNo(s) })
	}
	for _, a := range []Amount{math.MinInt64, math.MaxInt64, -1, 0} {
		try("Amount", func() { _ = a.String(); a.MarshalJSON() })
	}
	try("nil ValidationError", func() { var e *ValidationError; _ = fmt.Sprint(e) })
	try("nil APIError", func() { var e *APIError; _ = fmt.Sprint(e) })
	try("nil Callback", func() { var e *Callback; _ = fmt.Sprint(e); e.Consistent() })
	try("nil SendReport", func() { var e *SendReport; e.Attempts() })
	try("HookClaim zero", func() { var c HookClaim; c.Completed() })
	try("nil PaymentRecord", func() { var p *PaymentRecord; p.Consistent() })
	try("nil Client String", func() { var c *Client; _ = fmt.Sprint(c); _ = fmt.Sprintf("%#v", c) })
	try("nil url VerifySignedURL", func() { VerifySignedURL(nil, time.Now(), key) })
	try("zero Client", func() { var c Client; _ = fmt.Sprint(&c); c.PayURL(PayLink{}); c.CheckoutForm(Order{}) })
	try("zero Client call", func() { var c Client; c.LookupOrder(context.Background(), "x") })
	try("nil CheckoutForm", func() { var f *CheckoutForm; f.WriteHTML(&bytes.Buffer{}) })
	try("zero CheckoutForm", func() { var f CheckoutForm; f.WriteHTML(&bytes.Buffer{}) })
	try("zero WebhookSender", func() { var s WebhookSender; s.Send(context.Background(), []Transaction{{}}) })
	try("zero handler reconcile", func() { var h CallbackHandler; c, _ := NewClient(); h.Reconcile(context.Background(), c, []string{"x"}) })
	try("WithMaxValueBytes", func() { WebhookValidator{}.WithMaxValueBytes(math.MinInt).ValidateBatchJSON([]byte(`{"transactions":[]}`)) })
	try("ValidateTransactions", func() { ValidateTransactions([]Transaction{{Amount: math.MinInt64, Data: ZakatData{Type: "fitrah", Rate: "99999999999999999999.5", Dependants: "99999999999999999999"}}}) })
	try("ValidateTransactions2", func() { ValidateTransactions([]Transaction{{Amount: math.MaxInt64, Data: ZakatData{Type: "fitrah", Rate: "0.0000000000000000000000000001", Dependants: "0"}}}) })
}
