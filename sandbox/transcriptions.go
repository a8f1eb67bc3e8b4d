package sandbox

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
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

func badParam(w http.ResponseWriter, r *http.Request, code, name, msg string) {
	writeError(w, r, http.StatusUnprocessableEntity, code, fmt.Sprintf("query parameter %s: %s", name, msg), map[string]any{"parameter": name})
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
