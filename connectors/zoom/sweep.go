package zoom

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// user is one Zoom user to sweep.
type user struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// users returns the users to sweep: with "all", every user of the account whatever their
// status (the recordings of deactivated users remain), else the configured ones.
func (s *Source) users(ctx context.Context) ([]user, error) {
	if !(len(s.cfg.Users) == 1 && s.cfg.Users[0] == "all") {
		var out []user
		for _, u := range s.cfg.Users {
			out = append(out, user{ID: u})
		}
		return out, nil
	}
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
			if err := s.api.call(ctx, medium, "list users", "GET", "/users", q, &page); err != nil {
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

// windows splits [from, to] into Zoom's at-most-one-month ranges of whole days.
func windows(from, to time.Time) [][2]time.Time {
	var out [][2]time.Time
	for start := from; !start.After(to); {
		end := start.AddDate(0, 1, -1)
		if end.After(to) {
			end = to
		}
		out = append(out, [2]time.Time{start, end})
		start = end.AddDate(0, 0, 1)
	}
	return out
}

// meetings lists u's recorded meetings in one window, page by page.
func (s *Source) meetings(ctx context.Context, u user, w [2]time.Time) ([]meeting, error) {
	var out []meeting
	token := ""
	for {
		var page struct {
			NextPageToken string    `json:"next_page_token"`
			Meetings      []meeting `json:"meetings"`
		}
		q := url.Values{"from": {w[0].Format("2006-01-02")}, "to": {w[1].Format("2006-01-02")}, "page_size": {"300"}}
		if token != "" {
			q.Set("next_page_token", token)
		}
		if err := s.api.call(ctx, medium, "list recordings of "+u.ID, "GET", "/users/"+url.PathEscape(u.ID)+"/recordings", q, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Meetings...)
		if token = page.NextPageToken; token == "" {
			return out, nil
		}
	}
}

// sweep walks every user's recordings from from to today, calling progress after each window.
func (s *Source) sweep(ctx context.Context, from time.Time, progress func(done, total int)) ([]connectors.Recording, error) {
	users, err := s.users(ctx)
	if err != nil {
		return nil, err
	}
	today := s.cfg.Now().UTC().Truncate(24 * time.Hour)
	ws := windows(from.UTC().Truncate(24*time.Hour), today)
	total, done := len(users)*len(ws), 0
	var out []connectors.Recording
	for _, u := range users {
		for _, w := range ws {
			ms, err := s.meetings(ctx, u, w)
			if err != nil {
				return nil, fmt.Errorf("sweep %s %s..%s: %w", u.ID, w[0].Format("2006-01-02"), w[1].Format("2006-01-02"), err)
			}
			for _, m := range ms {
				if f, ok := pick(m, s.cfg.FileTypes); ok {
					out = append(out, recording(s.cfg.AccountID, m, f, u.Email))
				}
			}
			done++
			if progress != nil {
				progress(done, total)
			}
		}
	}
	return out, nil
}

// List sweeps the last SweepDays days (the webhook is the fast path; the sweep catches what it
// missed). The cursor is the date of the last sweep, for information.
func (s *Source) List(ctx context.Context, _ string) ([]connectors.Recording, string, error) {
	now := s.cfg.Now().UTC()
	recs, err := s.sweep(ctx, now.AddDate(0, 0, -s.cfg.SweepDays), nil)
	if err != nil {
		return nil, "", err
	}
	return recs, now.Format("2006-01-02"), nil
}

// Backfill walks history from the given date, one month at a time (connectors.Backfiller).
func (s *Source) Backfill(ctx context.Context, from time.Time, progress func(done, total int)) ([]connectors.Recording, error) {
	return s.sweep(ctx, from, progress)
}
