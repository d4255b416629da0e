package paygate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
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
// signed with the API key and agency). The e-mail must pass ValidEmail; an
// answer that is not JSON, or a JSON object whose status is present and not
// "OK", is an error (the latter matching ErrReportStatus).
func (c *Client) Transactions(ctx context.Context, email string) (*TransactionHistory, error) {
	switch {
	case email == "":
		return nil, &ValidationError{Problems: []FieldError{newFieldError("email", ruleRequired, "")}}
	case !ValidEmail(email):
		return nil, &ValidationError{Problems: []FieldError{newFieldError("email", ruleEmail, email)}}
	}
	body, err := c.reportGET(ctx, c.endpoints.Transactions, url.Values{"email": {email}})
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(body)) {
		return nil, fmt.Errorf("paygate: transactions: the answer is not JSON")
	}
	var a struct {
		Status *string `json:"status"`
	}
	if json.Unmarshal([]byte(body), &a) == nil && a.Status != nil && *a.Status != "OK" {
		return nil, fmt.Errorf("%w: transactions: status %q", ErrReportStatus, *a.Status)
	}
	return &TransactionHistory{Raw: json.RawMessage(body)}, nil
}
