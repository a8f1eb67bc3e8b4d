package teamstest

import (
	"fmt"
	"net/http"
	"strings"
)

// Group is an Entra ID group: its members are users and groups, by id.
type Group struct {
	// ID is the object id, Mail the group's address.
	ID   string `json:"id"`
	Mail string `json:"mail"`
	// Members are user and group ids.
	Members []string
}

// AddGroup adds a group with the given mail and members (user or group ids) and returns it.
func (s *Server) AddGroup(mail string, members ...string) *Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &Group{ID: fmt.Sprintf("9a1b%04x-7c2d-4e3f-8a9b-%012x", len(s.groups)+1, len(s.groups)+1), Mail: mail, Members: members}
	s.groups = append(s.groups, g)
	return g
}

// groups1 answers GET /groups?$filter=mail eq '…' and GET
// /groups/{id}/transitiveMembers/microsoft.graph.user (the users among the members, nested
// groups included, paged).
//
// The OData cast on transitiveMembers is an advanced query: "To filter the results on the
// OData type, such as microsoft.graph.user or microsoft.graph.group, you must use the advanced
// query parameters. That is, the ConsistencyLevel header set to eventual and the $count=true
// query string" (https://learn.microsoft.com/graph/api/group-list-transitivemembers); without
// them Graph answers 400 Request_UnsupportedQuery
// (https://learn.microsoft.com/graph/aad-advanced-queries, "Error handling for advanced
// queries"; the message here is the fake's, the code and status Graph's). With them the page
// carries @odata.count.
//
// Members are directory objects: an app without User.Read.All (GroupMember.Read.All alone)
// gets its user members "with limited information. For example, only the @odata.type property
// for the object type and the id is returned, while other properties are indicated as null"
// (https://learn.microsoft.com/graph/permissions-overview#limited-information-returned-for-inaccessible-member-objects).
func (s *Server) groups1(w http.ResponseWriter, r *http.Request, p []string) {
	if s.refused(PermGroups) {
		graphError(w, http.StatusForbidden, "Authorization_RequestDenied", "Insufficient privileges to complete the operation.")
		return
	}
	switch {
	case len(p) == 0 && r.Method == http.MethodGet:
		s.count("groups")
		var out []map[string]string
		s.mu.Lock()
		for _, g := range s.groups {
			if strings.EqualFold(r.URL.Query().Get("$filter"), "mail eq '"+g.Mail+"'") {
				out = append(out, map[string]string{"id": g.ID})
			}
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"value": append([]map[string]string{}, out...)})
	case len(p) == 3 && p[1] == "transitiveMembers" && p[2] == "microsoft.graph.user" && r.Method == http.MethodGet:
		s.count("members")
		if r.Header.Get("ConsistencyLevel") != "eventual" || r.URL.Query().Get("$count") != "true" {
			graphError(w, http.StatusBadRequest, "Request_UnsupportedQuery",
				"The OData cast on transitiveMembers is an advanced query: add the $count=true query parameter and the ConsistencyLevel:eventual header. Refer to https://aka.ms/graph-docs/advanced-queries for more information")
			return
		}
		s.mu.Lock()
		users, ok := s.members(p[0], map[string]bool{})
		limited := s.revoked[PermUsers]
		s.mu.Unlock()
		if !ok {
			graphError(w, http.StatusNotFound, "Request_ResourceNotFound", "Resource '"+p[0]+"' does not exist.")
			return
		}
		items := make([]any, len(users))
		for i, u := range users {
			items[i] = u
			if limited {
				items[i] = map[string]any{"@odata.type": "#microsoft.graph.user", "id": u.ID, "displayName": nil, "mail": nil, "userPrincipalName": nil}
			}
		}
		s.userPage(w, r, items)
	default:
		graphError(w, http.StatusBadRequest, "BadRequest", "Resource not found for the segment '"+strings.Join(p, "/")+"'.")
	}
}

// members lists the users of group id and of the groups in it, once each; ok is false when
// there is no such group. The caller holds the lock.
func (s *Server) members(id string, seen map[string]bool) ([]User, bool) {
	var g *Group
	for _, x := range s.groups {
		if x.ID == id {
			g = x
		}
	}
	if g == nil {
		return nil, false
	}
	var out []User
	for _, m := range g.Members {
		if seen[m] {
			continue
		}
		seen[m] = true
		if nested, ok := s.members(m, seen); ok {
			out = append(out, nested...)
			continue
		}
		for _, u := range s.users {
			if u.ID == m {
				out = append(out, *u)
			}
		}
	}
	return out, true
}
