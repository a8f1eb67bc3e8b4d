package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/internal/media"
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
	if rerr != nil && n >= u.length {
		internalError(w, r, rerr)
		return
	}
	if rerr != nil {
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

// validateUpload runs every header and query check; it answers the request and returns false
// on the first failure.
func (s *Server) validateUpload(w http.ResponseWriter, r *http.Request, p *principal, ws *workspace) (*uploadRequest, bool) {
	ctx := r.Context()
	q := r.URL.Query()
	u := &uploadRequest{diarize: true, language: "auto"}
	if q.Has("filename") {
		writeError(w, r, http.StatusBadRequest, "filename_required", "the filename query parameter is not accepted; send Content-Disposition: attachment; filename=<name>", nil)
		return nil, false
	}
	if r.ContentLength < 0 || r.Header.Get("Content-Length") == "" {
		writeError(w, r, http.StatusLengthRequired, "length_required", "Content-Length is required", nil)
		return nil, false
	}
	u.length = r.ContentLength
	limit := min(int64(maxUploadBytes), int64(ws.MaxFileSizeMB)<<20)
	if u.length > limit {
		writeError(w, r, http.StatusRequestEntityTooLarge, "file_size_limit_exceeded",
			fmt.Sprintf("Content-Length %d exceeds the limit of %d bytes", u.length, limit), map[string]any{"max_bytes": limit})
		return nil, false
	}
	name, err := dispositionFilename(r.Header.Get("Content-Disposition"))
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "filename_required", err.Error(), nil)
		return nil, false
	}
	u.filename, u.ext = name, media.Ext(name)
	if media.Kind(u.ext) == "" {
		writeError(w, r, http.StatusBadRequest, "unsupported_file_format", fmt.Sprintf("extension %q of %q is not supported", u.ext, name), map[string]any{"extension": u.ext})
		return nil, false
	}
	if u.length < minUploadBytes {
		writeError(w, r, http.StatusBadRequest, "file_too_small", fmt.Sprintf("the file has %d bytes; at least %d are needed", u.length, minUploadBytes), map[string]any{"min_bytes": minUploadBytes})
		return nil, false
	}
	if q.Has("language") {
		u.language = q.Get("language")
		if !languages[u.language] {
			badParam(w, r, "unsupported_language", "language", fmt.Sprintf("%q is not a supported language code", u.language))
			return nil, false
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"diarize", &u.diarize}, {"ai_metadata", &u.aiMeta}} {
		if q.Has(b.name) {
			v, err := strconv.ParseBool(q.Get(b.name))
			if err != nil {
				badParam(w, r, "invalid_parameter", b.name, fmt.Sprintf("%q is not true or false", q.Get(b.name)))
				return nil, false
			}
			*b.dst = v
		}
	}
	if q.Has("speakers_count") {
		n, err := strconv.Atoi(q.Get("speakers_count"))
		if err != nil || n < 1 || n > 20 {
			badParam(w, r, "invalid_speakers_count", "speakers_count", fmt.Sprintf("%q is not an integer from 1 to 20", q.Get("speakers_count")))
			return nil, false
		}
		u.speakers = n
	}
	if q.Has("project_id") {
		id := strings.ToLower(q.Get("project_id"))
		ok := isUUID(id)
		if ok {
			if ok, err = projectAccessible(ctx, s.db, p, id); err != nil {
				internalError(w, r, err)
				return nil, false
			}
		}
		if !ok {
			writeError(w, r, http.StatusUnprocessableEntity, "project_not_found", "the project does not exist or is not accessible to the key's creator", map[string]any{"project_id": q.Get("project_id")})
			return nil, false
		}
		u.projectID = sql.NullString{String: id, Valid: true}
	}
	if q.Has("reports") {
		if !require(w, r, p, scopeReports) {
			return nil, false
		}
		var slugs []string
		for _, sl := range strings.Split(q.Get("reports"), ",") {
			if sl = strings.TrimSpace(sl); sl != "" {
				slugs = append(slugs, sl)
			}
		}
		prompts, ferr, err := resolveSlugs(ctx, s.db, p, slugs, ws.ReportsPerUpload)
		if err != nil {
			internalError(w, r, err)
			return nil, false
		}
		if ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return nil, false
		}
		u.prompts = prompts
	}
	if vals, ok := r.Header["X-External-Id"]; ok {
		v := strings.Join(vals, ",")
		if ferr := validateExternalID(v); ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return nil, false
		}
		u.externalID = sql.NullString{String: v, Valid: true}
	}
	if vals, ok := r.Header["X-Metadata"]; ok {
		v := strings.Join(vals, ",")
		if ferr := validateMetadata(v); ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return nil, false
		}
		u.metadata = sql.NullString{String: v, Valid: true}
	}
	u.authorID = p.memberID
	if v := r.Header.Get("X-Author"); v != "" {
		ref, ferr := parseAuthor(v, true)
		if ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return nil, false
		}
		m, err := resolveAuthor(ctx, s.db, p.workspaceID, ref)
		if err != nil {
			internalError(w, r, err)
			return nil, false
		}
		if m == nil {
			authorNotMember(w, r, v)
			return nil, false
		}
		u.authorID = m.ID
	}
	u.idemKey = r.Header.Get("Idempotency-Key")
	if len(u.idemKey) > 255 {
		writeError(w, r, http.StatusUnprocessableEntity, "idempotency_key_invalid", "Idempotency-Key is longer than 255 characters", nil)
		return nil, false
	}
	return u, true
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
