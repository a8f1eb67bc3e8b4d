package sandbox

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
)

// readTx runs fn in one transaction and rolls it back: everything fn reads belongs to one
// moment, so a record is never shown with reports (or a list with a total) of another. The
// processor changes a transcription and its reports in one transaction too. fn must not
// write to the network: the database has a single connection, which fn holds.
func (s *Server) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// readFull reads the transcription id of workspace wsID and renders its full record (with its
// reports, author and project) at one moment. t is nil when there is none; f is nil when t is
// a locked preview.
func (s *Server) readFull(ctx context.Context, wsID, id string) (t *record, f *fullJSON, err error) {
	err = s.readTx(ctx, func(tx *sql.Tx) error {
		if t, err = loadRecord(ctx, tx, wsID, id); err != nil || t == nil {
			return err
		}
		s.afterRecordRead()
		if t.Locked {
			return nil
		}
		f, err = s.full(ctx, tx, t)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read transcription %s: %w", id, err)
	}
	return t, f, nil
}

// pathRecord loads the transcription named by the path's {id} in the key's workspace. When there
// is none (or it is a locked preview and allowLocked is false) it answers 404 (or 403
// transcription_locked) and returns nil.
func (s *Server) pathRecord(w http.ResponseWriter, r *http.Request, p *principal, allowLocked bool) *record {
	t, err := loadRecord(r.Context(), s.db, p.workspaceID, r.PathValue("id"))
	s.afterRecordRead()
	return checkRecord(w, r, t, err, allowLocked)
}

// checkRecord answers 500, 404 or 403 transcription_locked and returns nil when a read of t
// failed, found nothing, or found a locked preview (unless allowLocked); else it returns t.
func checkRecord(w http.ResponseWriter, r *http.Request, t *record, err error, allowLocked bool) *record {
	switch {
	case err != nil:
		internalError(w, r, err)
		return nil
	case t == nil:
		notFound(w, r)
		return nil
	case t.Locked && !allowLocked:
		writeError(w, r, http.StatusForbidden, "transcription_locked", "the transcription is a locked preview", nil)
		return nil
	}
	return t
}
