package sandbox

import (
	"context"
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
	out, refused, err := s.addReports(ctx, ws, t.ID, prompts)
	switch {
	case err != nil:
		internalError(w, r, err)
		return
	case refused != nil:
		refused.write(w, r)
		return
	}
	s.wake()
	writeJSON(w, http.StatusAccepted, map[string]any{"reports": out})
}

// addReports requests prompts for transcription id of ws in one transaction: the transcription's
// status, its existing reports, the limits and the new rows are all of one moment, so a report
// is never added to a transcription that has just failed (it would wait forever).
// Rules 1 and 2: a slug generating or completed returns that report; a failed one is made anew.
func (s *Server) addReports(ctx context.Context, ws *workspace, id string, prompts []prompt) (out []reportRef, refused *refusal, err error) {
	now := s.now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		t, err := loadRecord(ctx, tx, ws.ID, id)
		if err != nil {
			return fmt.Errorf("read transcription %s: %w", id, err)
		}
		switch {
		case t == nil: // deleted meanwhile
			refused = &refusal{status: http.StatusNotFound, code: "not_found", message: "transcription not found"}
			return nil
		case t.Status == "failed":
			refused = &refusal{status: http.StatusConflict, code: "transcription_failed", message: "reports cannot be made for a failed transcription",
				detail: map[string]any{"error_code": t.ErrorCode.String}}
			return nil
		case t.Status == "insufficient_balance":
			refused = &refusal{status: http.StatusConflict, code: "transcription_failed", message: "the transcription ended insufficient_balance and has no transcript",
				detail: map[string]any{"status": t.Status}}
			return nil
		}
		existing, err := loadReports(ctx, tx, t.ID)
		if err != nil {
			return fmt.Errorf("read reports of %s: %w", id, err)
		}
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
			refused = &refusal{status: http.StatusTooManyRequests, code: "report_generation_limit", retryAfter: 86400,
				message: fmt.Sprintf("%d generations were already made for this transcription; at most %d are allowed", len(existing[t.ID]), maxGenerationsPerTrans)}
			return nil
		}
		if refused, err = reportQuota(ctx, tx, ws, len(fresh), now); err != nil || refused != nil {
			return err
		}
		out = []reportRef{}
		for _, pr := range prompts {
			if rr, ok := live[pr.Slug]; ok {
				out = append(out, reportRef{ID: rr.ID, Slug: rr.Slug, Status: rr.Status})
				continue
			}
			rid := uuid.NewString()
			if _, err := tx.ExecContext(ctx, `INSERT INTO reports (id, transcription_id, workspace_id, slug, name, status, fails, created_at)
				VALUES (?,?,?,?,?,'queued',?,?)`, rid, t.ID, t.WorkspaceID, pr.Slug, pr.Name, pr.fails, now.UnixNano()); err != nil {
				return fmt.Errorf("insert report: %w", err)
			}
			out = append(out, reportRef{ID: rid, Slug: pr.Slug, Status: "queued"})
		}
		if err := countDaily(ctx, tx, t.WorkspaceID, "reports", len(fresh), now); err != nil {
			return fmt.Errorf("count reports: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE transcriptions SET updated_at = ? WHERE id = ?`, now.UnixNano(), t.ID); err != nil {
			return fmt.Errorf("touch transcription: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, refused, nil
}
