package zoom

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// user is one Zoom user.
type user struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// everyone reports whether users is "all": every user of the account, inactive ones included.
func (s *Source) everyone() bool {
	return len(s.cfg.Users) == 1 && s.cfg.Users[0] == "all"
}

// accountUsers lists every user of the account whatever their status (the recordings of
// deactivated users remain), 300 a page.
func (s *Source) accountUsers(ctx context.Context) ([]user, error) {
	var out []user
	for _, status := range []string{"active", "inactive", "pending"} {
		token := ""
		for {
			var page struct {
				NextPageToken string `json:"next_page_token"`
				Users         []user `json:"users"`
			}
			q := url.Values{"status": {status}, "page_size": {"300"}}
			if token != "" {
				q.Set("next_page_token", token)
			}
			if err := s.api.call(ctx, medium, "list users", http.MethodGet, "/users", q, &page); err != nil {
				return nil, err
			}
			out = append(out, page.Users...)
			if token = page.NextPageToken; token == "" {
				break
			}
		}
	}
	return out, nil
}

// configuredUsers resolves each entry of users (an id or an e-mail) with GET /users/{userId},
// for the user's id and e-mail (remembered: they do not change). missing are the entries Zoom
// does not know (404, code 1001).
func (s *Source) configuredUsers(ctx context.Context) (found []user, missing []string, err error) {
	for _, entry := range s.cfg.Users {
		s.mu.Lock()
		u, ok := s.resolved[entry]
		s.mu.Unlock()
		if !ok {
			err := s.api.call(ctx, light, "get user "+entry, http.MethodGet, "/users/"+url.PathEscape(entry), nil, &u)
			if isStatus(err, http.StatusNotFound) {
				missing = append(missing, entry)
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			s.mu.Lock()
			s.resolved[entry] = u
			s.mu.Unlock()
		}
		found = append(found, u)
	}
	return found, missing, nil
}

// owns reports whether users covers the host of m, by the rule the sweep lists by: with
// "all", every host; else a host whose id is an entry (or an entry's id), or whose e-mail is
// one (or an entry's e-mail), in any case.
func (s *Source) owns(m meeting) bool {
	if s.everyone() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, entry := range s.cfg.Users {
		u := s.resolved[entry]
		for _, id := range []string{entry, u.ID} {
			if id != "" && id == m.HostID {
				return true
			}
		}
		for _, email := range []string{entry, u.Email} {
			if email != "" && m.HostEmail != "" && strings.EqualFold(email, m.HostEmail) {
				return true
			}
		}
	}
	return false
}
