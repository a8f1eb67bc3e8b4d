package meettest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The scopes the reference accepts for the methods the fake serves ("Authorization scopes":
// meetings.space.created or meetings.space.readonly).
var meetScopes = []string{"https://www.googleapis.com/auth/meetings.space.readonly", "https://www.googleapis.com/auth/meetings.space.created"}

// Messages of the recorded error answers (testdata/README.md).
const (
	unauthenticated = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid " +
		"authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
	insufficientScopes = "Request had insufficient authentication scopes."
)

// apiError writes an error in the Google API error model (https://cloud.google.com/apis/design/errors).
func apiError(w http.ResponseWriter, code int, status, message string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(v)
}

func (s *Server) handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	user, scopes, ok := s.drive.Token(r.Header.Get("Authorization"))
	s.mu.Lock()
	s.Requests++
	fault := 0
	if ok && len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	switch {
	case !ok:
		apiError(w, http.StatusUnauthorized, "UNAUTHENTICATED", unauthenticated)
		return
	case !slices.ContainsFunc(scopes, func(sc string) bool { return slices.Contains(meetScopes, sc) }):
		apiError(w, http.StatusForbidden, "PERMISSION_DENIED", insufficientScopes)
		return
	case fault == http.StatusTooManyRequests:
		apiError(w, fault, "RESOURCE_EXHAUSTED", "Quota exceeded.")
		return
	case fault == http.StatusServiceUnavailable:
		apiError(w, fault, "UNAVAILABLE", "The service is currently unavailable.")
		return
	case fault != 0:
		apiError(w, fault, "INTERNAL", "Internal error encountered.")
		return
	}
	q := r.URL.Query()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v2/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method != http.MethodGet:
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Method not found.")
	case len(parts) == 1 && parts[0] == "conferenceRecords":
		s.listConferences(w, q, user)
	case len(parts) == 2 && parts[0] == "conferenceRecords":
		if c := s.visible(parts[0]+"/"+parts[1], user); c == nil {
			apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		} else {
			writeJSON(w, s.conference(c))
		}
	case len(parts) == 3 && parts[0] == "conferenceRecords" && parts[2] == "recordings":
		s.listRecordings(w, q, s.visible(parts[0]+"/"+parts[1], user))
	case len(parts) == 2 && parts[0] == "spaces":
		s.getSpace(w, "spaces/"+parts[1], user)
	default:
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
	}
}

// visible returns the conference named name when user may read it and it has not expired.
func (s *Server) visible(name, user string) *conference {
	for _, c := range s.confs {
		if c.name == name && slices.Contains(c.people, user) && !s.expired(c) {
			return c
		}
	}
	return nil
}

func (s *Server) expired(c *conference) bool {
	return !c.end.IsZero() && !s.Now().Before(c.end.Add(Retention))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// conference renders c as the ConferenceRecord resource: endTime and expireTime only once it
// ended ("Unset if the conference is ongoing").
func (s *Server) conference(c *conference) map[string]any {
	out := map[string]any{"name": c.name, "startTime": stamp(c.start), "space": c.space}
	if !c.end.IsZero() {
		out["endTime"], out["expireTime"] = stamp(c.end), stamp(c.end.Add(Retention))
	}
	return out
}

// listConferences answers conferenceRecords.list: "By default, ordered by start time and in
// descending order"; pageSize "If unspecified, at most 25 conference records are returned. The
// maximum value is 100; values above 100 are coerced to 100".
func (s *Server) listConferences(w http.ResponseWriter, q map[string][]string, user string) {
	match, err := parseFilter(first(q, "filter"))
	if err != nil {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	}
	var all []*conference
	for _, c := range s.confs {
		if slices.Contains(c.people, user) && !s.expired(c) && match(c, s.spaces[c.space]) {
			all = append(all, c)
		}
	}
	slices.SortStableFunc(all, func(a, b *conference) int { return b.start.Compare(a.start) })
	page, next, ok := paginate(len(all), q, 25)
	if !ok {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid page token.")
		return
	}
	out := map[string]any{}
	var recs []map[string]any
	for _, c := range all[page[0]:page[1]] {
		recs = append(recs, s.conference(c))
	}
	if len(recs) > 0 { // proto3 JSON leaves empty lists out
		out["conferenceRecords"] = recs
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	writeJSON(w, out)
}

// listRecordings answers conferenceRecords.recordings.list of c (nil: not found or not
// visible): "By default, ordered by start time and in ascending order"; pageSize "If
// unspecified, at most 10 recordings are returned. The maximum value is 100"; driveDestination
// set once the file is generated.
func (s *Server) listRecordings(w http.ResponseWriter, q map[string][]string, c *conference) {
	if c == nil {
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	all := slices.Clone(c.recordings)
	slices.SortStableFunc(all, func(a, b *recording) int { return a.start.Compare(b.start) })
	page, next, ok := paginate(len(all), q, 10)
	if !ok {
		apiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid page token.")
		return
	}
	out := map[string]any{}
	var recs []map[string]any
	for _, r := range all[page[0]:page[1]] {
		m := map[string]any{"name": r.name, "state": r.state, "startTime": stamp(r.start)}
		if !r.end.IsZero() {
			m["endTime"] = stamp(r.end)
		}
		if r.state == FileGenerated {
			m["driveDestination"] = map[string]string{"file": r.file, "exportUri": "https://drive.google.com/file/d/" + r.file + "/view"}
		}
		recs = append(recs, m)
	}
	if len(recs) > 0 {
		out["recordings"] = recs
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	writeJSON(w, out)
}

// getSpace answers spaces.get, which owners, participants and others may call; the space's
// settings (config) go to its owner alone ("Work with meeting spaces",
// https://developers.google.com/workspace/meet/api/guides/meeting-spaces).
func (s *Server) getSpace(w http.ResponseWriter, name, user string) {
	sp := s.spaces[name]
	if sp == nil {
		apiError(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	out := map[string]any{"name": sp.name, "meetingUri": "https://meet.google.com/" + sp.code, "meetingCode": sp.code}
	if user == sp.owner {
		out["config"] = map[string]string{"accessType": "TRUSTED", "entryPointAccess": "ALL"}
	}
	writeJSON(w, out)
}

// paginate returns the [from, to) of a page of n items for q's pageSize (default def, at most
// 100) and pageToken (opaque), the next page's token ("" on the last), and false for a token
// this server did not issue.
func paginate(n int, q map[string][]string, def int) (page [2]int, next string, ok bool) {
	size, _ := strconv.Atoi(first(q, "pageSize"))
	if size <= 0 {
		size = def
	}
	size = min(size, 100)
	from := 0
	if tok := first(q, "pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || !strings.HasPrefix(string(b), "o=") {
			return page, "", false
		}
		from, _ = strconv.Atoi(strings.TrimPrefix(string(b), "o="))
	}
	from = min(from, n)
	to := min(from+size, n)
	if to < n {
		next = base64.RawURLEncoding.EncodeToString([]byte("o=" + strconv.Itoa(to)))
	}
	return [2]int{from, to}, next, true
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}
