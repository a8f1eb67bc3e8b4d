package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"
)

const (
	maxUploadBytes   = 2 << 30 // 2 GB
	minUploadBytes   = 1024    // 1 KB
	maxUploadsPerKey = 10
	maxUploadsPerWS  = 16
	idempotencyTTL   = 24 * time.Hour
)

// uploadRequest is a validated upload before its body is read.
type uploadRequest struct {
	filename, ext   string
	length          int64
	language        string
	projectID       sql.NullString
	diarize, aiMeta bool
	speakers        int
	prompts         []prompt
	externalID      sql.NullString
	metadata        sql.NullString
	authorID        string
	idemKey         string
}

// fingerprint ties an Idempotency-Key to the request it was first used with.
func (u *uploadRequest) fingerprint() string {
	return fmt.Sprintf("%s|%d|%s", u.filename, u.length, u.externalID.String)
}

// handleUpload is POST /transcriptions. Checks run in the order documented in README.md; every
// check that can fail runs before a byte of the body is read.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	ctx := r.Context()
	if !require(w, r, p, scopeUpload) {
		return
	}
	ws, err := loadWorkspace(ctx, s.db, p.workspaceID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	u, ok := s.validateUpload(w, r, p, ws)
	if !ok {
		return
	}
	// Idempotency: replay a success, refuse while in flight, else claim the key.
	if u.idemKey != "" {
		replay, conflict, err := s.claimIdempotency(ctx, p, u)
		switch {
		case err != nil:
			internalError(w, r, err)
			return
		case conflict != nil:
			writeRetryError(w, r, conflict.status, conflict.code, conflict.message, conflict.retry, nil)
			return
		case replay != nil:
			w.Header().Set("Idempotent-Replayed", "true")
			writeJSON(w, http.StatusOK, replay)
			return
		}
		// Whatever happens below, an unfinished claim is released: only success is remembered
		// (a success has already turned the row to 'done').
		defer s.db.ExecContext(context.Background(), `DELETE FROM idempotency WHERE key_hash = ? AND idem_key = ? AND state = 'inflight'`, p.keyHash, u.idemKey)
	}
	if ws.Balance <= 0 {
		writeError(w, r, http.StatusPaymentRequired, "insufficient_balance", "the workspace has no plan minutes left",
			map[string]any{"available_minutes": roundMinutes(ws.Balance)})
		return
	}
	if ok := s.checkQuotas(w, r, ws, len(u.prompts)); !ok {
		return
	}
	if !s.uploads.acquire(p.keyHash, ws.ID) {
		writeRetryError(w, r, http.StatusTooManyRequests, "too_many_concurrent_uploads",
			fmt.Sprintf("at most %d simultaneous uploads per key and %d per workspace", maxUploadsPerKey, maxUploadsPerWS), 5, nil)
		return
	}
	path, digest, n, rerr := s.receiveBody(w, r, u)
	s.uploads.release(p.keyHash, ws.ID)
	if rerr != nil {
		s.bodyFailed(w, r, p, u, path, n, rerr)
		return
	}
	probe := probeMedia(ctx, path, u.ext)
	resp, err := s.insertUpload(ctx, p, u, path, digest, probe)
	if err != nil {
		os.Remove(path)
		internalError(w, r, err)
		return
	}
	s.wake()
	w.Header().Set("Location", BasePath+"/transcriptions/"+resp.UUID)
	writeJSON(w, http.StatusCreated, resp)
}

// bodyFailed answers an upload whose body was not received whole (rerr, after n bytes, the
// part in path): 500 when every byte arrived (the sandbox's own disk failed), 408
// upload_timeout after a stall (nothing left), else 400 upload_incomplete with a failed record
// left (nothing charged).
func (s *Server) bodyFailed(w http.ResponseWriter, r *http.Request, p *principal, u *uploadRequest, path string, n int64, rerr error) {
	if n >= u.length {
		internalError(w, r, rerr)
		return
	}
	var ne interface{ Timeout() bool }
	if errors.As(rerr, &ne) && ne.Timeout() {
		os.Remove(path)
		writeError(w, r, http.StatusRequestTimeout, "upload_timeout", "no data for too long, or the upload lasted too long",
			map[string]any{"received_bytes": n, "content_length": u.length})
		return
	}
	// The client went away mid-body: the record fails as UPLOAD_INCOMPLETE, nothing is charged.
	os.Remove(path)
	if _, err := s.insertUpload(context.Background(), p, u, "", "", probeResult{failure: "UPLOAD_INCOMPLETE"}); err != nil {
		s.opts.Logf("sandbox: record incomplete upload: %v", err)
	}
	writeError(w, r, http.StatusBadRequest, "upload_incomplete", fmt.Sprintf("received %d of %d bytes", n, u.length), nil)
}

// uploadResponse is the 201 (and idempotent 200) answer.
type uploadResponse struct {
	UUID    string      `json:"uuid"`
	Status  string      `json:"status"`
	Reports []reportRef `json:"reports"`
}

// insertUpload stores the transcription, its queued reports and, when the request carried an
// Idempotency-Key, the remembered answer, in one transaction. A probe failure of
// UPLOAD_INCOMPLETE stores a failed record instead and frees the key.
func (s *Server) insertUpload(ctx context.Context, p *principal, u *uploadRequest, path, digest string, probe probeResult) (*uploadResponse, error) {
	now := s.now().UnixNano()
	resp := &uploadResponse{UUID: uuid.NewString(), Status: "queued", Reports: []reportRef{}}
	status, errCode := "queued", sql.NullString{}
	if probe.failure == "UPLOAD_INCOMPLETE" {
		status, errCode = "failed", sql.NullString{String: probe.failure, Valid: true}
	}
	var dur sql.NullFloat64
	if probe.failure == "" {
		dur = sql.NullFloat64{Float64: probe.duration, Valid: true}
	}
	var media sql.NullString
	if probe.mediaType != "" {
		media = sql.NullString{String: probe.mediaType, Valid: true}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO transcriptions (id, workspace_id, key_hash, creator_id, author_id, project_id,
			title, filename, status, error_code, requested_language, duration_seconds, media_type, probe_error, external_id,
			metadata, diarize, speakers_count, ai_metadata, media_path, digest, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			resp.UUID, p.workspaceID, p.keyHash, p.memberID, u.authorID, u.projectID, u.filename, u.filename, status, errCode,
			u.language, dur, media, probe.failure, u.externalID, u.metadata, u.diarize, u.speakers, u.aiMeta, path, digest, now, now)
		if err != nil {
			return fmt.Errorf("insert transcription: %w", err)
		}
		if err := countDaily(ctx, tx, p.workspaceID, "uploads", 1, s.now()); err != nil {
			return err
		}
		if status == "failed" {
			return nil
		}
		if err := countDaily(ctx, tx, p.workspaceID, "reports", len(u.prompts), s.now()); err != nil {
			return err
		}
		for _, pr := range u.prompts {
			id := uuid.NewString()
			if _, err := tx.ExecContext(ctx, `INSERT INTO reports (id, transcription_id, workspace_id, slug, name, status, fails, created_at)
				VALUES (?,?,?,?,?,'queued',?,?)`, id, resp.UUID, p.workspaceID, pr.Slug, pr.Name, pr.fails, now); err != nil {
				return fmt.Errorf("insert report: %w", err)
			}
			resp.Reports = append(resp.Reports, reportRef{ID: id, Slug: pr.Slug, Status: "queued"})
		}
		if u.idemKey != "" {
			b, _ := json.Marshal(resp)
			if _, err := tx.ExecContext(ctx, `UPDATE idempotency SET state = 'done', transcription_id = ?, response = ?, created_at = ?
				WHERE key_hash = ? AND idem_key = ?`, resp.UUID, string(b), now, p.keyHash, u.idemKey); err != nil {
				return fmt.Errorf("remember idempotency key: %w", err)
			}
		}
		return nil
	})
	return resp, err
}
