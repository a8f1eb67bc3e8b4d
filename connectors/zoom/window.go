package zoom

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// windowDays is the most days, both ends included, one recordings listing asks for. Zoom
// answers "a month's worth" ("The maximum range can be a month", List all recordings) and
// trims a longer range without an error, keeping to and moving from a month before it, so the
// first days of a longer window are lost (https://github.com/zoom/api/issues/36). 28 days are
// within a month by any month's length.
const windowDays = 28

// listingMonths is how far back Zoom lists recordings: "You can get recordings up to 6 months
// in the past" (https://devforum.zoom.us/t/retrieve-all-past-zoom-cloud-recordings/22487);
// "The month should fall within the past six months period from the date of query" (List
// recordings of an account).
const listingMonths = 6

// dayOf is the UTC day of t.
func dayOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// oldestListed is the first day Zoom lists recordings of, at now.
func oldestListed(now time.Time) time.Time {
	return dayOf(now).AddDate(0, -listingMonths, 0)
}

// windows splits the days from from to to (both included) into windows of at most windowDays
// days.
func windows(from, to time.Time) [][2]time.Time {
	var out [][2]time.Time
	for start := from; !start.After(to); {
		end := start.AddDate(0, 0, windowDays-1)
		if end.After(to) {
			end = to
		}
		out = append(out, [2]time.Time{start, end})
		start = end.AddDate(0, 0, 1)
	}
	return out
}

// recordingsPage is one page of a recordings list: the from and to Zoom answered for, and
// the meetings.
type recordingsPage struct {
	From          string    `json:"from"`
	NextPageToken string    `json:"next_page_token"`
	Meetings      []meeting `json:"meetings"`
}

// listWindow lists the recorded meetings of path (a user's or the account's recordings) in
// window w, page by page. Should Zoom still answer from a later day than asked (it trimmed the
// range), the days it left out are asked again, so none is lost.
func (s *Source) listWindow(ctx context.Context, op, path string, w [2]time.Time) ([]meeting, error) {
	var out []meeting
	token := ""
	answered := w[0]
	for {
		var page recordingsPage
		q := url.Values{"from": {w[0].Format("2006-01-02")}, "to": {w[1].Format("2006-01-02")}, "page_size": {"300"}}
		if token != "" {
			q.Set("next_page_token", token)
		}
		if err := s.api.call(ctx, medium, op, http.MethodGet, path, q, &page); err != nil {
			return nil, err
		}
		if f, err := time.Parse("2006-01-02", page.From); err == nil && f.After(answered) {
			answered = f
		}
		out = append(out, page.Meetings...)
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if answered.After(w[0]) && !answered.After(w[1]) {
		s.warn("zoom trimmed a recordings window; listing the days it left out", "asked", w[0].Format("2006-01-02"),
			"answered", answered.Format("2006-01-02"))
		rest, err := s.listWindow(ctx, op, path, [2]time.Time{w[0], answered.AddDate(0, 0, -1)})
		if err != nil {
			return nil, err
		}
		out = append(rest, out...)
	}
	return out, nil
}

// userMeetings lists u's recorded meetings in window w. The per-user list carries no
// host_email: u's e-mail is filled in.
func (s *Source) userMeetings(ctx context.Context, u user, w [2]time.Time) ([]meeting, error) {
	ms, err := s.listWindow(ctx, "list recordings of "+u.ID, "/users/"+url.PathEscape(u.ID)+"/recordings", w)
	for i := range ms {
		if ms[i].HostEmail == "" {
			ms[i].HostEmail = u.Email
		}
	}
	return ms, err
}

// accountMeetings lists every user's recorded meetings in window w, one call a page whatever
// the number of users (GET /accounts/me/recordings, with host_email).
func (s *Source) accountMeetings(ctx context.Context, w [2]time.Time) ([]meeting, error) {
	return s.listWindow(ctx, "list the account's recordings", "/accounts/me/recordings", w)
}
