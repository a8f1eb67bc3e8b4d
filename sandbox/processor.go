package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"time"
)

const (
	reportSlotsPerWorkspace = 4
	reportTime              = 10 * time.Second
	minProcessingTime       = 5 * time.Second
	idleWait                = 500 * time.Millisecond
)

// processingTime is 4 minutes per hour of recording, at least 5 seconds, times the time scale.
func (s *Server) processingTime(durationSec float64) time.Duration {
	d := time.Duration(durationSec / 3600 * float64(4*time.Minute))
	return time.Duration(float64(max(d, minProcessingTime)) * s.opts.TimeScale)
}

// process runs the state machine until ctx ends: it wakes when something is due or when a
// request kicks it.
func (s *Server) process(ctx context.Context) {
	defer close(s.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.kick:
		}
		next, err := s.advance(ctx)
		if err != nil && ctx.Err() == nil {
			s.opts.Logf("sandbox: processor: %v", err)
		}
		wait := idleWait
		if !next.IsZero() {
			wait = min(max(next.Sub(s.now()), time.Millisecond), idleWait)
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// advance moves everything that is due one step and returns when the next thing is due.
func (s *Server) advance(ctx context.Context) (time.Time, error) {
	var remove []string
	now := s.now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if remove, err = s.finishTranscriptions(ctx, tx, now); err != nil {
			return err
		}
		if err := s.finishReports(ctx, tx, now); err != nil {
			return err
		}
		more, err := s.startTranscriptions(ctx, tx, now)
		remove = append(remove, more...)
		if err != nil {
			return err
		}
		return s.startReports(ctx, tx, now)
	})
	if err != nil {
		return time.Time{}, err
	}
	for _, p := range remove {
		os.Remove(p)
	}
	var next sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT MIN(f) FROM (
		SELECT MIN(finish_at) AS f FROM transcriptions WHERE status = 'processing'
		UNION ALL SELECT MIN(finish_at) FROM reports WHERE status = 'processing')`).Scan(&next)
	if err != nil || !next.Valid {
		return time.Time{}, err
	}
	return time.Unix(0, next.Int64), nil
}

func queryRecords(ctx context.Context, tx *sql.Tx, where string, args ...any) ([]*record, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+recordCols+` FROM transcriptions WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*record
	for rows.Next() {
		t, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *Server) startTranscriptions(ctx context.Context, tx *sql.Tx, now time.Time) ([]string, error) {
	var remove []string
	rows, err := tx.QueryContext(ctx, `SELECT w.id, w.concurrency - (SELECT COUNT(*) FROM transcriptions t
		WHERE t.workspace_id = w.id AND t.status = 'processing') FROM workspaces w`)
	if err != nil {
		return nil, err
	}
	free := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if n > 0 {
			free[id] = n
		}
	}
	rows.Close()
	for wsID, n := range free {
		queued, err := queryRecords(ctx, tx, `workspace_id = ? AND status = 'queued' ORDER BY created_at, rowid LIMIT ?`, wsID, n)
		if err != nil {
			return nil, err
		}
		for _, t := range queued {
			ws, err := loadWorkspace(ctx, tx, wsID)
			if err != nil {
				return nil, err
			}
			probeErr, required := t.ProbeError, 0.0
			if probeErr == "" {
				if t.Duration.Float64 > float64(ws.MaxDurationHours)*3600 {
					probeErr = "RECORDING_TOO_LONG"
				} else {
					required = math.Ceil(t.Duration.Float64/60*100) / 100
				}
			}
			if required > ws.Balance {
				// Not enough minutes: the file is not kept, its reports cannot run.
				remove = append(remove, t.MediaPath)
				if _, err := tx.ExecContext(ctx, `UPDATE transcriptions SET status = 'insufficient_balance', required_minutes = ?,
					available_minutes = ?, media_path = '', updated_at = ? WHERE id = ?`,
					required, roundMinutes(ws.Balance), now.UnixNano(), t.ID); err != nil {
					return nil, err
				}
				if err := failReports(ctx, tx, t.ID, "TRANSCRIPTION_NOT_COMPLETED", now); err != nil {
					return nil, err
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE workspaces SET balance_minutes = balance_minutes - ? WHERE id = ?`, required, wsID); err != nil {
				return nil, err
			}
			finish := now.Add(s.processingTime(t.Duration.Float64))
			if _, err := tx.ExecContext(ctx, `UPDATE transcriptions SET status = 'processing', reserved_minutes = ?, probe_error = ?,
				finish_at = ?, updated_at = ? WHERE id = ?`, required, probeErr, finish.UnixNano(), now.UnixNano(), t.ID); err != nil {
				return nil, err
			}
		}
	}
	return remove, nil
}

func (s *Server) finishTranscriptions(ctx context.Context, tx *sql.Tx, now time.Time) ([]string, error) {
	due, err := queryRecords(ctx, tx, `status = 'processing' AND finish_at <= ?`, now.UnixNano())
	if err != nil {
		return nil, err
	}
	var remove []string
	for _, t := range due {
		remove = append(remove, t.MediaPath)
		if t.ProbeError != "" {
			// A failed file gives its reserved minutes back.
			if _, err := tx.ExecContext(ctx, `UPDATE workspaces SET balance_minutes = balance_minutes + ? WHERE id = ?`, t.Reserved, t.WorkspaceID); err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE transcriptions SET status = 'failed', error_code = ?, reserved_minutes = 0,
				media_path = '', updated_at = ? WHERE id = ?`, t.ProbeError, now.UnixNano(), t.ID); err != nil {
				return nil, err
			}
			if err := failReports(ctx, tx, t.ID, "TRANSCRIPTION_FAILED", now); err != nil {
				return nil, err
			}
			continue
		}
		tr := synthesize(t.Digest, t.Duration.Float64, t.Diarize, t.SpeakersCount, t.AIMetadata, t.RequestedLanguage)
		segs, _ := json.Marshal(tr.segments)
		spk, _ := json.Marshal(tr.speakers)
		title := t.Title
		var summary, topics sql.NullString
		if t.AIMetadata {
			title = tr.title
			summary = sql.NullString{String: tr.summary, Valid: true}
			b, _ := json.Marshal(tr.topics)
			topics = sql.NullString{String: string(b), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE transcriptions SET status = 'completed', title = ?, summary = ?, language = ?,
			text = ?, segments = ?, speakers = ?, topics = ?, reserved_minutes = 0, media_path = '', updated_at = ? WHERE id = ?`,
			title, summary, tr.language, tr.text, string(segs), string(spk), topics, now.UnixNano(), t.ID); err != nil {
			return nil, err
		}
	}
	return remove, nil
}

func failReports(ctx context.Context, tx *sql.Tx, transcriptionID, code string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE reports SET status = 'failed', error_code = ?, completed_at = NULL, finish_at = ?
		WHERE transcription_id = ? AND status IN ('queued','processing')`, code, now.UnixNano(), transcriptionID)
	return err
}

func (s *Server) startReports(ctx context.Context, tx *sql.Tx, now time.Time) error {
	finish := now.Add(time.Duration(float64(reportTime) * s.opts.TimeScale)).UnixNano()
	_, err := tx.ExecContext(ctx, `UPDATE reports SET status = 'processing', finish_at = ? WHERE id IN (
		SELECT r.id FROM reports r JOIN transcriptions t ON t.id = r.transcription_id
		WHERE r.status = 'queued' AND t.status = 'completed'
		AND (SELECT COUNT(*) FROM reports p WHERE p.workspace_id = r.workspace_id AND p.status = 'processing') < ?
		ORDER BY r.created_at, r.rowid LIMIT ?)`, finish, reportSlotsPerWorkspace, reportSlotsPerWorkspace)
	return err
}

func (s *Server) finishReports(ctx context.Context, tx *sql.Tx, now time.Time) error {
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.slug, r.name, r.fails, t.digest, t.title, COALESCE(t.summary, ''),
		json_array_length(t.segments) FROM reports r JOIN transcriptions t ON t.id = r.transcription_id
		WHERE r.status = 'processing' AND r.finish_at <= ?`, now.UnixNano())
	if err != nil {
		return err
	}
	type due struct {
		id, slug, name, digest, title, summary string
		fails                                  bool
		segments                               int
	}
	var list []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.id, &d.slug, &d.name, &d.fails, &d.digest, &d.title, &d.summary, &d.segments); err != nil {
			rows.Close()
			return err
		}
		list = append(list, d)
	}
	rows.Close()
	for _, d := range list {
		if d.fails {
			if _, err := tx.ExecContext(ctx, `UPDATE reports SET status = 'failed', error_code = 'GENERATION_FAILED' WHERE id = ?`, d.id); err != nil {
				return err
			}
			continue
		}
		text := reportText(d.name, d.slug, d.digest, d.title, d.summary, d.segments)
		if _, err := tx.ExecContext(ctx, `UPDATE reports SET status = 'completed', text = ?, completed_at = ? WHERE id = ?`,
			text, now.UnixNano(), d.id); err != nil {
			return err
		}
	}
	return nil
}
