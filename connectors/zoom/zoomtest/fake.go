// Package zoomtest is a local fake of the Zoom API for tests, speaking its wire formats:
// Server-to-Server OAuth (account_credentials), users by status with next_page_token paging,
// recordings per user in at-most-one-month windows, downloads answered by a redirect, and the
// failures Zoom is known for (an HTML page with 200, a body cut short, 429 with Retry-After,
// 503).
// It also signs webhooks as Zoom does.
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

// User is a Zoom user.
type User struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Status string `json:"status"`
}

// File is a recording file with its content.
type File struct {
	ID            string `json:"id"`
	MeetingID     string `json:"meeting_id"`
	FileType      string `json:"file_type"`
	FileExtension string `json:"file_extension"`
	FileSize      int64  `json:"file_size"`
	DownloadURL   string `json:"download_url"`
	PlayURL       string `json:"play_url"`
	Status        string `json:"status"`
	RecordingType string `json:"recording_type"`
	Content       []byte `json:"-"`
	// Fault is "html" (a 200 HTML page, as while the recording is still processing), "short"
	// (half the body, as with a token expiring mid-download) or "503" (Service Unavailable with
	// Retry-After: 120) for the next download.
	Fault string `json:"-"`
	// Always is such a fault for every download until it is cleared.
	Always string `json:"-"`
}

// Meeting is a recorded meeting.
type Meeting struct {
	UUID           string  `json:"uuid"`
	ID             int64   `json:"id"`
	AccountID      string  `json:"account_id"`
	HostID         string  `json:"host_id"`
	HostEmail      string  `json:"host_email"`
	Topic          string  `json:"topic"`
	StartTime      string  `json:"start_time"`
	Timezone       string  `json:"timezone"`
	Duration       int     `json:"duration"`
	TotalSize      int64   `json:"total_size"`
	RecordingCount int     `json:"recording_count"`
	RecordingFiles []*File `json:"recording_files"`
}

// Server is the fake.
type Server struct {
	URL string

	mu        sync.Mutex
	users     []*User
	meetings  []*Meeting
	tokens    map[string]bool
	limited   []string // Retry-After values for the next API requests, each answered 429
	next      int
	issued    int
	Deleted   []string // raw paths of DELETE requests, as received
	Downloads int
	Calls     map[string]int // API requests by path pattern
}

// Start serves a fake on loopback until the test ends.
func Start(t testing.TB) *Server {
	s := &Server{tokens: map[string]bool{}, Calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
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
	m := &Meeting{UUID: uuid, ID: 80000000000 + int64(s.next), AccountID: AccountID, HostID: host, Topic: topic,
		StartTime: start.UTC().Format(time.RFC3339), Timezone: "Europe/Berlin", Duration: 30}
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

// RateLimit answers the next API requests with 429, each with one of these Retry-After values
// (seconds or an HTTP date; "" for none).
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
	s.tokens = map[string]bool{}
	s.mu.Unlock()
}

// RecordingCompleted is the recording.completed event for m, as Zoom sends it.
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
