// Package zoomtest is a local fake of the Zoom API for tests, speaking its wire formats and
// behaving as Zoom documents (each behaviour cites its source where it is served):
// Server-to-Server OAuth (account_credentials) whose token lists its scopes, API calls refused
// without the scope they need, users by status with next_page_token paging and one user by id
// or e-mail, recordings of one user (without host_email) or of the whole account (with it) in
// from/to windows that Zoom trims to one month and that reach back six months, downloads
// answered by a redirect, 429 per second or for the day, and the failures Zoom is known for (an
// HTML page with 200, a body cut short, 503 with Retry-After). It also signs webhooks as Zoom
// does. Its answers are checked against recorded examples of Zoom's (testdata, fake_test.go).
package zoomtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials of the fake's one app.
const (
	AccountID    = "acct-Q9x"
	ClientID     = "client-zoom"
	ClientSecret = "client-secret-zoom"
)

// DefaultScopes are the scopes of the fake's app unless SetScopes says otherwise: the classic
// admin scopes to list users and recordings and to delete recording files.
const DefaultScopes = "user:read:admin recording:read:admin recording:write:admin"

// User is a Zoom user.
type User struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Status string `json:"status"`
}

// File is a recording file with its content.
type File struct {
	ID             string `json:"id"`
	MeetingID      string `json:"meeting_id"`
	RecordingStart string `json:"recording_start"`
	RecordingEnd   string `json:"recording_end"`
	FileType       string `json:"file_type"`
	FileExtension  string `json:"file_extension"`
	FileSize       int64  `json:"file_size"`
	PlayURL        string `json:"play_url"`
	DownloadURL    string `json:"download_url"`
	Status         string `json:"status"`
	RecordingType  string `json:"recording_type"`
	Content        []byte `json:"-"`
	// Fault is the answer to the next download instead of the file: "html" (a 200 HTML page,
	// as while the recording is still processing), "short" (half the body, as with a token
	// expiring mid-download), "503" (Service Unavailable with Retry-After: 120), "402" (payment
	// required), "403" (no permission), "403-licence" (a 403 saying the host has no licence) or
	// "daily" (429: the account's daily limit is spent until 00:00 UTC).
	Fault string `json:"-"`
	// Always is such a fault for every download until it is cleared.
	Always string `json:"-"`
}

// Meeting is a recorded meeting. HostEmail is sent by the account-wide listing and webhooks
// only: the per-user listing leaves it out, as Zoom does.
type Meeting struct {
	UUID           string  `json:"uuid"`
	ID             int64   `json:"id"`
	AccountID      string  `json:"account_id"`
	HostID         string  `json:"host_id"`
	HostEmail      string  `json:"host_email,omitempty"`
	Topic          string  `json:"topic"`
	Type           int     `json:"type"`
	StartTime      string  `json:"start_time"`
	Timezone       string  `json:"timezone"`
	Duration       int     `json:"duration"`
	TotalSize      int64   `json:"total_size"`
	RecordingCount int     `json:"recording_count"`
	ShareURL       string  `json:"share_url"`
	RecordingFiles []*File `json:"recording_files"`
}

// Window is one recordings listing the fake was asked for: the path and the from and to it
// was sent, and those it answered (Zoom trims a range longer than a month).
type Window struct {
	Path, From, To           string
	AnsweredFrom, AnsweredTo string
}

// Server is the fake.
type Server struct {
	URL string

	mu         sync.Mutex
	now        func() time.Time
	scopes     string
	users      []*User
	meetings   []*Meeting
	tokens     map[string]string // token → its scopes
	limited    []string          // Retry-After values for the next API requests, each answered 429
	dailyLeft  int               // API requests left before the daily limit; < 0: none
	dailyUntil time.Time         // the daily limit holds until then
	next       int
	issued     int
	Deleted    []string // raw paths of DELETE requests that deleted, as received
	Downloads  int
	Calls      map[string]int // API requests by kind: users, user, recordings, account recordings, delete
	asked      []Window       // every recordings listing, in order
}

// Start serves a fake on loopback until the test ends.
func Start(t testing.TB) *Server {
	s := &Server{tokens: map[string]string{}, Calls: map[string]int{}, now: time.Now, scopes: DefaultScopes, dailyLeft: -1}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// SetNow sets the fake's clock (default time.Now): the six months recordings are listed for,
// the day a daily limit ends.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	s.now = now
	s.mu.Unlock()
}

// SetScopes sets the scopes (space-separated, as the token's scope field) of the tokens issued
// from now on.
func (s *Server) SetScopes(scopes string) {
	s.mu.Lock()
	s.scopes = scopes
	s.mu.Unlock()
}

// DailyLimit makes the account's daily limit run out after n more API requests: every later
// one is answered 429 (X-RateLimit-Type: Daily-limit) until 00:00 UTC of the next day by the
// fake's clock.
func (s *Server) DailyLimit(n int) {
	s.mu.Lock()
	s.dailyLeft, s.dailyUntil = n, time.Time{}
	s.mu.Unlock()
}

// AddUser adds a user (status active, inactive or pending).
func (s *Server) AddUser(id, email, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, &User{ID: id, Email: email, Status: status})
}

// AddMeeting adds a meeting hosted by host (a user id) with the given files (type → content);
// uuid may be given to test encodings, else one is made. It returns the meeting.
func (s *Server) AddMeeting(host, uuid, topic string, start time.Time, files map[string][]byte) *Meeting {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	if uuid == "" {
		uuid = base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("meeting-%04d", s.next)))
	}
	m := &Meeting{UUID: uuid, ID: 80000000000 + int64(s.next), AccountID: AccountID, HostID: host, Topic: topic, Type: 2,
		StartTime: start.UTC().Format(time.RFC3339), Timezone: "Europe/Berlin", Duration: 30,
		ShareURL: s.URL + "/rec/share/" + strconv.Itoa(s.next)}
	for _, u := range s.users {
		if u.ID == host {
			m.HostEmail = u.Email
		}
	}
	for _, typ := range []string{"MP4", "M4A", "TRANSCRIPT", "CHAT"} {
		content, ok := files[typ]
		if !ok {
			continue
		}
		id := fmt.Sprintf("file-%d-%s", s.next, strings.ToLower(typ))
		rt := map[string]string{"MP4": "shared_screen_with_speaker_view", "M4A": "audio_only", "TRANSCRIPT": "audio_transcript", "CHAT": "chat_file"}[typ]
		ext := map[string]string{"TRANSCRIPT": "VTT", "CHAT": "TXT"}[typ]
		if ext == "" {
			ext = typ
		}
		m.RecordingFiles = append(m.RecordingFiles, &File{ID: id, MeetingID: uuid, FileType: typ, FileExtension: ext,
			RecordingStart: m.StartTime, RecordingEnd: start.UTC().Add(30 * time.Minute).Format(time.RFC3339),
			FileSize: int64(len(content)), DownloadURL: s.URL + "/rec/download/" + id, PlayURL: s.URL + "/rec/play/" + id,
			Status: "completed", RecordingType: rt, Content: content})
		m.TotalSize += int64(len(content))
		m.RecordingCount++
	}
	s.meetings = append(s.meetings, m)
	return m
}

// File returns a meeting's file of the given type.
func (m *Meeting) File(typ string) *File {
	for _, f := range m.RecordingFiles {
		if f.FileType == typ {
			return f
		}
	}
	return nil
}

// Edit changes the fake's state under its lock (file status, faults).
func (s *Server) Edit(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// RateLimit answers the next API requests with 429 (per second), each with one of these
// Retry-After values (seconds or an HTTP date; "" for none).
func (s *Server) RateLimit(retryAfter ...string) {
	s.mu.Lock()
	s.limited = append(s.limited, retryAfter...)
	s.mu.Unlock()
}

// TokensIssued counts the OAuth tokens the fake has handed out.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// ExpireTokens makes every token issued so far invalid (401 code 124).
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	s.tokens = map[string]string{}
	s.mu.Unlock()
}

// Windows returns the recordings listings asked so far.
func (s *Server) Windows() []Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Window(nil), s.asked...)
}

// RecordingCompleted is the recording.completed event for m, as Zoom sends it (with the
// host's e-mail when the host is a user of the fake).
func RecordingCompleted(m *Meeting, downloadToken string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"event": "recording.completed", "event_ts": at.UnixMilli(),
		"payload": map[string]any{"account_id": m.AccountID, "object": m}, "download_token": downloadToken})
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// zoomError answers Zoom's error body, {"code": …, "message": …}: "If you receive an error
// status code, check the body for an error code and message"
// (https://developers.zoom.us/docs/api/errors/).
func zoomError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

func pageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o" + strconv.Itoa(offset)))
}

func offsetOf(tok string) (int, bool) {
	if tok == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 2 || b[0] != 'o' {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[1:]))
	return n, err == nil
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

// pageSize reads page_size: 30 by default, at most 300.
func pageSize(v string) int {
	size, _ := strconv.Atoi(v)
	if size <= 0 || size > 300 {
		return 30
	}
	return size
}
