package sandbox

import (
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/transcript-bridge/bridge/internal/media"
)

// uploadCheck is one step of validateUpload: it reads its part of the request into u, or
// answers the request and returns false.
type uploadCheck func(s *Server, w http.ResponseWriter, r *http.Request, p *principal, ws *workspace, u *uploadRequest) bool

// uploadChecks are the steps of validateUpload in the order README.md documents (the tests
// check it): the file, then the query options, the project, the reports, the X- headers, the
// author and the Idempotency-Key.
var uploadChecks = []uploadCheck{
	(*Server).checkUploadFile,
	(*Server).checkUploadOptions,
	(*Server).checkUploadProject,
	(*Server).checkUploadReports,
	(*Server).checkUploadLabels,
	(*Server).checkUploadAuthor,
	(*Server).checkUploadIdempotencyKey,
}

// validateUpload runs every header and query check; it answers the request and returns false
// on the first failure.
func (s *Server) validateUpload(w http.ResponseWriter, r *http.Request, p *principal, ws *workspace) (*uploadRequest, bool) {
	u := &uploadRequest{diarize: true, language: "auto"}
	for _, check := range uploadChecks {
		if !check(s, w, r, p, ws, u) {
			return nil, false
		}
	}
	return u, true
}

// checkUploadFile checks what describes the file, in order: no filename query parameter,
// a Content-Length within the workspace's limit, a Content-Disposition naming the file, a
// supported extension, at least minUploadBytes.
func (s *Server) checkUploadFile(w http.ResponseWriter, r *http.Request, _ *principal, ws *workspace, u *uploadRequest) bool {
	if r.URL.Query().Has("filename") {
		writeError(w, r, http.StatusBadRequest, "filename_required", "the filename query parameter is not accepted; send Content-Disposition: attachment; filename=<name>", nil)
		return false
	}
	if r.ContentLength < 0 || r.Header.Get("Content-Length") == "" {
		writeError(w, r, http.StatusLengthRequired, "length_required", "Content-Length is required", nil)
		return false
	}
	u.length = r.ContentLength
	limit := min(int64(maxUploadBytes), int64(ws.MaxFileSizeMB)<<20)
	if u.length > limit {
		writeError(w, r, http.StatusRequestEntityTooLarge, "file_size_limit_exceeded",
			fmt.Sprintf("Content-Length %d exceeds the limit of %d bytes", u.length, limit), map[string]any{"max_bytes": limit})
		return false
	}
	name, err := dispositionFilename(r.Header.Get("Content-Disposition"))
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "filename_required", err.Error(), nil)
		return false
	}
	u.filename, u.ext = name, media.Ext(name)
	if media.Kind(u.ext) == "" {
		writeError(w, r, http.StatusBadRequest, "unsupported_file_format", fmt.Sprintf("extension %q of %q is not supported", u.ext, name), map[string]any{"extension": u.ext})
		return false
	}
	if u.length < minUploadBytes {
		writeError(w, r, http.StatusBadRequest, "file_too_small", fmt.Sprintf("the file has %d bytes; at least %d are needed", u.length, minUploadBytes), map[string]any{"min_bytes": minUploadBytes})
		return false
	}
	return true
}

// checkUploadOptions reads the query options, in order: language, diarize and ai_metadata,
// speakers_count.
func (s *Server) checkUploadOptions(w http.ResponseWriter, r *http.Request, _ *principal, _ *workspace, u *uploadRequest) bool {
	q := r.URL.Query()
	if q.Has("language") {
		u.language = q.Get("language")
		if !languages[u.language] {
			badParam(w, r, "unsupported_language", "language", fmt.Sprintf("%q is not a supported language code", u.language))
			return false
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
				return false
			}
			*b.dst = v
		}
	}
	if q.Has("speakers_count") {
		n, err := strconv.Atoi(q.Get("speakers_count"))
		if err != nil || n < 1 || n > 20 {
			badParam(w, r, "invalid_speakers_count", "speakers_count", fmt.Sprintf("%q is not an integer from 1 to 20", q.Get("speakers_count")))
			return false
		}
		u.speakers = n
	}
	return true
}

// checkUploadProject reads project_id: a project the key's creator can access.
func (s *Server) checkUploadProject(w http.ResponseWriter, r *http.Request, p *principal, _ *workspace, u *uploadRequest) bool {
	q := r.URL.Query()
	if !q.Has("project_id") {
		return true
	}
	id := strings.ToLower(q.Get("project_id"))
	ok := isUUID(id)
	if ok {
		var err error
		if ok, err = projectAccessible(r.Context(), s.db, p, id); err != nil {
			internalError(w, r, err)
			return false
		}
	}
	if !ok {
		writeError(w, r, http.StatusUnprocessableEntity, "project_not_found", "the project does not exist or is not accessible to the key's creator", map[string]any{"project_id": q.Get("project_id")})
		return false
	}
	u.projectID = sql.NullString{String: id, Valid: true}
	return true
}

// checkUploadReports reads reports: the right to order them, then the slugs (at most the
// workspace's reports per upload, each one the key's creator may use).
func (s *Server) checkUploadReports(w http.ResponseWriter, r *http.Request, p *principal, ws *workspace, u *uploadRequest) bool {
	q := r.URL.Query()
	if !q.Has("reports") {
		return true
	}
	if !require(w, r, p, scopeReports) {
		return false
	}
	var slugs []string
	for _, sl := range strings.Split(q.Get("reports"), ",") {
		if sl = strings.TrimSpace(sl); sl != "" {
			slugs = append(slugs, sl)
		}
	}
	prompts, ferr, err := resolveSlugs(r.Context(), s.db, p, slugs, ws.ReportsPerUpload)
	if err != nil {
		internalError(w, r, err)
		return false
	}
	if ferr != nil {
		writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
		return false
	}
	u.prompts = prompts
	return true
}

// checkUploadLabels reads the caller's labels, in order: X-External-Id, X-Metadata.
func (s *Server) checkUploadLabels(w http.ResponseWriter, r *http.Request, _ *principal, _ *workspace, u *uploadRequest) bool {
	if vals, ok := r.Header["X-External-Id"]; ok {
		v := strings.Join(vals, ",")
		if ferr := validateExternalID(v); ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return false
		}
		u.externalID = sql.NullString{String: v, Valid: true}
	}
	if vals, ok := r.Header["X-Metadata"]; ok {
		v := strings.Join(vals, ",")
		if ferr := validateMetadata(v); ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return false
		}
		u.metadata = sql.NullString{String: v, Valid: true}
	}
	return true
}

// checkUploadAuthor reads X-Author: a member of the workspace (by default the key's creator).
func (s *Server) checkUploadAuthor(w http.ResponseWriter, r *http.Request, p *principal, _ *workspace, u *uploadRequest) bool {
	u.authorID = p.memberID
	v := r.Header.Get("X-Author")
	if v == "" {
		return true
	}
	ref, ferr := parseAuthor(v, true)
	if ferr != nil {
		writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
		return false
	}
	m, err := resolveAuthor(r.Context(), s.db, p.workspaceID, ref)
	if err != nil {
		internalError(w, r, err)
		return false
	}
	if m == nil {
		authorNotMember(w, r, v)
		return false
	}
	u.authorID = m.ID
	return true
}

// checkUploadIdempotencyKey reads Idempotency-Key: at most 255 characters.
func (s *Server) checkUploadIdempotencyKey(w http.ResponseWriter, r *http.Request, _ *principal, _ *workspace, u *uploadRequest) bool {
	u.idemKey = r.Header.Get("Idempotency-Key")
	if len(u.idemKey) > 255 {
		writeError(w, r, http.StatusUnprocessableEntity, "idempotency_key_invalid", "Idempotency-Key is longer than 255 characters", nil)
		return false
	}
	return true
}
