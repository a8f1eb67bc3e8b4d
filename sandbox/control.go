package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// ControlPath is the prefix of the sandbox's own control surface, outside the API prefix.
const ControlPath = "/_sandbox"

func (s *Server) controlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+ControlPath+"/reset", s.handleReset)
	mux.HandleFunc("PUT "+ControlPath+"/workspaces/{id}/balance", s.handleSetBalance)
	mux.HandleFunc("GET "+ControlPath+"/journal", s.handleJournal)
	mux.HandleFunc("POST "+ControlPath+"/transcriptions/{id}/lock", s.handleLock)
	mux.HandleFunc("GET "+ControlPath+"/workspaces", s.handleWorkspaces)
}

// handleReset wipes the state and re-applies the seed. Generated keys are returned once.
func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	keys, err := s.Reset(r.Context())
	if err != nil {
		internalError(w, r, err)
		return
	}
	out := []map[string]string{}
	for _, k := range keys {
		out = append(out, map[string]string{"workspace": k.Workspace, "member": k.Member, "key": k.Key})
	}
	writeJSON(w, http.StatusOK, map[string]any{"reset": true, "generated_keys": out})
}

// handleSetBalance sets a workspace's available minutes: {"available_minutes": 120}.
func (s *Server) handleSetBalance(w http.ResponseWriter, r *http.Request) {
	var body struct {
		AvailableMinutes *float64 `json:"available_minutes"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.AvailableMinutes == nil || *body.AvailableMinutes < 0 {
		writeError(w, r, http.StatusUnprocessableEntity, "invalid_body", "body must be {\"available_minutes\": number >= 0}", nil)
		return
	}
	res, err := s.db.ExecContext(r.Context(), `UPDATE workspaces SET balance_minutes = ? WHERE id = ?`, *body.AvailableMinutes, r.PathValue("id"))
	if err != nil {
		internalError(w, r, err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeError(w, r, http.StatusNotFound, "workspace_not_found", "no such workspace", nil)
		return
	}
	s.wake()
	writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "available_minutes": *body.AvailableMinutes})
}

// handleLock turns a transcription into a locked preview (403 transcription_locked).
func (s *Server) handleLock(w http.ResponseWriter, r *http.Request) {
	res, err := s.db.ExecContext(r.Context(), `UPDATE transcriptions SET locked = 1 WHERE id = ?`, r.PathValue("id"))
	if err != nil {
		internalError(w, r, err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeError(w, r, http.StatusNotFound, "not_found", "transcription not found", nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// WorkspaceState is one workspace as GET /_sandbox/workspaces shows it: balance and the count
// of transcriptions by status, for demos and tests.
type WorkspaceState struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	Plan             string         `json:"plan"`
	AvailableMinutes float64        `json:"available_minutes"`
	Transcriptions   map[string]int `json:"transcriptions"`
}

func (s *Server) handleWorkspaces(w http.ResponseWriter, r *http.Request) {
	var items []*WorkspaceState
	// Balances and counts of one moment: minutes are reserved as a file starts processing.
	err := s.readTx(r.Context(), func(tx *sql.Tx) error {
		var err error
		items, err = workspaceStates(r.Context(), tx)
		return err
	})
	if err != nil {
		internalError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// workspaceStates reads every workspace's balance and its transcriptions counted by status.
func workspaceStates(ctx context.Context, tx *sql.Tx) ([]*WorkspaceState, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name, plan, balance_minutes FROM workspaces ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read workspaces: %w", err)
	}
	items := []*WorkspaceState{}
	byID := map[string]*WorkspaceState{}
	for rows.Next() {
		ws := &WorkspaceState{Transcriptions: map[string]int{}}
		if err := rows.Scan(&ws.ID, &ws.Name, &ws.Plan, &ws.AvailableMinutes); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read workspaces: %w", err)
		}
		ws.AvailableMinutes = roundMinutes(ws.AvailableMinutes)
		items = append(items, ws)
		byID[ws.ID] = ws
	}
	rows.Close()
	counts, err := tx.QueryContext(ctx, `SELECT workspace_id, status, COUNT(*) FROM transcriptions GROUP BY workspace_id, status`)
	if err != nil {
		return nil, fmt.Errorf("count transcriptions: %w", err)
	}
	defer counts.Close()
	for counts.Next() {
		var id, status string
		var n int
		if err := counts.Scan(&id, &status, &n); err != nil {
			return nil, fmt.Errorf("count transcriptions: %w", err)
		}
		if ws := byID[id]; ws != nil {
			ws.Transcriptions[status] = n
		}
	}
	return items, counts.Err()
}

// JournalEntry is one request the sandbox answered, as GET /_sandbox/journal lists it. Keys
// appear only by their last four characters.
type JournalEntry struct {
	Seq            int64   `json:"seq"`
	At             string  `json:"at"`
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Query          string  `json:"query"`
	KeyLast4       string  `json:"key_last4"`
	IdempotencyKey string  `json:"idempotency_key"`
	Status         int     `json:"status"`
	Code           string  `json:"code"`
	Fault          string  `json:"fault"`
	DurationMS     float64 `json:"duration_ms"`
}

// handleJournal lists the request journal, newest last: ?since=<seq>&limit=<n> (default 1000).
func (s *Server) handleJournal(w http.ResponseWriter, r *http.Request) {
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 {
		limit = 1000
	}
	rows, err := s.db.QueryContext(r.Context(), `SELECT seq, at, method, path, query, key_last4, idem_key, status, code, fault, duration_ms
		FROM journal WHERE seq > ? ORDER BY seq LIMIT ?`, since, limit)
	if err != nil {
		internalError(w, r, err)
		return
	}
	defer rows.Close()
	items := []JournalEntry{}
	for rows.Next() {
		var e JournalEntry
		var at int64
		if err := rows.Scan(&e.Seq, &at, &e.Method, &e.Path, &e.Query, &e.KeyLast4, &e.IdempotencyKey, &e.Status, &e.Code, &e.Fault, &e.DurationMS); err != nil {
			internalError(w, r, err)
			return
		}
		e.At = fmtTime(at)
		items = append(items, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}
