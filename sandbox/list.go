package sandbox

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// sortColumns are the ORDER BY clauses of the sort parameter's values.
var sortColumns = map[string]string{
	"created_at": "created_at ASC, id ASC", "-created_at": "created_at DESC, id DESC",
	"duration": "COALESCE(duration_seconds, 0) ASC, created_at ASC", "-duration": "COALESCE(duration_seconds, 0) DESC, created_at DESC",
}

// listQuery is a checked GET /transcriptions query: the conditions (joined by AND) and their
// arguments, the order and the page.
type listQuery struct {
	where         []string
	args          []any
	order         string
	limit, offset int
}

// filter adds a condition with its arguments.
func (lq *listQuery) filter(cond string, args ...any) {
	lq.where, lq.args = append(lq.where, cond), append(lq.args, args...)
}

// handleList is GET /transcriptions: one page of the workspace's transcriptions that match the
// filters (by default the completed ones, newest first), with the total.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r)
	lq, ok := parseListQuery(w, r, p.workspaceID)
	if !ok {
		return
	}
	items, total, err := s.listPage(r.Context(), lq)
	if err != nil {
		internalError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": total, "limit": lq.limit, "offset": lq.offset})
}

// parseListQuery reads the list request's filters, order and page, in order: status,
// project_id, language, external_id, metadata.<key>, date_from, date_to, sort, limit, offset.
// It answers the request and returns false on the first bad parameter.
func parseListQuery(w http.ResponseWriter, r *http.Request, workspaceID string) (*listQuery, bool) {
	q := r.URL.Query()
	lq := &listQuery{where: []string{"workspace_id = ?"}, args: []any{workspaceID}}
	status := "completed"
	if q.Has("status") {
		status = q.Get("status")
	}
	lq.filter("status = ?", status)
	for _, f := range []struct{ param, col string }{{"project_id", "project_id"}, {"language", "language"}, {"external_id", "external_id"}} {
		if q.Has(f.param) {
			lq.filter(f.col+" = ?", q.Get(f.param))
		}
	}
	if !lq.metadataFilter(w, r, q) || !lq.dateFilters(w, r, q) {
		return nil, false
	}
	lq.order = sortColumns["-created_at"]
	if q.Has("sort") {
		o, ok := sortColumns[q.Get("sort")]
		if !ok {
			badParam(w, r, "invalid_sort", "sort", fmt.Sprintf("%q is not created_at, -created_at, duration or -duration", q.Get("sort")))
			return nil, false
		}
		lq.order = o
	}
	limit, ok := intParam(w, r, "limit", 20)
	if !ok {
		return nil, false
	}
	lq.limit = max(1, min(100, limit))
	offset, ok := intParam(w, r, "offset", 0)
	if !ok {
		return nil, false
	}
	lq.offset = max(0, offset)
	return lq, true
}

// metadataFilter adds the condition of a metadata.<key>=<value> parameter (one at most): the
// key's value, rendered as text, equals value. It answers the request and returns false when
// the filter is bad.
func (lq *listQuery) metadataFilter(w http.ResponseWriter, r *http.Request, q url.Values) bool {
	var metaKeys []string
	for name := range q {
		if strings.HasPrefix(name, "metadata.") {
			metaKeys = append(metaKeys, name)
		}
	}
	if len(metaKeys) > 1 {
		badParam(w, r, "invalid_metadata_filter", strings.Join(metaKeys, ","), "filter by one metadata key at a time")
		return false
	}
	if len(metaKeys) == 1 {
		key := strings.TrimPrefix(metaKeys[0], "metadata.")
		if key == "" {
			badParam(w, r, "invalid_metadata_filter", metaKeys[0], "names no key")
			return false
		}
		path := `$."` + strings.ReplaceAll(key, `"`, `\"`) + `"`
		lq.filter(`(CASE json_type(metadata, ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
			WHEN 'text' THEN json_extract(metadata, ?) WHEN 'integer' THEN CAST(json_extract(metadata, ?) AS TEXT)
			WHEN 'real' THEN CAST(json_extract(metadata, ?) AS TEXT) END) = ?`, path, path, path, path, q.Get(metaKeys[0]))
	}
	return true
}

// dateFilters adds the conditions of date_from (created that day or later) and date_to
// (created that day or earlier). It answers the request and returns false on a bad date.
func (lq *listQuery) dateFilters(w http.ResponseWriter, r *http.Request, q url.Values) bool {
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
			return false
		}
		lq.filter("created_at "+d.op+" ?", day.Add(d.shift).UnixNano())
	}
	return true
}

// listPage reads the page lq asks for and the total that matches, at one moment.
func (s *Server) listPage(ctx context.Context, lq *listQuery) ([]*listItemJSON, int, error) {
	cond := strings.Join(lq.where, " AND ")
	var total int
	items := []*listItemJSON{}
	// The total and the page are counted and read at one moment.
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM transcriptions WHERE `+cond, lq.args...).Scan(&total); err != nil {
			return fmt.Errorf("count transcriptions: %w", err)
		}
		recs, err := queryRecords(ctx, tx, cond+` ORDER BY `+lq.order+` LIMIT ? OFFSET ?`, append(lq.args, lq.limit, lq.offset)...)
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
	return items, total, err
}

// intParam reads the integer query parameter name (def when absent); it answers the request
// and returns false when it is not an integer.
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
