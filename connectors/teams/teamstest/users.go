package teamstest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// users1 answers /users and what lies under one user.
func (s *Server) users1(w http.ResponseWriter, r *http.Request, p []string) {
	if r.Method != http.MethodGet {
		graphError(w, http.StatusMethodNotAllowed, "Request_BadRequest", "method not allowed")
		return
	}
	if s.refused(PermUsers) && (len(p) <= 1) {
		graphError(w, http.StatusForbidden, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")
		return
	}
	switch {
	case len(p) == 0:
		s.count("users")
		s.listUsers(w, r)
	case len(p) == 1:
		s.count("user")
		if u := s.findUser(p[0]); u != nil {
			writeJSON(w, http.StatusOK, u)
		} else {
			graphError(w, http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+p[0]+"' does not exist or one of its queried reference-property objects are not present.")
		}
	case len(p) >= 3 && p[1] == "onlineMeetings":
		s.meetings(w, r, p[0], p[2:])
	case len(p) >= 3 && p[1] == "adhocCalls":
		s.adhocCalls(w, r, p[0], p[2:])
	default:
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Join(p, "/")+"'.")
	}
}

func (s *Server) findUser(key string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.ID == key || strings.EqualFold(u.UserPrincipalName, key) {
			c := *u
			return &c
		}
	}
	return nil
}

// listUsers answers GET /users: $top and $skiptoken paging, and $filter=mail eq '…'.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var match []any
	for _, u := range s.users {
		if f := r.URL.Query().Get("$filter"); f == "" || strings.EqualFold(f, "mail eq '"+u.Mail+"'") {
			match = append(match, *u)
		}
	}
	s.mu.Unlock()
	s.userPage(w, r, match)
}

// userPage answers a page of users, from $skiptoken, with the @odata.nextLink of the next
// (keeping the query's $select, $top and $count) and, with $count=true, @odata.count.
func (s *Server) userPage(w http.ResponseWriter, r *http.Request, match []any) {
	q := r.URL.Query()
	off, _ := strconv.Atoi(q.Get("$skiptoken"))
	s.mu.Lock()
	size := s.PageSize
	s.mu.Unlock()
	page := map[string]any{"@odata.context": hostBase(r) + "/v1.0/$metadata#users(id,displayName,mail,userPrincipalName)"}
	if q.Get("$count") == "true" {
		page["@odata.count"] = len(match)
	}
	end := min(off+size, len(match))
	page["value"] = append([]any{}, match[min(off, len(match)):end]...)
	if end < len(match) {
		nq := url.Values{"$select": {q.Get("$select")}, "$top": {q.Get("$top")}, "$skiptoken": {strconv.Itoa(end)}}
		if q.Has("$count") {
			nq.Set("$count", q.Get("$count"))
		}
		page["@odata.nextLink"] = hostBase(r) + r.URL.Path + "?" + nq.Encode()
	}
	writeJSON(w, http.StatusOK, page)
}
