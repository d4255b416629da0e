package gatewaytest

import (
	"net/http"
	"net/url"
	"strings"

	emailrule "github.com/paygate-go/paygate/internal/email"
	"github.com/paygate-go/paygate/internal/paths"
)

// Version is what the sandbox answers at /api/version.
const Version = "gatewaytest"

// version is GET /api/version: the service's version, no credential
// needed (docs/assumptions.md A-health).
func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "OK", "version": Version})
}

// echo is GET /api/echo, the health check: it echoes the method and path,
// never a header (docs/assumptions.md A-health).
func (s *Server) echo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "OK", "method": r.Method, "path": r.URL.Path})
}

// transactions is GET /api/user/v1/transactions?email=...: the orders a
// buyer made, as report rows, authenticated like the reports
// (docs/assumptions.md A-transactions).
func (s *Server) transactions(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	email := r.URL.Query().Get("email")
	if !emailrule.Valid(email) {
		jsonError(w, http.StatusBadRequest, "email: a valid e-mail address")
		return
	}
	rows := []any{}
	for _, o := range s.Orders() {
		if strings.EqualFold(o.Email, email) {
			rows = append(rows, s.rowOf(o))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "OK", "data": rows})
}

// qrImage is GET /qr2/?q=<pay URL>, the unsigned QR image page
// (docs/assumptions.md A-qr): the pay URL must be this sandbox's (on
// PayURL). The
// sandbox does not draw the image; it answers the payload as JSON.
func (s *Server) qrImage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	u, err := url.Parse(q)
	if err != nil || q == "" || u.Scheme+"://"+u.Host != s.PayURL || !strings.HasPrefix(u.EscapedPath(), paths.Pay) || u.RawQuery != "" {
		jsonError(w, http.StatusBadRequest, "q: an unsigned pay URL of this sandbox")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "OK", "qr_payload": q})
}
