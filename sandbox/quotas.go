package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// checkQuotas applies the queue, daily upload and report caps (429 with Retry-After).
func (s *Server) checkQuotas(w http.ResponseWriter, r *http.Request, ws *workspace, reports int) bool {
	ctx := r.Context()
	now := s.now()
	midnight := now.Truncate(24 * time.Hour)
	untilMidnight := int(midnight.Add(24*time.Hour).Sub(now).Seconds()) + 1
	var queued, today int
	var err error
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM transcriptions WHERE workspace_id = ? AND status = 'queued'`, ws.ID).Scan(&queued); err != nil {
		internalError(w, r, err)
		return false
	}
	if queued >= ws.MaxQueuedFiles {
		writeRetryError(w, r, http.StatusTooManyRequests, "too_many_queued_files", fmt.Sprintf("%d files already wait in queued", queued), 30, nil)
		return false
	}
	if today, err = dailyCount(ctx, s.db, ws.ID, "uploads", now); err != nil {
		internalError(w, r, err)
		return false
	}
	if today >= ws.UploadsPerDay {
		writeRetryError(w, r, http.StatusTooManyRequests, "upload_quota_exceeded", fmt.Sprintf("the daily cap of %d uploads is reached", ws.UploadsPerDay), untilMidnight, nil)
		return false
	}
	return s.checkReportQuota(w, r, ws, reports)
}

// checkReportQuota applies the daily report cap (Retry-After to midnight UTC) and the cap on
// reports waiting in the workspace, for n new reports.
func (s *Server) checkReportQuota(w http.ResponseWriter, r *http.Request, ws *workspace, n int) bool {
	refused, err := reportQuota(r.Context(), s.db, ws, n, s.now())
	switch {
	case err != nil:
		internalError(w, r, err)
		return false
	case refused != nil:
		refused.write(w, r)
		return false
	}
	return true
}

// reportQuota returns the 429 refusal for n new reports in ws at now, or nil when they fit.
func reportQuota(ctx context.Context, q queryer, ws *workspace, n int, now time.Time) (*refusal, error) {
	if n == 0 {
		return nil, nil
	}
	midnight := now.Truncate(24 * time.Hour)
	today, err := dailyCount(ctx, q, ws.ID, "reports", now)
	if err != nil {
		return nil, fmt.Errorf("count today's reports: %w", err)
	}
	if today+n > ws.ReportsPerDay {
		return &refusal{http.StatusTooManyRequests, "daily_reports_quota_exceeded",
			fmt.Sprintf("the daily cap of %d reports is reached (%d made today)", ws.ReportsPerDay, today),
			int(midnight.Add(24*time.Hour).Sub(now).Seconds()) + 1, map[string]any{"reports_per_day": ws.ReportsPerDay}}, nil
	}
	var pending int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM reports WHERE workspace_id = ? AND status IN ('queued','processing')`, ws.ID).Scan(&pending); err != nil {
		return nil, fmt.Errorf("count pending reports: %w", err)
	}
	if pending+n > maxPendingReports {
		return &refusal{http.StatusTooManyRequests, "too_many_queued_reports",
			fmt.Sprintf("%d reports already wait in the workspace; at most %d may", pending, maxPendingReports), 60, nil}, nil
	}
	return nil, nil
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
