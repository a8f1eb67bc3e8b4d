package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
)

const (
	maxPendingReports      = 200
	maxGenerationsPerTrans = 30
)

// checkReportQuota applies the daily report cap (Retry-After to midnight UTC) and the cap on
// reports waiting in the workspace, for n new reports.
func (s *Server) checkReportQuota(w http.ResponseWriter, r *http.Request, ws *workspace, n int) bool {
	if n == 0 {
		return true
	}
	ctx := r.Context()
	now := s.now()
	midnight := now.Truncate(24 * time.Hour)
	var pending int
	today, err := dailyCount(ctx, s.db, ws.ID, "reports", now)
	if err != nil {
		internalError(w, r, err)
		return false
	}
	if today+n > ws.ReportsPerDay {
		writeRetryError(w, r, http.StatusTooManyRequests, "daily_reports_quota_exceeded",
			fmt.Sprintf("the daily cap of %d reports is reached (%d made today)", ws.ReportsPerDay, today),
			int(midnight.Add(24*time.Hour).Sub(now).Seconds())+1, map[string]any{"reports_per_day": ws.ReportsPerDay})
		return false
	}
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM reports WHERE workspace_id = ? AND status IN ('queued','processing')`, ws.ID).Scan(&pending); err != nil {
		internalError(w, r, err)
		return false
	}
	if pending+n > maxPendingReports {
		writeRetryError(w, r, http.StatusTooManyRequests, "too_many_queued_reports",
			fmt.Sprintf("%d reports already wait in the workspace; at most %d may", pending, maxPendingReports), 60, nil)
		return false
	}
	return true
}

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

// dailyCount returns how many of kind (uploads, reports) the workspace made on now's UTC day.
func dailyCount(ctx context.Context, q queryer, wsID, kind string, now time.Time) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM daily_counts WHERE workspace_id = ? AND day = ? AND kind = ?`,
		wsID, now.UTC().Format("2006-01-02"), kind).Scan(&n)
	return n, err
}

// countDaily adds n to the workspace's count of kind for now's UTC day.
func countDaily(ctx context.Context, q queryer, wsID, kind string, n int, now time.Time) error {
	if n == 0 {
		return nil
	}
	_, err := q.ExecContext(ctx, `INSERT INTO daily_counts (workspace_id, day, kind, n) VALUES (?,?,?,?)
		ON CONFLICT (workspace_id, day, kind) DO UPDATE SET n = n + excluded.n`, wsID, now.UTC().Format("2006-01-02"), kind, n)
	return err
}
