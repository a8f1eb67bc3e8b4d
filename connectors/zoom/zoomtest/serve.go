package zoomtest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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
		s.tokens[tok] = true
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 3600,
			"scope": "user:read:admin recording:read:admin recording:write:admin", "api_url": "https://api.zoom.us"})
	}
}

// authorized checks a bearer token, or an access_token query parameter when allowQuery.
func (s *Server) authorized(r *http.Request, allowQuery bool) bool {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if allowQuery && r.URL.Query().Get("access_token") != "" {
		tok = r.URL.Query().Get("access_token")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[tok] || strings.HasPrefix(tok, "dl-") && allowQuery
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r, false) {
		zoomError(w, http.StatusUnauthorized, 124, "Invalid access token.")
		return
	}
	s.mu.Lock()
	if len(s.limited) > 0 {
		ra := s.limited[0]
		s.limited = s.limited[1:]
		s.mu.Unlock()
		if ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.Header().Set("X-RateLimit-Category", "Medium")
		w.Header().Set("X-RateLimit-Type", "QPS")
		zoomError(w, http.StatusTooManyRequests, 429, "You have reached the maximum per-second rate limit for this API. Try again later.")
		return
	}
	s.mu.Unlock()
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/v2")
	q := r.URL.Query()
	switch parts := strings.Split(strings.Trim(path, "/"), "/"); {
	case r.Method == http.MethodGet && path == "/users":
		s.count("users")
		s.listUsers(w, q)
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "users" && parts[2] == "recordings":
		s.count("recordings")
		id, _ := url.PathUnescape(parts[1])
		s.listRecordings(w, q, id)
	case r.Method == http.MethodDelete && len(parts) == 4 && parts[0] == "meetings" && parts[2] == "recordings":
		s.mu.Lock()
		s.Deleted = append(s.Deleted, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		zoomError(w, http.StatusNotFound, 404, "Not found: "+path)
	}
}

func (s *Server) count(what string) {
	s.mu.Lock()
	s.Calls[what]++
	s.mu.Unlock()
}

func (s *Server) listUsers(w http.ResponseWriter, q url.Values) {
	status := q.Get("status")
	if status == "" {
		status = "active"
	}
	size, _ := strconv.Atoi(q.Get("page_size"))
	if size <= 0 || size > 300 {
		size = 30
	}
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
	writeJSON(w, http.StatusOK, map[string]any{"page_size": size, "total_records": len(match), "next_page_token": next, "users": page})
}

func (s *Server) listRecordings(w http.ResponseWriter, q url.Values, user string) {
	from, err1 := time.Parse("2006-01-02", q.Get("from"))
	to, err2 := time.Parse("2006-01-02", q.Get("to"))
	if err1 != nil || err2 != nil || to.Before(from) || to.After(from.AddDate(0, 1, 0)) {
		zoomError(w, http.StatusBadRequest, 300, "Invalid from/to: one request covers at most one month")
		return
	}
	size, _ := strconv.Atoi(q.Get("page_size"))
	if size <= 0 || size > 300 {
		size = 30
	}
	off, ok := offsetOf(q.Get("next_page_token"))
	if !ok {
		zoomError(w, http.StatusBadRequest, 300, "The next page token is invalid or expired.")
		return
	}
	s.mu.Lock()
	var host *User
	for _, u := range s.users {
		if u.ID == user || strings.EqualFold(u.Email, user) {
			host = u
		}
	}
	if host == nil {
		s.mu.Unlock()
		zoomError(w, http.StatusNotFound, 1001, "User does not exist: "+user+".")
		return
	}
	var match []Meeting
	for _, m := range s.meetings {
		start, _ := time.Parse(time.RFC3339, m.StartTime)
		if m.HostID == host.ID && !start.Before(from) && start.Before(to.AddDate(0, 0, 1)) {
			c := *m
			c.HostEmail = "" // the per-user list leaves it out; webhooks carry it
			match = append(match, c)
		}
	}
	s.mu.Unlock()
	page, next := paginate(match, off, size)
	writeJSON(w, http.StatusOK, map[string]any{"from": q.Get("from"), "to": q.Get("to"), "page_size": size,
		"total_records": len(match), "next_page_token": next, "meetings": page})
}

func (s *Server) findFile(id string) *File {
	for _, m := range s.meetings {
		for _, f := range m.RecordingFiles {
			if f.ID == id {
				return f
			}
		}
	}
	return nil
}

// download answers a download_url: a 302 to the file for a valid token, else 401.
func (s *Server) download(w http.ResponseWriter, r *http.Request, id string) {
	if !s.authorized(r, true) {
		zoomError(w, http.StatusUnauthorized, 124, "Invalid access token.")
		return
	}
	s.mu.Lock()
	f := s.findFile(id)
	s.mu.Unlock()
	if f == nil {
		zoomError(w, http.StatusNotFound, 3301, "This recording does not exist.")
		return
	}
	http.Redirect(w, r, s.URL+"/files/"+id+"?sig=signed-"+strconv.FormatInt(time.Now().UnixNano(), 36), http.StatusFound)
}

func (s *Server) file(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	s.Downloads++
	f := s.findFile(id)
	var fault string
	var content []byte
	if f != nil {
		fault, f.Fault, content = f.Fault, "", f.Content
		if fault == "" {
			fault = f.Always
		}
	}
	s.mu.Unlock()
	switch {
	case f == nil || !strings.HasPrefix(r.URL.Query().Get("sig"), "signed-"):
		http.NotFound(w, r)
	case fault == "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>Sorry, this page is not available. Sign in to continue.</body></html>"))
	case fault == "503":
		w.Header().Set("Retry-After", "120")
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	case fault == "short":
		w.Header().Set("Content-Type", "audio/mp4")
		w.Write(content[:len(content)/2]) // no Content-Length: the cut is only seen at the end
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	default:
		w.Header().Set("Content-Type", map[string]string{"M4A": "audio/mp4", "MP4": "video/mp4"}[f.FileType])
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content)
	}
}

// paginate returns the page of items at offset and the token of the next page ("" at the end).
func paginate[T any](items []T, offset, size int) ([]T, string) {
	if offset >= len(items) {
		return []T{}, ""
	}
	end := min(offset+size, len(items))
	if end < len(items) {
		return items[offset:end], pageToken(end)
	}
	return items[offset:end], ""
}
