package status

import (
	"net/http"
)

// auditShown is how many entries the audit page shows.
const auditShown = 200

// auditLog is GET /audit: the latest entries of the audit log, newest first.
func (p *Page) auditLog(w http.ResponseWriter, r *http.Request, s *session) error {
	log, err := p.o.Store.AuditLog(r.Context(), auditShown)
	if err != nil {
		return err
	}
	return p.render(w, r, s, http.StatusOK, "audit.html", "Audit log", log)
}
