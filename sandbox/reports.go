package sandbox

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"
)

const (
	maxPendingReports      = 200
	maxGenerationsPerTrans = 30
)

// handleRequestReports is POST /transcriptions/{id}/reports.
func (s *Server) handleRequestReports(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if !require(w, r, p, scopeReports) {
		return
	}
	ctx := r.Context()
	var body struct {
		Reports []string `json:"reports"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil || body.Reports == nil {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_body", "body must be {\"reports\": [slug, ...]}", nil)
		return
	}
	t := s.pathRecord(w, r, p, false)
	if t == nil {
		return
	}
	ws, err := loadWorkspace(ctx, s.db, p.workspaceID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	if len(body.Reports) == 0 {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_body", "reports must name 1 to 3 slugs", nil)
		return
	}
	prompts, ferr, err := resolveSlugs(ctx, s.db, p, body.Reports, ws.ReportsPerUpload)
	if err != nil {
		internalError(w, r, err)
		return
	}
	if ferr != nil {
		writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
		return
	}
	switch t.Status {
	case "failed":
		writeError(w, r, http.StatusConflict, "transcription_failed", "reports cannot be made for a failed transcription", map[string]any{"error_code": t.ErrorCode.String})
		return
	case "insufficient_balance":
		writeError(w, r, http.StatusConflict, "transcription_failed", "the transcription ended insufficient_balance and has no transcript", map[string]any{"status": t.Status})
		return
	}
	existing, err := loadReports(ctx, s.db, t.ID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	// Rules 1 and 2: a slug generating or completed returns that report; a failed one is made anew.
	live := map[string]reportRow{}
	for _, rr := range existing[t.ID] {
		if rr.Status != "failed" {
			live[rr.Slug] = rr
		}
	}
	var fresh []prompt
	for _, pr := range prompts {
		if _, ok := live[pr.Slug]; !ok {
			fresh = append(fresh, pr)
		}
	}
	if len(existing[t.ID])+len(fresh) > maxGenerationsPerTrans {
		writeRetryError(w, r, http.StatusTooManyRequests, "report_generation_limit",
			fmt.Sprintf("%d generations were already made for this transcription; at most %d are allowed", len(existing[t.ID]), maxGenerationsPerTrans), 86400, nil)
		return
	}
	if !s.checkReportQuota(w, r, ws, len(fresh)) {
		return
	}
	out := []reportRef{}
	now := s.now().UnixNano()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for _, pr := range prompts {
			if rr, ok := live[pr.Slug]; ok {
				out = append(out, reportRef{ID: rr.ID, Slug: rr.Slug, Status: rr.Status})
				continue
			}
			id := uuid.NewString()
			if _, err := tx.ExecContext(ctx, `INSERT INTO reports (id, transcription_id, workspace_id, slug, name, status, fails, created_at)
				VALUES (?,?,?,?,?,'queued',?,?)`, id, t.ID, t.WorkspaceID, pr.Slug, pr.Name, pr.fails, now); err != nil {
				return err
			}
			out = append(out, reportRef{ID: id, Slug: pr.Slug, Status: "queued"})
		}
		if err := countDaily(ctx, tx, t.WorkspaceID, "reports", len(fresh), s.now()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE transcriptions SET updated_at = ? WHERE id = ?`, now, t.ID)
		return err
	})
	if err != nil {
		internalError(w, r, err)
		return
	}
	s.wake()
	writeJSON(w, http.StatusAccepted, map[string]any{"reports": out})
}
