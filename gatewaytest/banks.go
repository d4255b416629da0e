package gatewaytest

import (
	"net/http"

	"github.com/paygate-go/paygate"
)

// Bank is one bank of the sandbox's FPX bank lists (Banks).
type Bank struct {
	// Code is the bank's FPX code.
	Code string `json:"code"`
	// Name is the bank's display name.
	Name string `json:"name"`
	// Status is A (active) or B (blocked), FPX's statuses.
	Status string `json:"status"`
}

// Banks returns the sandbox's fixed FPX bank list of a channel (nil for
// another): a few of the public FPX participants' codes and names, with
// one bank of each list blocked (status B) so that a client's offline
// handling is exercised. The service's real lists are longer and change.
func Banks(channel paygate.BankChannel) []Bank {
	return append([]Bank(nil), banks[channel]...)
}

// banks are the lists Banks returns. Read-only.
var banks = map[paygate.BankChannel][]Bank{
	paygate.BankChannelB2C: {
		{"ABB0233", "Affin Bank", "A"},
		{"ABMB0212", "Alliance Bank (Personal)", "A"},
		{"AMBB0209", "AmBank", "A"},
		{"BIMB0340", "Bank Islam", "B"},
		{"BCBB0235", "CIMB Clicks", "A"},
		{"HLB0224", "Hong Leong Bank", "A"},
		{"MB2U0227", "Maybank2U", "A"},
		{"PBB0233", "Public Bank", "A"},
		{"RHB0218", "RHB Bank", "A"},
	},
	paygate.BankChannelB2B: {
		{"ABB0232", "Affin Bank", "A"},
		{"ABMB0213", "Alliance Bank (Business)", "A"},
		{"AMBB0208", "AmBank", "B"},
		{"BCBB0235", "CIMB Bank", "A"},
		{"MBB0228", "Maybank2E", "A"},
		{"PBB0234", "Public Bank PB enterprise", "A"},
		{"RHB0221", "RHB Bank", "A"},
	},
}

// bankList is GET /api/v1/fpx/banklist/{channel}, authenticated like the
// reports: {"status":"OK","data":[{"code","name","status"}, ...]} for b2c
// and b2b, 404 for another channel (docs/assumptions.md A-banklist, a
// guessed shape).
func (s *Server) bankList(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	list := Banks(paygate.BankChannel(r.PathValue("channel")))
	if list == nil {
		jsonError(w, http.StatusNotFound, "channel: b2c or b2b")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "OK", "data": list})
}
