package gatewaytest

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/paygate-go/paygate"
)

// AdminSettlePath is a route of the sandbox only (the service has none
// like it): POST a form with refNo (as sent, or the base reference naming
// one order) and status (success, failed or pending) to decide that
// order, as the buyer's choice on the hosted page does (Server.Pay), or,
// when it is pending, to settle it as success or failed (Server.Complete);
// the signed direct callback then goes to the order's returnUrl. It
// answers only a loopback client presenting the sandbox's AuthToken as
// Bearer, with {"status":"OK","order":{...}} (the order's orderNo, refNo,
// amount, status and FPX code), or {"status":"ERROR","error":...} and 400
// (a bad status), 401, 403, 404 (no such order) or 409 (already decided).
// `paygate sandbox order settle` calls it.
const AdminSettlePath = "/sandbox/admin/settle"

// AdminOrder is how the admin route shows an order.
type AdminOrder struct {
	OrderNo string          `json:"orderNo"`             // the sandbox's order number
	RefNo   string          `json:"refNo"`               // as received: refNo~extraData
	Amount  paygate.Amount  `json:"amount"`              // the order amount
	Status  paygate.Status  `json:"status"`              // the status just decided
	FPXCode paygate.FPXCode `json:"fpx_debit_auth_code"` // the outcome's FPX code
}

// adminSettle is POST AdminSettlePath.
func (s *Server) adminSettle(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		jsonError(w, http.StatusForbidden, "the sandbox's admin routes answer loopback clients only")
		return
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || !equalSecret(tok, s.AuthToken) {
		jsonError(w, http.StatusUnauthorized, "want the sandbox's AuthToken as Bearer")
		return
	}
	if err := r.ParseForm(); err != nil {
		jsonError(w, http.StatusBadRequest, "form: "+err.Error())
		return
	}
	status := paygate.Status(r.PostForm.Get("status"))
	if !status.Valid() {
		jsonError(w, http.StatusBadRequest, "status: want success, failed or pending")
		return
	}
	o, err := s.findRef(r.PostForm.Get("refNo"))
	switch {
	case errors.Is(err, errNoOrder):
		jsonError(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		jsonError(w, http.StatusConflict, err.Error())
		return
	}
	o, err = s.decide(o.OrderNo, status, o.Status == paygate.StatusPending)
	if err != nil {
		jsonError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "OK", "order": AdminOrder{OrderNo: o.OrderNo, RefNo: o.RefNo, Amount: o.Amount, Status: o.Status, FPXCode: o.FPXCode}})
}
