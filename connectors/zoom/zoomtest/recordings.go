package zoomtest

import (
	"cmp"
	"net/http"
	"net/url"
	"time"
)

// listingMonths is how far back recordings are listed: "You can get recordings up to 6 months
// in the past, using one month increments with the to and from query params" (Zoom,
// https://devforum.zoom.us/t/retrieve-all-past-zoom-cloud-recordings/22487); of the account's
// list, "The month should fall within the past six months period from the date of query"
// (List recordings of an account). Older meetings are left out of the answer, without an error.
const listingMonths = 6

// window reads from and to (yyyy-mm-dd, UTC; by default today and tomorrow: "if you make
// the API request on June 30, 2020, without providing the from and to parameters, by default
// the value of 'from' field will be 2020-06-30 and the value of the 'to' field will be
// 2020-07-01") and trims the range as Zoom does. "The maximum range can be a month" (List all
// recordings, from,
// https://developers.zoom.us/docs/api/meetings/#tag/cloud-recording/GET/users/{userId}/recordings),
// and a longer range is no error: Zoom keeps to and moves from to one month before it, and says
// so in the answer's from: from=2017-08-02&to=2018-04-09 was answered "from": "2018-03-09"
// (https://github.com/zoom/api/issues/36). Where the day does not exist in the earlier month,
// the fake takes the stricter reading (Go's: March 31 less a month is March 3), so a window the
// fake answers whole is answered whole by any reading of "a month".
func window(q url.Values, now time.Time) (from, to time.Time, ok bool) {
	today := now.UTC().Format("2006-01-02")
	from, err1 := time.Parse("2006-01-02", cmp.Or(q.Get("from"), today))
	to, err2 := time.Parse("2006-01-02", cmp.Or(q.Get("to"), now.UTC().AddDate(0, 0, 1).Format("2006-01-02")))
	if err1 != nil || err2 != nil || to.Before(from) {
		return time.Time{}, time.Time{}, false
	}
	if monthBefore := to.AddDate(0, -1, 0); from.Before(monthBefore) {
		from = monthBefore
	}
	return from, to, true
}

// recordingsPage is the answer of both recordings lists (testdata/user-recordings.json,
// testdata/account-recordings.json).
type recordingsPage struct {
	From          string    `json:"from"`
	To            string    `json:"to"`
	PageCount     int       `json:"page_count"`
	PageSize      int       `json:"page_size"`
	TotalRecords  int       `json:"total_records"`
	NextPageToken string    `json:"next_page_token"`
	Meetings      []Meeting `json:"meetings"`
}

// listRecordings answers a recordings list of the meetings keep selects (copies, which it may
// change; called with the lock held), started within the (trimmed) window and the last six
// months.
func (s *Server) listRecordings(w http.ResponseWriter, r *http.Request, keep func(m *Meeting) bool) {
	q := r.URL.Query()
	s.mu.Lock()
	now := s.now().UTC()
	s.mu.Unlock()
	from, to, ok := window(q, now)
	if !ok {
		zoomError(w, http.StatusBadRequest, 300, "Invalid from or to: want yyyy-mm-dd, to not before from.")
		return
	}
	size := pageSize(q.Get("page_size"))
	off, ok := offsetOf(q.Get("next_page_token"))
	if !ok {
		zoomError(w, http.StatusBadRequest, 300, "The next page token is invalid or expired.")
		return
	}
	s.mu.Lock()
	oldest := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, -listingMonths, 0)
	s.asked = append(s.asked, Window{Path: r.URL.Path, From: q.Get("from"), To: q.Get("to"),
		AnsweredFrom: from.Format("2006-01-02"), AnsweredTo: to.Format("2006-01-02")})
	match := []Meeting{}
	for _, m := range s.meetings {
		start, _ := time.Parse(time.RFC3339, m.StartTime)
		if start.Before(from) || !start.Before(to.AddDate(0, 0, 1)) || start.Before(oldest) {
			continue
		}
		c := *m
		if keep(&c) {
			match = append(match, c)
		}
	}
	s.mu.Unlock()
	page, next := paginate(match, off, size)
	writeJSON(w, http.StatusOK, recordingsPage{From: from.Format("2006-01-02"), To: to.Format("2006-01-02"),
		PageCount: (len(match) + size - 1) / size, PageSize: size, TotalRecords: len(match), NextPageToken: next, Meetings: page})
}

// userRecordings answers GET /users/{userId}/recordings: the meetings that user hosted. Its
// meetings carry no host_email (List all recordings: the response's meetings[] has host_id
// only; testdata/user-recordings.json), or 404 code 1001 for an unknown user.
func (s *Server) userRecordings(w http.ResponseWriter, r *http.Request, parts []string) {
	id, _ := url.PathUnescape(parts[1])
	s.mu.Lock()
	host := s.findUser(id)
	s.mu.Unlock()
	if host == nil {
		zoomError(w, http.StatusNotFound, 1001, "User does not exist: "+id+".")
		return
	}
	s.listRecordings(w, r, func(m *Meeting) bool {
		m.HostEmail = ""
		return m.HostID == host.ID
	})
}

// accountRecordings answers GET /accounts/{accountId}/recordings ("me" for the app's own
// account): every user's meetings, each with host_email (List recordings of an account,
// https://developers.zoom.us/docs/api/meetings/#tag/cloud-recording/GET/accounts/{accountId}/recordings;
// testdata/account-recordings.json), the host's as the account has it now.
func (s *Server) accountRecordings(w http.ResponseWriter, r *http.Request, parts []string) {
	if id, _ := url.PathUnescape(parts[1]); id != "me" && id != AccountID {
		zoomError(w, http.StatusNotFound, 2001, "Account does not exist: "+id+".")
		return
	}
	s.listRecordings(w, r, func(m *Meeting) bool {
		if u := s.findUser(m.HostID); u != nil {
			m.HostEmail = u.Email
		}
		return true
	})
}
