package zoomtest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/oauth/token":
		s.token(w, r)
	case strings.HasPrefix(r.URL.Path, "/rec/download/"):
		s.download(w, r, strings.TrimPrefix(r.URL.Path, "/rec/download/"))
	case strings.HasPrefix(r.URL.Path, "/files/"):
		s.file(w, r, strings.TrimPrefix(r.URL.Path, "/files/"))
	case strings.HasPrefix(r.URL.Path, "/v2/"):
		s.api(w, r)
	default:
		http.NotFound(w, r)
	}
}

// token answers the account_credentials grant. The answer lists the app's scopes as one
// space-separated string, and the token lives an hour: {"access_token", "token_type":
// "bearer", "expires_in": 3600, "scope", "api_url"}
// (https://developers.zoom.us/docs/internal-apps/s2s-oauth/: "The token's time to live is one
// hour (3600 seconds)"; testdata/token.json).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	r.ParseForm()
	switch {
	case r.Method != http.MethodPost || !ok || id != ClientID || secret != ClientSecret:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"reason": "Invalid client_id or client_secret", "error": "invalid_client"})
	case r.PostForm.Get("grant_type") != "account_credentials":
		writeJSON(w, http.StatusBadRequest, map[string]string{"reason": "Unsupported grant type", "error": "unsupported_grant_type"})
	case r.PostForm.Get("account_id") != AccountID:
		writeJSON(w, http.StatusBadRequest, map[string]string{"reason": "Invalid account_id", "error": "invalid_request"})
	default:
		s.mu.Lock()
		s.next++
		s.issued++
		tok := "zt-" + strconv.Itoa(s.next)
		s.tokens[tok] = s.scopes
		scopes := s.scopes
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 3600,
			"scope": scopes, "api_url": "https://api.zoom.us"})
	}
}

// bearer returns the scopes of the request's token (a bearer token, or an access_token query
// parameter when allowQuery); ok is false for a token the fake did not issue. A webhook's
// download_token (dl-…) is taken as access_token on downloads only.
func (s *Server) bearer(r *http.Request, allowQuery bool) (scopes string, ok bool) {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if allowQuery && r.URL.Query().Get("access_token") != "" {
		tok = r.URL.Query().Get("access_token")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scopes, ok = s.tokens[tok]
	return scopes, ok || strings.HasPrefix(tok, "dl-") && allowQuery
}

// endpoint is an API route: its rate-limit category and the scopes of which it needs one
// (classic or granular), as each endpoint's reference page lists them.
type endpoint struct {
	kind     string
	category string
	scopes   []string
	serve    func(w http.ResponseWriter, r *http.Request, parts []string)
}

// route finds the endpoint of a request (path without /v2, split on "/").
func (s *Server) route(method string, parts []string) *endpoint {
	switch {
	case method == http.MethodGet && len(parts) == 1 && parts[0] == "users":
		return &endpoint{"users", "Medium", []string{"user:read:admin", "user:read:list_users:admin"}, s.listUsers}
	case method == http.MethodGet && len(parts) == 2 && parts[0] == "users":
		return &endpoint{"user", "Light", []string{"user:read:admin", "user:read:user:admin"}, s.getUser}
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "users" && parts[2] == "recordings":
		return &endpoint{"recordings", "Medium", []string{"recording:read:admin", "cloud_recording:read:list_user_recordings:admin"}, s.userRecordings}
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "accounts" && parts[2] == "recordings":
		// "Scopes: recording:read:admin or account:read:admin"; granular
		// cloud_recording:read:list_account_recordings:admin (List recordings of an account).
		return &endpoint{"account recordings", "Medium", []string{"recording:read:admin", "account:read:admin",
			"cloud_recording:read:list_account_recordings:admin"}, s.accountRecordings}
	case method == http.MethodDelete && len(parts) == 4 && parts[0] == "meetings" && parts[2] == "recordings":
		return &endpoint{"delete", "Light", []string{"recording:write:admin", "cloud_recording:delete:recording_file:admin"}, s.deleteFile}
	}
	return nil
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	scopes, ok := s.bearer(r, false)
	if !ok {
		zoomError(w, http.StatusUnauthorized, 124, "Invalid access token.")
		return
	}
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/v2")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	ep := s.route(r.Method, parts)
	if ep == nil {
		zoomError(w, http.StatusNotFound, 404, "Not found: "+path)
		return
	}
	if s.limit(w, ep.category) {
		return
	}
	if !hasScope(scopes, ep.scopes) {
		// A token without the endpoint's scope is refused with 400 and code 4711, naming the
		// granular scope (testdata/missing-scope.json).
		zoomError(w, http.StatusBadRequest, 4711, "Invalid access token, does not contain scopes:["+ep.scopes[len(ep.scopes)-1]+"]")
		return
	}
	s.count(ep.kind)
	ep.serve(w, r, parts)
}

func hasScope(granted string, need []string) bool {
	for _, g := range strings.Fields(granted) {
		for _, n := range need {
			if g == n {
				return true
			}
		}
	}
	return false
}

func (s *Server) count(what string) {
	s.mu.Lock()
	s.Calls[what]++
	s.mu.Unlock()
}

// listUsers answers GET /users?status=…: users of that status (active by default), 30 a
// page by default and at most 300, with next_page_token.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, _ []string) {
	q := r.URL.Query()
	status := q.Get("status")
	if status == "" {
		status = "active"
	}
	size := pageSize(q.Get("page_size"))
	off, ok := offsetOf(q.Get("next_page_token"))
	if !ok {
		zoomError(w, http.StatusBadRequest, 300, "The next page token is invalid or expired.")
		return
	}
	s.mu.Lock()
	var match []User
	for _, u := range s.users {
		if u.Status == status {
			match = append(match, *u)
		}
	}
	s.mu.Unlock()
	page, next := paginate(match, off, size)
	writeJSON(w, http.StatusOK, map[string]any{"page_count": (len(match) + size - 1) / size, "page_number": 1, "page_size": size,
		"total_records": len(match), "next_page_token": next, "users": page})
}

// findUser finds a user by id or e-mail (any case), as userId paths take either. Call with
// the lock held.
func (s *Server) findUser(idOrEmail string) *User {
	for _, u := range s.users {
		if u.ID == idOrEmail || strings.EqualFold(u.Email, idOrEmail) {
			return u
		}
	}
	return nil
}

// getUser answers GET /users/{userId} (an id or an e-mail), or 404 with code 1001 "User does
// not exist: {userId}." (Get a user, https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId};
// testdata/user-not-found.json).
func (s *Server) getUser(w http.ResponseWriter, _ *http.Request, parts []string) {
	id, _ := url.PathUnescape(parts[1])
	s.mu.Lock()
	u := s.findUser(id)
	var c User
	if u != nil {
		c = *u
	}
	s.mu.Unlock()
	if u == nil {
		zoomError(w, http.StatusNotFound, 1001, "User does not exist: "+id+".")
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// deleteFile answers DELETE /meetings/{meetingUUID}/recordings/{recordingId}?action=trash|delete
// with 204, or 404 code 3301 when there is no such file. A UUID starting with "/" or holding
// "//" arrives encoded twice.
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, parts []string) {
	uuid, _ := url.PathUnescape(parts[1])
	if strings.Contains(uuid, "%") {
		uuid, _ = url.PathUnescape(uuid)
	}
	fileID, _ := url.PathUnescape(parts[3])
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.meetings {
		for _, f := range m.RecordingFiles {
			if m.UUID == uuid && f.ID == fileID {
				s.Deleted = append(s.Deleted, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	zoomError(w, http.StatusNotFound, 3301, "This recording does not exist.")
}
