package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// workspace is a workspace row with its limits.
type workspace struct {
	ID, Name, Plan                                                 string
	Balance                                                        float64
	MaxFileSizeMB, Concurrency, MaxDurationHours, ReportsPerUpload int
	ReportsPerDay, UploadsPerDay, MaxQueuedFiles                   int
}

func loadWorkspace(ctx context.Context, q queryer, id string) (*workspace, error) {
	var w workspace
	err := q.QueryRowContext(ctx, `SELECT id, name, plan, balance_minutes, max_file_size_mb, concurrency, max_duration_hours,
		reports_per_upload, reports_per_day, uploads_per_day, max_queued_files FROM workspaces WHERE id = ?`, id).Scan(
		&w.ID, &w.Name, &w.Plan, &w.Balance, &w.MaxFileSizeMB, &w.Concurrency, &w.MaxDurationHours,
		&w.ReportsPerUpload, &w.ReportsPerDay, &w.UploadsPerDay, &w.MaxQueuedFiles)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// queryer is what *sql.DB and *sql.Tx share.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// member is a workspace member as the API shows it.
type member struct {
	ID         string     `json:"id"`
	Email      string     `json:"email"`
	Name       *string    `json:"name"`
	Role       string     `json:"role,omitempty"`
	Identities []identity `json:"identities,omitempty"`
	active     bool
}

type identity struct {
	Provider   string `json:"provider"`
	ExternalID string `json:"external_id"`
}

// authorJSON is the author object of a transcription.
type authorJSON struct {
	ID    string  `json:"id"`
	Email string  `json:"email"`
	Name  *string `json:"name"`
}

func scanMember(row interface{ Scan(...any) error }) (*member, error) {
	var m member
	var name sql.NullString
	if err := row.Scan(&m.ID, &m.Email, &name, &m.Role, &m.active); err != nil {
		return nil, err
	}
	if name.Valid {
		m.Name = &name.String
	}
	return &m, nil
}

const memberCols = `id, email, name, role, active`

// resolveAuthor finds the active member named by ref in workspace wsID; nil when none is.
func resolveAuthor(ctx context.Context, q queryer, wsID string, ref authorRef) (*member, error) {
	var row *sql.Row
	switch ref.kind {
	case "email":
		row = q.QueryRowContext(ctx, `SELECT `+memberCols+` FROM members WHERE workspace_id = ? AND lower(email) = lower(?)`, wsID, ref.value)
	case "user":
		row = q.QueryRowContext(ctx, `SELECT `+memberCols+` FROM members WHERE workspace_id = ? AND id = ?`, wsID, ref.value)
	case "external":
		row = q.QueryRowContext(ctx, `SELECT m.id, m.email, m.name, m.role, m.active FROM identities i JOIN members m ON m.id = i.member_id
			WHERE i.workspace_id = ? AND i.provider = ? AND i.external_id = ?`, wsID, ref.provider, ref.value)
	}
	m, err := scanMember(row)
	if errors.Is(err, sql.ErrNoRows) || (m != nil && !m.active) {
		return nil, nil
	}
	return m, err
}

func authorNotMember(w http.ResponseWriter, r *http.Request, value string) {
	writeError(w, r, http.StatusUnprocessableEntity, "author_not_member",
		"the author is not an active member of the workspace", map[string]any{"author": value})
}

func (s *Server) handleWorkspace(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	ws, err := loadWorkspace(r.Context(), s.db, p.workspaceID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	var expires *string
	if p.expiresAt.Valid {
		t := fmtTime(p.expiresAt.Int64)
		expires = &t
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"workspace": map[string]any{"id": ws.ID, "name": ws.Name},
		"balance":   map[string]any{"available_minutes": roundMinutes(ws.Balance)},
		"limits": map[string]any{
			"max_file_size_mb": ws.MaxFileSizeMB, "concurrency": ws.Concurrency,
			"max_duration_hours": ws.MaxDurationHours, "reports_per_upload": ws.ReportsPerUpload,
			"reports_per_day": ws.ReportsPerDay,
		},
		"key": map[string]any{"scopes": p.scopeList, "expires_at": expires},
	})
}

// requireMembersRight checks the member-management right: an API key (not OAuth) with
// members:write whose creator is a workspace owner.
func requireMembersRight(w http.ResponseWriter, r *http.Request, p *principal) bool {
	if p.oauth {
		writeError(w, r, http.StatusForbidden, "api_key_required", "the members and identities endpoints need an API key, not an OAuth token", nil)
		return false
	}
	if !require(w, r, p, scopeMembers) {
		return false
	}
	if p.memberRole != "owner" {
		writeError(w, r, http.StatusForbidden, "members_scope_required", "member management needs a key created by a workspace owner", nil)
		return false
	}
	return true
}

func (s *Server) handleMembers(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if !requireMembersRight(w, r, p) {
		return
	}
	ctx := r.Context()
	rows, err := s.db.QueryContext(ctx, `SELECT `+memberCols+` FROM members WHERE workspace_id = ? AND active = 1 ORDER BY seq, email LIMIT 1000`, p.workspaceID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	items := []*member{}
	byID := map[string]*member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			rows.Close()
			internalError(w, r, err)
			return
		}
		m.Identities = []identity{}
		items = append(items, m)
		byID[m.ID] = m
	}
	rows.Close()
	irows, err := s.db.QueryContext(ctx, `SELECT member_id, provider, external_id FROM identities WHERE workspace_id = ? ORDER BY created_at, provider, external_id`, p.workspaceID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	for irows.Next() {
		var id string
		var ident identity
		if err := irows.Scan(&id, &ident.Provider, &ident.ExternalID); err == nil && byID[id] != nil {
			byID[id].Identities = append(byID[id].Identities, ident)
		}
	}
	irows.Close()
	// identities must be present even when empty: marshal with explicit slices.
	out := make([]map[string]any, len(items))
	for i, m := range items {
		out[i] = map[string]any{"id": m.ID, "email": m.Email, "name": m.Name, "role": m.Role, "identities": m.Identities}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out, "total": len(out)})
}

// pathMember returns the path's {user_id} when it is an active member of the key's workspace;
// otherwise it answers 404 member_not_found and returns false.
func (s *Server) pathMember(w http.ResponseWriter, r *http.Request, p *principal) (string, bool) {
	id := strings.ToLower(r.PathValue("user_id"))
	var n int
	err := s.db.QueryRowContext(r.Context(), `SELECT COUNT(*) FROM members WHERE workspace_id = ? AND id = ? AND active = 1`, p.workspaceID, id).Scan(&n)
	switch {
	case err != nil:
		internalError(w, r, err)
		return "", false
	case n == 0:
		writeError(w, r, http.StatusNotFound, "member_not_found", "no active member has this id", map[string]any{"user_id": id})
		return "", false
	}
	return id, true
}

func (s *Server) handlePutIdentity(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if !requireMembersRight(w, r, p) {
		return
	}
	ctx := r.Context()
	userID, ok := s.pathMember(w, r, p)
	if !ok {
		return
	}
	var body struct {
		Provider   *string `json:"provider"`
		ExternalID *string `json:"external_id"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil || body.Provider == nil || body.ExternalID == nil {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_identity", "body must be {\"provider\": string, \"external_id\": string}", nil)
		return
	}
	if reason := validateIdentity(*body.Provider, *body.ExternalID); reason != "" {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_identity", reason, map[string]any{"provider": *body.Provider})
		return
	}
	ident := identity{Provider: strings.ToLower(*body.Provider), ExternalID: *body.ExternalID}
	status := http.StatusCreated
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT member_id FROM identities WHERE workspace_id = ? AND provider = ? AND external_id = ?`,
			p.workspaceID, ident.Provider, ident.ExternalID).Scan(&owner)
		switch {
		case err == nil && owner == userID:
			status = http.StatusOK
			return nil
		case err == nil:
			status = http.StatusConflict
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO identities (workspace_id, member_id, provider, external_id, created_at) VALUES (?,?,?,?,?)`,
			p.workspaceID, userID, ident.Provider, ident.ExternalID, s.now().UnixNano())
		return err
	})
	if err != nil {
		internalError(w, r, err)
		return
	}
	if status == http.StatusConflict {
		writeError(w, r, http.StatusConflict, "identity_conflict", "this provider and external_id are bound to another member", map[string]any{"provider": ident.Provider, "external_id": ident.ExternalID})
		return
	}
	writeJSON(w, status, ident)
}

func (s *Server) handleDeleteIdentity(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	if !requireMembersRight(w, r, p) {
		return
	}
	ctx := r.Context()
	userID, ok := s.pathMember(w, r, p)
	if !ok {
		return
	}
	provider, externalID := strings.ToLower(r.PathValue("provider")), r.PathValue("external_id")
	res, err := s.db.ExecContext(ctx, `DELETE FROM identities WHERE workspace_id = ? AND member_id = ? AND provider = ? AND external_id = ?`,
		p.workspaceID, userID, provider, externalID)
	if err != nil {
		internalError(w, r, err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeError(w, r, http.StatusNotFound, "identity_not_found", "no such identity is bound to this member", map[string]any{"provider": provider, "external_id": externalID})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleProjects(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	q := `SELECT id, name, created_at FROM projects WHERE workspace_id = ? ORDER BY created_at DESC, id`
	args := []any{p.workspaceID}
	if p.memberRole != "owner" {
		q = `SELECT p.id, p.name, p.created_at FROM projects p JOIN project_members pm ON pm.project_id = p.id
			WHERE p.workspace_id = ? AND pm.member_id = ? ORDER BY p.created_at DESC, p.id`
		args = append(args, p.memberID)
	}
	rows, err := s.db.QueryContext(r.Context(), q, args...)
	if err != nil {
		internalError(w, r, err)
		return
	}
	defer rows.Close()
	items := []map[string]any{}
	for rows.Next() {
		var id, name string
		var created int64
		if err := rows.Scan(&id, &name, &created); err != nil {
			internalError(w, r, err)
			return
		}
		items = append(items, map[string]any{"id": id, "name": name, "created_at": fmtTime(created)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

// projectAccessible reports whether the key's creator can use project id: owners see all,
// members the projects they belong to.
func projectAccessible(ctx context.Context, q queryer, p *principal, id string) (bool, error) {
	var n int
	var err error
	if p.memberRole == "owner" {
		err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM projects WHERE workspace_id = ? AND id = ?`, p.workspaceID, id).Scan(&n)
	} else {
		err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM projects p JOIN project_members pm ON pm.project_id = p.id
			WHERE p.workspace_id = ? AND p.id = ? AND pm.member_id = ?`, p.workspaceID, id, p.memberID).Scan(&n)
	}
	return n > 0, err
}

func fmtTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// roundMinutes keeps two decimals, as minutes are shown.
func roundMinutes(m float64) float64 {
	return float64(int64(m*100+0.5*sign(m))) / 100
}

func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}
