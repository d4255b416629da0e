package paygate

// The bank list's answer is not published: banks.go reads the shapes a
// PHP service and FPX itself use (a bare array or one under "data" or
// "banks"; each bank's code, name and status under the names of
// bankKeys), and refuses anything else with an error that says what it
// found.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// BankChannel is an FPX channel whose banks Client.Banks lists.
type BankChannel string

// The FPX channels: retail (B2C) and corporate (B2B) online banking.
const (
	BankChannelB2C BankChannel = "b2c"
	BankChannelB2B BankChannel = "b2b"
)

// Bank is one bank of an FPX bank list.
type Bank struct {
	// Code is the bank's FPX code (e.g. ABB0233), what Order.PrefBank
	// takes.
	Code string
	// Name is the name to show the buyer.
	Name string
	// Status is the status as the gateway gave it ("A", "online", ...;
	// empty when it gave none).
	Status string
	// Online is whether the bank takes payments now: a status of A (FPX's
	// "active"), online, active, available, 1 or true, in any case, or
	// no status at all. Any other status is offline (FPX's B, blocked).
	Online bool
}

// Banks fetches the banks of an FPX channel: GET
// {reports_url}/api/v1/fpx/banklist/{b2c|b2b} (Endpoints.BankList),
// authenticated like the reports (Bearer AuthToken, else signed with the
// API key and agency). The endpoint is not in the protocol: its path is
// the gateway's public SDK page's and its answer's shape is a guess
// (docs/assumptions.md A-banklist). A channel other than
// BankChannelB2C and BankChannelB2B is refused before any request. A 404
// (the service has no such endpoint, or not at that path: see
// WithEndpoints) or another refusal is an *APIError; an answer whose
// status is present and not OK matches ErrReportStatus; an answer without
// a list of banks, each with a code, is an error saying what is wrong. The
// list is returned as the gateway orders it.
func (c *Client) Banks(ctx context.Context, channel BankChannel) ([]Bank, error) {
	if channel != BankChannelB2C && channel != BankChannelB2B {
		return nil, &ValidationError{Problems: []FieldError{newFieldError("channel", `must be "b2c" or "b2b"`, string(channel))}}
	}
	resp, err := c.reportGET(ctx, c.endpoints.BankList+string(channel), url.Values{})
	if err != nil {
		return nil, err
	}
	banks, err := parseBanks([]byte(resp.Body), resp.scrub)
	if err != nil {
		return nil, resp.fail(fmt.Errorf("paygate: bank list %s: %w", channel, err))
	}
	return banks, nil
}

// bankKeys are the member names a bank's fields go by, first found wins.
var bankKeys = [...]struct {
	field string
	names []string
}{
	{"code", []string{"code", "bank_code", "bankCode", "id"}},
	{"name", []string{"name", "bank_name", "bankName", "display_name", "displayName"}},
	{"status", []string{"status", "bank_status", "online", "active"}},
}

// onlineStatus are the statuses, lower-cased, of a bank that takes
// payments.
var onlineStatus = map[string]bool{"": true, "a": true, "online": true, "active": true, "available": true, "1": true, "true": true}

// errBankList is the error of an answer that is not a bank list.
var errBankList = errors.New("the answer is not a bank list")

// parseBanks reads a bank list answer: an array of banks, or an object
// whose "data" or "banks" member is one and whose status, when present,
// is OK. Every bank needs a code; the error names the first that has none.
// scrub cleans the status quoted in an error of the request's
// credentials.
func parseBanks(body []byte, scrub func(string) string) ([]Bank, error) {
	list, err := bankArray(body, scrub)
	if err != nil {
		return nil, err
	}
	banks := make([]Bank, 0, len(list))
	for i, raw := range list {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, fmt.Errorf("%w: bank %d is not an object", errBankList, i)
		}
		var f [len(bankKeys)]string
		for k, key := range bankKeys {
			f[k] = memberText(m, key.names)
		}
		if f[0] == "" {
			return nil, fmt.Errorf("%w: bank %d has no code", errBankList, i)
		}
		banks = append(banks, Bank{Code: f[0], Name: f[1], Status: f[2], Online: onlineStatus[strings.ToLower(f[2])]})
	}
	return banks, nil
}

// bankArray finds the array of banks in an answer.
func bankArray(body []byte, scrub func(string) string) ([]json.RawMessage, error) {
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil {
		return list, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("%w: not JSON", errBankList)
	}
	if status, ok := historyStatus(obj["status"]); !ok {
		return nil, fmt.Errorf("%w: status %.40q", ErrReportStatus, scrub(status))
	}
	for _, name := range []string{"data", "banks"} {
		if raw := bytes.TrimSpace(obj[name]); len(raw) > 0 && raw[0] == '[' && json.Unmarshal(raw, &list) == nil {
			return list, nil
		}
	}
	return nil, fmt.Errorf("%w: no array of banks (a JSON array, or one under \"data\" or \"banks\")", errBankList)
}

// memberText is the first of names present in m, as text: a string as
// is, a number or a boolean as its JSON text; "" when none is.
func memberText(m map[string]json.RawMessage, names []string) string {
	for _, n := range names {
		raw := bytes.TrimSpace(m[n])
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.TrimSpace(s)
		}
		if raw[0] != '{' && raw[0] != '[' {
			return string(raw)
		}
	}
	return ""
}
