package paygate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/paygate-go/paygate/internal/jsonscan"
)

// TransactionHistory is the answer of Transactions, kept raw: its shape is
// not published (docs/assumptions.md A-transactions).
type TransactionHistory struct {
	// Raw is the answer's JSON as received.
	Raw json.RawMessage
}

// Decode unmarshals the history into v.
func (h *TransactionHistory) Decode(v any) error { return json.Unmarshal(h.Raw, v) }

// Transactions fetches a buyer's transaction history by e-mail address:
// GET {reports_url}/api/user/v1/transactions?email=... (Endpoints.Transactions),
// the public PHP client's GetTransactionHistory (docs/assumptions.md
// A-transactions), authenticated like the reports (Bearer AuthToken, else
// signed with the API key and agency). The e-mail must pass validEmail; an
// answer that is not JSON, or a JSON object whose status is present (not
// null) and not the string "OK", is an error (the latter matching
// ErrReportStatus).
func (c *Client) Transactions(ctx context.Context, email string) (*TransactionHistory, error) {
	switch {
	case email == "":
		return nil, &ValidationError{Problems: []FieldError{newFieldError("email", ruleRequired, "")}}
	case !validEmail(email):
		return nil, &ValidationError{Problems: []FieldError{newFieldError("email", ruleEmail, email)}}
	}
	resp, err := c.reportGET(ctx, c.endpoints.Transactions, url.Values{"email": {email}})
	if err != nil {
		return nil, err
	}
	body := resp.Body
	if !json.Valid([]byte(body)) {
		return nil, resp.fail(errors.New("paygate: transactions: the answer is not JSON"))
	}
	var a struct {
		Status json.RawMessage `json:"status"`
	}
	// Any JSON type, so that a status that is not a string is refused, not
	// an answer whose status went unread; an answer that is not an object
	// has none.
	_ = json.Unmarshal([]byte(body), &a)
	if status, ok := historyStatus(a.Status); !ok {
		return nil, resp.fail(fmt.Errorf("%w: transactions: status %.40q", ErrReportStatus, resp.scrub(status)))
	}
	return &TransactionHistory{Raw: json.RawMessage(body)}, nil
}

// historyStatus reads the status member of a history answer: ok when it
// is absent, null or the string OK. Otherwise it returns the status, or
// its JSON text when it is not a string.
func historyStatus(raw json.RawMessage) (status string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	if json.Unmarshal(raw, &status) != nil {
		return string(raw), false
	}
	return status, status == "OK"
}

// Payments decodes the history's rows into PaymentRecords, by the rules of
// ReportRow.Payment (docs/assumptions.md A-transactions, A-payment-record).
// The rows are the answer itself when it is an array, else its "data" or
// "transactions" array. Rows that decode are returned even when others do
// not; the error then names each row that did not (by index), joined, the
// first 100 of them, and counts the rest. An
// answer with anything but white space after its value is an error, with
// no rows: it is not the JSON it claims to be.
func (h *TransactionHistory) Payments() ([]PaymentRecord, error) {
	sc := jsonscan.New(string(h.Raw))
	var rows []string
	found := false
	each := func() {
		found = true
		sc.Elements(func(int) { rows = append(rows, sc.Skip()) })
	}
	switch sc.Peek() {
	case '[':
		each()
	case '{':
		sc.Members(func(key string) {
			if (key == "data" || key == "transactions") && !found && sc.Peek() == '[' {
				each()
				return
			}
			sc.Skip()
		})
	}
	sc.End()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("paygate: transactions: %w", err)
	}
	if !found {
		return nil, errors.New("paygate: transactions: no array of rows (the answer, or its data or transactions member)")
	}
	out := make([]PaymentRecord, 0, len(rows))
	var errs []error
	unlisted := 0
	for i, raw := range rows {
		p, err := decodePaymentRecord(raw, "transaction")
		switch {
		case err == nil:
			out = append(out, p)
		case len(errs) < maxRowErrors:
			errs = append(errs, fmt.Errorf("row %d: %w", i, err))
		default:
			unlisted++
		}
	}
	if unlisted > 0 {
		errs = append(errs, fmt.Errorf("paygate: transactions: %d more rows did not decode, not listed: only the first %d are", unlisted, maxRowErrors))
	}
	return out, errors.Join(errs...)
}

// maxRowErrors is how many rows that did not decode the error of
// TransactionHistory.Payments names; one more error counts the rest, so
// that the error stays small whatever the answer (64 MiB of [1,1,...]
// named 32 million rows in an error of gigabytes).
const maxRowErrors = 100
