package teams

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// user is an Entra ID user: an organizer whose meetings' recordings are synced.
type user struct {
	ID                string `json:"id"`
	DisplayName       string `json:"displayName"`
	Mail              string `json:"mail"`
	UserPrincipalName string `json:"userPrincipalName"`
}

// email is the user's mail, else the userPrincipalName.
func (u user) email() string {
	if u.Mail != "" {
		return u.Mail
	}
	return u.UserPrincipalName
}

// String names the user in messages: the e-mail, else the object id.
func (u user) String() string {
	if e := u.email(); e != "" {
		return e
	}
	return u.ID
}

const userFields = "id,displayName,mail,userPrincipalName"

// eventual is the header of Graph's advanced queries on directory objects
// (https://learn.microsoft.com/graph/aad-advanced-queries), sent with $count=true.
var eventual = http.Header{http.CanonicalHeaderKey("ConsistencyLevel"): {"eventual"}}

// organizers returns the users whose recordings are synced: with all, every user of the tenant
// (GET /users, page by page), else the configured e-mails and groups resolved to users. It
// remembers them (by id) for the owners of pushed recordings. It fails with the first user or
// group that cannot be resolved (a *GraphError for Graph's refusals).
func (s *Source) organizers(ctx context.Context) ([]user, error) {
	var out []user
	if s.cfg.all() {
		next := s.cfg.GraphURL + "/v1.0/users?$select=" + userFields + "&$top=999"
		for next != "" {
			var page struct {
				Value []user `json:"value"`
				Next  string `json:"@odata.nextLink"`
			}
			if err := s.api.do(ctx, call{op: "list users", method: http.MethodGet, url: next, need: needUsers}, &page); err != nil {
				return nil, err
			}
			out = append(out, page.Value...)
			next = page.Next
		}
	} else {
		seen := map[string]bool{}
		var bare []string
		for _, o := range s.cfg.Organizers {
			us, err := s.resolve(ctx, o)
			if err != nil {
				return nil, fmt.Errorf("organizer %s: %w", o, err)
			}
			if strings.HasPrefix(o, "group:") && slices.ContainsFunc(us, func(u user) bool { return u.email() == "" }) {
				bare = append(bare, o)
			}
			for _, u := range us {
				if !seen[u.ID] {
					seen[u.ID] = true
					out = append(out, u)
				}
			}
		}
		s.noteBare(bare)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := map[string]bool{}
	for _, u := range out {
		s.users[u.ID] = u
		scope[u.ID] = true
	}
	s.scope = scope
	return out, nil
}

// resolve returns the users an organizers entry names: a user (e-mail or object id), or with
// group:, the users among a group's members, nested groups included.
func (s *Source) resolve(ctx context.Context, entry string) ([]user, error) {
	key, group := strings.CutPrefix(entry, "group:")
	if !group {
		u, err := s.lookup(ctx, key)
		return []user{u}, err
	}
	id := key
	if strings.Contains(key, "@") {
		var page struct {
			Value []struct {
				ID string `json:"id"`
			} `json:"value"`
		}
		q := url.Values{"$filter": {"mail eq '" + strings.ReplaceAll(key, "'", "''") + "'"}, "$select": {"id"}}
		if err := s.api.do(ctx, call{op: "group with mail " + key, method: http.MethodGet, need: needGroups,
			url: s.cfg.GraphURL + "/v1.0/groups?" + q.Encode()}, &page); err != nil {
			return nil, err
		}
		if len(page.Value) == 0 {
			return nil, fmt.Errorf("no group of the tenant has the mail %s", key)
		}
		id = page.Value[0].ID
	}
	// The OData cast is an advanced query: ConsistencyLevel: eventual and $count=true, else
	// 400 Request_UnsupportedQuery (https://learn.microsoft.com/graph/api/group-list-transitivemembers).
	var out []user
	next := s.cfg.GraphURL + "/v1.0/groups/" + url.PathEscape(id) + "/transitiveMembers/microsoft.graph.user?$select=" + userFields + "&$top=999&$count=true"
	for next != "" {
		var page struct {
			Value []user `json:"value"`
			Next  string `json:"@odata.nextLink"`
		}
		c := call{op: "members of group " + key, method: http.MethodGet, url: next, need: needGroups, header: eventual}
		if err := s.api.do(ctx, c, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Value...)
		next = page.Next
	}
	return out, nil
}

// noteBare remembers the group entries whose members came back without mail or
// userPrincipalName, for Check, and warns when they change. Graph answers so when the app
// lacks User.Read.All: "if it doesn't have permission to read a certain resource type, members
// of that type are returned but with limited information ... only the @odata.type property for
// the object type and the id"
// (https://learn.microsoft.com/graph/permissions-overview#limited-information-returned-for-inaccessible-member-objects).
func (s *Source) noteBare(groups []string) {
	problem := ""
	if len(groups) > 0 {
		problem = "members of " + strings.Join(groups, ", ") + " came back without mail or userPrincipalName: the app lacks " +
			"the application permission User.Read.All (GroupMember.Read.All alone returns only their ids)"
	}
	s.mu.Lock()
	changed := problem != s.bare
	s.bare = problem
	s.mu.Unlock()
	if changed && problem != "" {
		s.warn(problem+"; their recordings are synced by id, their owners cannot be mapped by e-mail", strings.Join(groups, ", "), nil)
	}
}

// fixBare is what clears the problem noteBare names.
const fixBare = "grant the application permission User.Read.All (Microsoft Graph, with admin consent) to the app registration"

// lookup resolves an e-mail or an object id to its user: GET /users/{key}, and for an e-mail
// that is no userPrincipalName, the user whose mail it is.
func (s *Source) lookup(ctx context.Context, key string) (user, error) {
	var u user
	err := s.api.do(ctx, call{op: "user " + key, method: http.MethodGet, need: needUsers,
		url: s.cfg.GraphURL + "/v1.0/users/" + url.PathEscape(key) + "?$select=" + userFields}, &u)
	if e := asGraph(err); e == nil || e.Status != http.StatusNotFound || !strings.Contains(key, "@") {
		return u, err
	}
	var page struct {
		Value []user `json:"value"`
	}
	q := url.Values{"$filter": {"mail eq '" + strings.ReplaceAll(key, "'", "''") + "'"}, "$select": {userFields}}
	if err := s.api.do(ctx, call{op: "user with mail " + key, method: http.MethodGet, need: needUsers,
		url: s.cfg.GraphURL + "/v1.0/users?" + q.Encode()}, &page); err != nil {
		return user{}, err
	}
	if len(page.Value) == 0 {
		return user{}, fmt.Errorf("no user of the tenant has %s as userPrincipalName or mail: %w", key, err)
	}
	return page.Value[0], nil
}

// user returns the user with this object id: remembered from the last listing, else asked.
func (s *Source) user(ctx context.Context, id string) (user, error) {
	s.mu.Lock()
	u, ok := s.users[id]
	s.mu.Unlock()
	if ok {
		return u, nil
	}
	u, err := s.lookup(ctx, id)
	if err != nil {
		return user{}, err
	}
	s.mu.Lock()
	s.users[id] = u
	s.mu.Unlock()
	return u, nil
}

// inScope reports whether recordings organized by id are synced: always with all, else when
// id is one of the configured organizers (resolved first if they are not yet).
func (s *Source) inScope(ctx context.Context, id string) (bool, error) {
	if s.cfg.all() {
		return true, nil
	}
	s.mu.Lock()
	scope := s.scope
	s.mu.Unlock()
	if scope == nil {
		if _, err := s.organizers(ctx); err != nil {
			return false, err
		}
		s.mu.Lock()
		scope = s.scope
		s.mu.Unlock()
	}
	return scope[id], nil
}

// keepOrganizers resolves the configured organizers at once and again every OrganizersRefresh
// until ctx ends (after SubscribeRetry when it failed), so that a notification is checked
// against them without calling Graph.
func (s *Source) keepOrganizers(ctx context.Context) {
	for {
		wait := s.cfg.OrganizersRefresh
		if _, err := s.organizers(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.warn("organizers cannot be resolved; notified recordings wait for them", strings.Join(s.cfg.Organizers, ", "), err)
			wait = min(wait, s.cfg.SubscribeRetry)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
