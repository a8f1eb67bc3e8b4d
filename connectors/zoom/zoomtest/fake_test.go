package zoomtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// recorded is one of Zoom's answers kept in testdata (see testdata/README.md).
type recorded struct {
	Doc     string            `json:"doc"`
	Request map[string]string `json:"request"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    any               `json:"body"`
}

func load(t *testing.T, name string) recorded {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r recorded
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// answer is what the fake answered.
type answer struct {
	status int
	header http.Header
	body   any
}

func (s *Server) ask(t *testing.T, method, path string, scopes ...string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, nil)
	if !strings.HasPrefix(path, "/oauth/") {
		req.Header.Set("Authorization", "Bearer "+s.issue(t, scopes...))
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s %s answered no JSON: %s", req.Method, req.URL.Path, b)
		}
	}
	return answer{resp.StatusCode, resp.Header, body}
}

// issue gets a token (of the given scopes, when some are named) as the bridge does.
func (s *Server) issue(t *testing.T, scopes ...string) string {
	t.Helper()
	if len(scopes) > 0 {
		s.SetScopes(strings.Join(scopes, " "))
		defer s.SetScopes(DefaultScopes)
	}
	a := s.tokenAnswer(t)
	return a.body.(map[string]any)["access_token"].(string)
}

func (s *Server) tokenAnswer(t *testing.T) answer {
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/token", strings.NewReader(url.Values{
		"grant_type": {"account_credentials"}, "account_id": {AccountID}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(ClientID, ClientSecret)
	return do(t, req)
}

// kind is a JSON value's type, as the shape compares them.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// sameShape reports how got differs from want. exact: a field of want missing or of another
// type in got, or a field of got that want does not have; else (a subset) only a field of got
// that want does not have or has with another type. Objects are compared field by field,
// arrays by their first elements.
func sameShape(path string, got, want any, exact bool) []string {
	if kind(got) != kind(want) {
		return []string{fmt.Sprintf("%s is %s, Zoom answers %s", path, kind(got), kind(want))}
	}
	var diffs []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, wv := range w {
			if gv, ok := g[k]; ok {
				diffs = append(diffs, sameShape(path+"."+k, gv, wv, exact)...)
			} else if exact {
				diffs = append(diffs, fmt.Sprintf("%s.%s is missing", path, k))
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s is not in Zoom's answer", path, k))
			}
		}
	case []any:
		g := got.([]any)
		if len(w) > 0 && len(g) > 0 {
			diffs = append(diffs, sameShape(path+"[0]", g[0], w[0], exact)...)
		}
	}
	slices.Sort(diffs)
	return diffs
}

// check compares an answer with a recorded one: status, the recorded headers (names, and
// values where fixed is set), and the body's shape.
func check(t *testing.T, name string, got answer, exact bool, fixed ...string) {
	t.Helper()
	want := load(t, name)
	if want.Status != 0 && got.status != want.Status {
		t.Errorf("%s: status %d, Zoom answers %d", name, got.status, want.Status)
	}
	for h, v := range want.Headers {
		switch g := got.header.Get(h); {
		case g == "":
			t.Errorf("%s: no %s header, Zoom sends %q", name, h, v)
		case slices.Contains(fixed, h) && g != v:
			t.Errorf("%s: %s: %q, Zoom sends %q", name, h, g, v)
		}
	}
	for _, d := range sameShape("body", got.body, want.Body, exact) {
		t.Errorf("%s (%s): %s", name, want.Doc, d)
	}
}

// recordingsFake holds users u1 (active) and u2 and one meeting each, on the day of the clock.
func recordingsFake(t *testing.T, now time.Time) *Server {
	s := Start(t)
	s.SetNow(func() time.Time { return now })
	s.AddUser("u1", "sam@example.com", "active")
	s.AddUser("u2", "kim@example.com", "inactive")
	s.AddMeeting("u1", "", "Board meeting", now.Add(-time.Hour), map[string][]byte{"M4A": []byte("audio")})
	s.AddMeeting("u2", "", "Sales review", now.Add(-time.Hour), map[string][]byte{"MP4": []byte("video")})
	return s
}

// TestAnswersHaveZoomsShape: each answer of the fake has the fields, types, status and
// headers of Zoom's recorded answer (testdata); the recordings lists exactly so (the per-user
// list has no host_email, the account's has it), the users' a subset of Zoom's fields.
func TestAnswersHaveZoomsShape(t *testing.T) {
	now := time.Date(2024, 5, 28, 12, 0, 0, 0, time.UTC)
	s := recordingsFake(t, now)
	window := "?from=2024-05-01&to=2024-05-28"
	for _, tc := range []struct {
		file  string
		got   answer
		exact bool
		fixed []string
	}{
		{"token.json", s.tokenAnswer(t), true, nil},
		{"user-recordings.json", s.ask(t, "GET", "/v2/users/u1/recordings"+window), true, nil},
		{"account-recordings.json", s.ask(t, "GET", "/v2/accounts/me/recordings"+window), true, nil},
		{"users.json", s.ask(t, "GET", "/v2/users?status=active&page_size=300"), false, nil},
		{"user.json", s.ask(t, "GET", "/v2/users/sam@example.com"), false, nil},
		{"user-not-found.json", s.ask(t, "GET", "/v2/users/nobody@example.com"), true, nil},
		{"missing-scope.json", s.ask(t, "GET", "/v2/accounts/me/recordings"+window, "user:read:admin"), true, nil},
	} {
		check(t, tc.file, tc.got, tc.exact, tc.fixed...)
	}
	// The fields of users the fake answers are Zoom's, and the bridge's are there.
	u := s.ask(t, "GET", "/v2/users?status=active").body.(map[string]any)["users"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "email", "status"} {
		if _, ok := u[k]; !ok {
			t.Errorf("GET /users: a user has no %s", k)
		}
	}
	if tok := s.tokenAnswer(t).body.(map[string]any); tok["scope"] != DefaultScopes {
		t.Errorf("token scope = %q, want the app's scopes %q, space-separated", tok["scope"], DefaultScopes)
	}
}

// TestWebhookHasZoomsShape: RecordingCompleted is the event Zoom sends, with host_email and
// download_token.
func TestWebhookHasZoomsShape(t *testing.T) {
	s := recordingsFake(t, time.Now())
	m := s.AddMeeting("u1", "", "Weekly sync", time.Now(), map[string][]byte{"M4A": []byte("a")})
	var got any
	json.Unmarshal(RecordingCompleted(m, "dl-x", time.Now()), &got)
	check(t, "recording-completed.json", answer{body: got}, true)
}

// TestRangeOverAMonthIsTrimmed: a range longer than a month is answered from a month before
// its end, saying so in from (as Zoom answered in zoom/api#36), and leaves out what it trimmed;
// 28 days, both ends included, are answered whole whatever the months.
func TestRangeOverAMonthIsTrimmed(t *testing.T) {
	rec := load(t, "trimmed-window.json")
	now := time.Date(2018, 4, 9, 12, 0, 0, 0, time.UTC)
	s := Start(t)
	s.SetNow(func() time.Time { return now })
	s.AddUser("u1", "sam@example.com", "active")
	s.AddMeeting("u1", "", "trimmed away", time.Date(2018, 3, 8, 10, 0, 0, 0, time.UTC), map[string][]byte{"M4A": []byte("a")})
	s.AddMeeting("u1", "", "kept", time.Date(2018, 3, 9, 10, 0, 0, 0, time.UTC), map[string][]byte{"M4A": []byte("a")})
	a := s.ask(t, "GET", "/v2/users/u1/recordings?from="+rec.Request["from"]+"&to="+rec.Request["to"])
	body := a.body.(map[string]any)
	want := rec.Body.(map[string]any)
	if body["from"] != want["from"] || body["to"] != want["to"] {
		t.Errorf("from %s to %s answered from %v to %v, Zoom answered from %v to %v (%s)",
			rec.Request["from"], rec.Request["to"], body["from"], body["to"], want["from"], want["to"], rec.Doc)
	}
	if ms := body["meetings"].([]any); len(ms) != 1 || ms[0].(map[string]any)["topic"] != "kept" {
		t.Errorf("trimmed range listed %v, want only the meeting on the answered from", ms)
	}
	for _, tc := range []struct{ from, to, answered string }{
		{"2018-01-31", "2018-02-27", "2018-01-31"}, // 28 days across February
		{"2018-02-01", "2018-02-28", "2018-02-01"},
		{"2018-03-04", "2018-03-31", "2018-03-04"},
		{"2018-01-31", "2018-03-02", "2018-02-02"}, // a "month" of 31 days from January 31: trimmed
		{"2018-02-28", "2018-03-31", "2018-03-03"}, // March 31 less a month, the stricter reading
	} {
		got := s.ask(t, "GET", "/v2/accounts/me/recordings?from="+tc.from+"&to="+tc.to).body.(map[string]any)["from"]
		if got != tc.answered {
			t.Errorf("from %s to %s answered from %v, want %s", tc.from, tc.to, got, tc.answered)
		}
	}
}

// TestSixMonthsBack: meetings older than six months are left out of both lists, without an
// error.
func TestSixMonthsBack(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s := Start(t)
	s.SetNow(func() time.Time { return now })
	s.AddUser("u1", "sam@example.com", "active")
	s.AddMeeting("u1", "", "old", now.AddDate(0, -7, 0), map[string][]byte{"M4A": []byte("a")})
	s.AddMeeting("u1", "", "recent", now.AddDate(0, -5, 0), map[string][]byte{"M4A": []byte("a")})
	for _, path := range []string{"/v2/users/u1/recordings", "/v2/accounts/me/recordings"} {
		for _, w := range [][2]time.Time{{now.AddDate(0, -7, -3), now.AddDate(0, -7, 3)}, {now.AddDate(0, -5, -3), now.AddDate(0, -5, 3)}} {
			a := s.ask(t, "GET", path+"?from="+w[0].Format("2006-01-02")+"&to="+w[1].Format("2006-01-02"))
			n := len(a.body.(map[string]any)["meetings"].([]any))
			if want := map[bool]int{true: 0, false: 1}[w[0].Before(now.AddDate(0, -6, 0))]; a.status != 200 || n != want {
				t.Errorf("%s %s..%s = %d with %d meetings, want 200 with %d", path, w[0].Format("2006-01-02"), w[1].Format("2006-01-02"), a.status, n, want)
			}
		}
	}
}

// TestRateLimitsHaveZoomsShape: a spent daily limit is answered 429 with Zoom's headers, a
// Retry-After of the next 00:00 UTC, until then; per second, 429 with X-RateLimit-Type QPS.
func TestRateLimitsHaveZoomsShape(t *testing.T) {
	now := time.Date(2024, 5, 28, 12, 0, 0, 0, time.UTC)
	s := recordingsFake(t, now)
	s.RateLimit("1")
	check(t, "qps-limit.json", s.ask(t, "GET", "/v2/users?status=active"), true, "X-RateLimit-Type")
	s.DailyLimit(1)
	if a := s.ask(t, "GET", "/v2/users?status=active"); a.status != 200 {
		t.Fatalf("the request before the limit = %d", a.status)
	}
	a := s.ask(t, "GET", "/v2/users?status=active")
	check(t, "daily-limit.json", a, true, "X-RateLimit-Type", "X-RateLimit-Remaining")
	if ra := a.header.Get("Retry-After"); ra != "2024-05-29T00:00:00Z" {
		t.Errorf("Retry-After = %q, want the next 00:00 UTC as Zoom writes it (2024-05-29T00:00:00Z)", ra)
	}
	s.SetNow(func() time.Time { return now.Add(12 * time.Hour) })
	if a := s.ask(t, "GET", "/v2/users?status=active"); a.status != 200 {
		t.Errorf("after 00:00 UTC the API answered %d, want the limit reset", a.status)
	}
}

// TestScopesAreEnforced: each endpoint needs one of its scopes (classic or granular); DELETE
// of a recording file without recording:write:admin or cloud_recording:delete:recording_file:admin
// is refused with 4711 and nothing is deleted.
func TestScopesAreEnforced(t *testing.T) {
	s := recordingsFake(t, time.Now())
	m := s.AddMeeting("u1", "Kj4+85/487Q==", "to trash", time.Now(), map[string][]byte{"M4A": []byte("a")})
	del := "/v2/meetings/" + url.QueryEscape(m.UUID) + "/recordings/" + m.File("M4A").ID + "?action=trash"
	for _, tc := range []struct {
		method, path string
		scopes       []string
		want         int
	}{
		{"GET", "/v2/users/u1/recordings", []string{"cloud_recording:read:list_user_recordings:admin"}, 200},
		{"GET", "/v2/users/u1/recordings", []string{"user:read:admin"}, 400},
		{"GET", "/v2/accounts/me/recordings", []string{"cloud_recording:read:list_account_recordings:admin"}, 200},
		{"GET", "/v2/users", []string{"recording:read:admin"}, 400},
		{"DELETE", del, []string{"user:read:admin", "recording:read:admin"}, 400},
		{"DELETE", del, []string{"cloud_recording:delete:recording_file:admin"}, 204},
	} {
		a := s.ask(t, tc.method, tc.path, tc.scopes...)
		if a.status != tc.want {
			t.Errorf("%s %s with %v = %d, want %d", tc.method, tc.path, tc.scopes, a.status, tc.want)
		}
		if a.status == 400 {
			check(t, "missing-scope.json", a, true)
		}
	}
	if len(s.Deleted) != 1 {
		t.Errorf("deleted %v, want the one DELETE with the scope", s.Deleted)
	}
}
