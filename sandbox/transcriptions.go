package sandbox

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, http.StatusNotFound, "not_found", "transcription not found", nil)
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	t, f, err := s.readFull(r.Context(), p.workspaceID, r.PathValue("id"))
	if checkRecord(w, r, t, err, false) == nil {
		return
	}
	writeJSON(w, http.StatusOK, f)
}

var sortColumns = map[string]string{
	"created_at": "created_at ASC, id ASC", "-created_at": "created_at DESC, id DESC",
	"duration": "COALESCE(duration_seconds, 0) ASC, created_at ASC", "-duration": "COALESCE(duration_seconds, 0) DESC, created_at DESC",
}

func badParam(w http.ResponseWriter, r *http.Request, code, name, msg string) {
	writeError(w, r, http.StatusUnprocessableEntity, code, fmt.Sprintf("query parameter %s: %s", name, msg), map[string]any{"parameter": name})
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	q := r.URL.Query()
	where := []string{"workspace_id = ?"}
	args := []any{p.workspaceID}
	status := "completed"
	if q.Has("status") {
		status = q.Get("status")
	}
	where, args = append(where, "status = ?"), append(args, status)
	for _, f := range []struct{ param, col string }{{"project_id", "project_id"}, {"language", "language"}, {"external_id", "external_id"}} {
		if q.Has(f.param) {
			where, args = append(where, f.col+" = ?"), append(args, q.Get(f.param))
		}
	}
	var metaKeys []string
	for name := range q {
		if strings.HasPrefix(name, "metadata.") {
			metaKeys = append(metaKeys, name)
		}
	}
	if len(metaKeys) > 1 {
		badParam(w, r, "invalid_metadata_filter", strings.Join(metaKeys, ","), "filter by one metadata key at a time")
		return
	}
	if len(metaKeys) == 1 {
		key := strings.TrimPrefix(metaKeys[0], "metadata.")
		if key == "" {
			badParam(w, r, "invalid_metadata_filter", metaKeys[0], "names no key")
			return
		}
		path := `$."` + strings.ReplaceAll(key, `"`, `\"`) + `"`
		where = append(where, `(CASE json_type(metadata, ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
			WHEN 'text' THEN json_extract(metadata, ?) WHEN 'integer' THEN CAST(json_extract(metadata, ?) AS TEXT)
			WHEN 'real' THEN CAST(json_extract(metadata, ?) AS TEXT) END) = ?`)
		args = append(args, path, path, path, path, q.Get(metaKeys[0]))
	}
	for _, d := range []struct {
		param, op string
		shift     time.Duration
	}{{"date_from", ">=", 0}, {"date_to", "<", 24 * time.Hour}} {
		if !q.Has(d.param) {
			continue
		}
		day, err := time.Parse("2006-01-02", q.Get(d.param))
		if err != nil {
			badParam(w, r, "invalid_date", d.param, fmt.Sprintf("%q is not a date YYYY-MM-DD", q.Get(d.param)))
			return
		}
		where, args = append(where, "created_at "+d.op+" ?"), append(args, day.Add(d.shift).UnixNano())
	}
	order := sortColumns["-created_at"]
	if q.Has("sort") {
		o, ok := sortColumns[q.Get("sort")]
		if !ok {
			badParam(w, r, "invalid_sort", "sort", fmt.Sprintf("%q is not created_at, -created_at, duration or -duration", q.Get("sort")))
			return
		}
		order = o
	}
	limit, ok := intParam(w, r, "limit", 20)
	if !ok {
		return
	}
	limit = max(1, min(100, limit))
	offset, ok := intParam(w, r, "offset", 0)
	if !ok {
		return
	}
	offset = max(0, offset)
	ctx := r.Context()
	cond := strings.Join(where, " AND ")
	var total int
	items := []*listItemJSON{}
	// The total and the page are counted and read at one moment.
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM transcriptions WHERE `+cond, args...).Scan(&total); err != nil {
			return fmt.Errorf("count transcriptions: %w", err)
		}
		recs, err := queryRecords(ctx, tx, cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(args, limit, offset)...)
		if err != nil {
			return fmt.Errorf("list transcriptions: %w", err)
		}
		for _, t := range recs {
			it, err := s.listItem(ctx, tx, t)
			if err != nil {
				return fmt.Errorf("render transcription %s: %w", t.ID, err)
			}
			items = append(items, it)
		}
		return nil
	})
	if err != nil {
		internalError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": total, "limit": limit, "offset": offset})
}

func intParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		badParam(w, r, "invalid_parameter", name, fmt.Sprintf("%q is not an integer", v))
		return 0, false
	}
	return n, true
}

// canEdit reports whether the key may change t: a key may always touch what it uploaded; the
// workspace owner edits all; a member edits their own and those of projects they edit or own.
func (s *Server) canEdit(r *http.Request, p *principal, t *record) (bool, error) {
	if t.KeyHash == p.keyHash || p.memberRole == "owner" || t.AuthorID == p.memberID || t.CreatorID == p.memberID {
		return true, nil
	}
	if !t.ProjectID.Valid {
		return false, nil
	}
	var n int
	err := s.db.QueryRowContext(r.Context(), `SELECT COUNT(*) FROM project_members WHERE project_id = ? AND member_id = ? AND role IN ('editor','owner')`,
		t.ProjectID.String, p.memberID).Scan(&n)
	return n > 0, err
}

func forbidden(w http.ResponseWriter, r *http.Request, what string) {
	writeError(w, r, http.StatusForbidden, "forbidden", "the key's creator has no right to "+what+" this transcription", nil)
}

func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if p.oauth {
		writeError(w, r, http.StatusForbidden, "author_requires_api_key", "changing the author needs an API key, not an OAuth token", nil)
		return
	}
	if !require(w, r, p, scopeUpload) {
		return
	}
	ctx := r.Context()
	t := s.pathRecord(w, r, p, false)
	if t == nil {
		return
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_author", "body must be {\"author\": string or null}", nil)
		return
	}
	raw, ok := body["author"]
	if !ok {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_author", "body must carry \"author\" (string or null)", nil)
		return
	}
	newAuthor := t.CreatorID
	if string(raw) != "null" {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			writeError(w, r, http.StatusUnprocessableEntity, "invalid_author", "author must be a string or null", nil)
			return
		}
		ref, ferr := parseAuthor(v, false)
		if ferr != nil {
			writeError(w, r, http.StatusUnprocessableEntity, ferr.code, ferr.message, ferr.detail)
			return
		}
		m, err := resolveAuthor(ctx, s.db, p.workspaceID, ref)
		if err != nil {
			internalError(w, r, err)
			return
		}
		if m == nil {
			authorNotMember(w, r, v)
			return
		}
		newAuthor = m.ID
	}
	if ok, err := s.canEdit(r, p, t); err != nil {
		internalError(w, r, err)
		return
	} else if !ok {
		forbidden(w, r, "edit")
		return
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE transcriptions SET author_id = ?, updated_at = ? WHERE id = ?`, newAuthor, s.now().UnixNano(), t.ID); err != nil {
		internalError(w, r, err)
		return
	}
	s.handleGet(w, r)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if !require(w, r, p, scopeDelete) {
		return
	}
	ctx := r.Context()
	t := s.pathRecord(w, r, p, true)
	if t == nil {
		return
	}
	if ok, err := s.canEdit(r, p, t); err != nil {
		internalError(w, r, err)
		return
	} else if !ok {
		forbidden(w, r, "delete")
		return
	}
	var media string
	var remove []string
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Re-read inside the transaction: the processor may have moved it on.
		t, err := loadRecord(ctx, tx, p.workspaceID, t.ID)
		if err != nil || t == nil {
			return err
		}
		media = t.MediaPath
		if t.Reserved > 0 && (t.Status == "processing" || t.Status == "queued") {
			if _, err := tx.ExecContext(ctx, `UPDATE workspaces SET balance_minutes = balance_minutes + ? WHERE id = ?`, t.Reserved, t.WorkspaceID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM reports WHERE transcription_id = ?`, t.ID); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM transcriptions WHERE id = ?`, t.ID); err != nil {
			return err
		}
		// The slot it held goes to the next queued file in the same transaction, so no reader
		// sees a free slot with files still waiting (queue caps count queued files).
		remove, err = s.startTranscriptions(ctx, tx, s.now())
		return err
	})
	if err != nil {
		internalError(w, r, err)
		return
	}
	for _, path := range append(remove, media) {
		if path != "" {
			os.Remove(path)
		}
	}
	s.wake()
	w.WriteHeader(http.StatusNoContent)
}
