// Package teamstest is a local fake of Microsoft Graph for tests of the teams source, speaking
// its wire formats: the client-credentials token endpoint of the identity platform, users with
// @odata.nextLink paging, the getAllRecordings delta function per organizer (nextLink pages,
// a deltaLink that ends each round, tokens that expire with 410 Gone or syncStateNotFound),
// recordings and their content behind a 302 to a pre-authenticated URL, ad hoc call
// recordings (adhocCall: getAllRecordings, by date window), groups' transitive members with
// the advanced query parameters Graph requires, 429 and 503 with Retry-After, 403 when the app
// lacks a permission or the organizer an application access policy, 402 when a metered API's
// evaluation capacity is spent, and change notifications: subscriptions whose URLs are validated with the
// validationToken handshake, notifications and lifecycle notifications posted to them.
package teamstest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Credentials of the fake's one app.
const (
	TenantID     = "5f3c1a8e-7d2b-4c9a-9e61-0b4d2f8a7c35"
	ClientID     = "b1e0a6f2-3c4d-4e8f-a9b7-6d5c4b3a2f10"
	ClientSecret = "teams-client-secret~value"
)

// Application permissions the app holds unless revoked.
const (
	PermRecordings = "OnlineMeetingRecording.Read.All"
	PermUsers      = "User.Read.All"
	PermGroups     = "GroupMember.Read.All"
	// PermCallRecordings reads ad hoc calls' recordings
	// (https://learn.microsoft.com/graph/api/adhoccall-getallrecordings).
	PermCallRecordings = "CallRecordings.Read.All"
)

// User is an Entra ID user, as GET /users returns it.
type User struct {
	// ID is the object id.
	ID string `json:"id"`
	// DisplayName, Mail and UserPrincipalName are what they say (the mail is the UPN unless
	// changed).
	DisplayName       string `json:"displayName"`
	Mail              string `json:"mail"`
	UserPrincipalName string `json:"userPrincipalName"`
}

// Recording is a meeting recording with its content.
type Recording struct {
	// ID, MeetingID (a meeting's), CallID (an ad hoc call's) and ContentCorrelationID are the
	// callRecording's; Organizer is the organizer's (the caller's) object id.
	ID, MeetingID, CallID, Organizer, ContentCorrelationID string
	// Created and End are its createdDateTime and endDateTime.
	Created, End time.Time
	// Content is what the content request serves.
	Content []byte
	// Fault is "429" (Retry-After: 7), "503" (Retry-After: 120), "short" (half the body) or
	// "html" (a 200 HTML page) for the next content download.
	Fault string
	seq   int // when it was added or replaced, for delta rounds
}

// Server is the fake.
type Server struct {
	// URL is where the fake listens: the login and Graph base URL alike.
	URL string
	// Now is the fake's clock for subscriptions (default time.Now).
	Now func() time.Time
	// PageSize is the number of items a users or delta page holds (default 2).
	PageSize int
	// MaxLifetime is the longest subscription Graph accepts (default 4230 minutes).
	MaxLifetime time.Duration

	mu      sync.Mutex
	srv     *httptest.Server
	users   []*User
	groups  []*Group
	recs    []*Recording
	tokens  map[string]bool
	issued  int
	seq     int
	epoch   int    // delta tokens of an older epoch have expired
	expiry  string // how an expired token is answered: "410" or "syncStateNotFound"
	revoked map[string]bool
	policy  map[string]bool // organizers without an application access policy
	limited []string        // Retry-After values for the next API requests, answered 429
	busy    []string        // Retry-After values for the next API requests, answered 503
	subs    map[string]*Subscription
	payment bool          // content requests answer 402 PaymentRequired
	gate    chan struct{} // while paused, requests wait for it to close
	held    int           // requests that waited while paused
	// Calls counts the API requests by kind (see Count).
	Calls map[string]int
	// Downloads counts the requests of the pre-authenticated content URLs.
	Downloads int
	// DownloadsWithToken counts those that carried an Authorization header: the URL is
	// pre-authenticated, and Graph's token must never reach its host.
	DownloadsWithToken int
}

// Start serves a fake on loopback until the test ends.
func Start(t testing.TB) *Server {
	s := &Server{Now: time.Now, PageSize: 2, MaxLifetime: 4230 * time.Minute, tokens: map[string]bool{}, revoked: map[string]bool{},
		policy: map[string]bool{}, subs: map[string]*Subscription{}, Calls: map[string]int{}, expiry: "410"}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	t.Cleanup(s.Resume) // before Close, which waits for the requests held
	s.URL = s.srv.URL
	return s
}

// AddUser adds a user; id empty makes one. It returns the user.
func (s *Server) AddUser(id, displayName, mail string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" {
		id = fmt.Sprintf("0c7e%04x-58a1-4b6e-9f3d-%012x", len(s.users)+1, len(s.users)+1)
	}
	u := &User{ID: id, DisplayName: displayName, Mail: mail, UserPrincipalName: mail}
	s.users = append(s.users, u)
	return u
}

// AddRecording adds a recording of a meeting organized by organizer (a user id), created at
// created, with its content, and returns it. Its ids are built as Graph's are: the meeting id
// is the base64 of "1*<organizer>*0**19:meeting_…@thread.v2", the recording id a base64 of
// about 290 characters.
func (s *Server) AddRecording(organizer string, created time.Time, content []byte) *Recording {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	thread := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "meeting-%06d-of-%s", s.seq, organizer))
	meeting := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "1*%s*0**19:meeting_%s@thread.v2", organizer, thread))
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "V2##1%s%s0400000082%06d00E00074C5B7101A82E008000000%s##%s",
		organizer, TenantID, s.seq, "0000000000000000000000000000000100000009753c89eb72bd42bafc15dd085cf5be", thread))
	r := &Recording{ID: id, MeetingID: meeting, Organizer: organizer, Created: created.UTC(), End: created.UTC().Add(30 * time.Minute),
		ContentCorrelationID: fmt.Sprintf("b0%06d-4e62-4d1a-9c3b-8f7a6e5d4c3b", s.seq), Content: content, seq: s.seq}
	s.recs = append(s.recs, r)
	return r
}

// AddAdhocRecording adds a recording of an ad hoc call (1:1, group or PSTN call, not a
// scheduled meeting) that organizer (a user id) started, created at created, and returns it.
// Its ids look like those of https://learn.microsoft.com/graph/api/adhoccall-getallrecordings:
// a GUID callId and a base64 recording id ending in "-Recording".
func (s *Server) AddAdhocRecording(organizer string, created time.Time, content []byte) *Recording {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	call := fmt.Sprintf("fb7e5c1e-8ab8-4647-97a1-%012d", s.seq)
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "\x92\xd5b\xcc\x9b\xc6\x00\x00\x00\x9d\xf0\x8c\x94\x04\xd9[1\x19:%s_%s@unq.gbl.spaces\xa0\xd99%s-%d-Recording",
		TenantID, organizer, call, created.Unix()))
	r := &Recording{ID: id, CallID: call, Organizer: organizer, Created: created.UTC(), End: created.UTC().Add(10 * time.Minute),
		ContentCorrelationID: fmt.Sprintf("7cc3ae2a-0aa9-4e47-9d85-%012d-%s", s.seq, created.UTC().Format("20060102_150405")), Content: content, seq: s.seq}
	s.recs = append(s.recs, r)
	return r
}

// Replace gives r new content and a new creation time, as a new version of the same item,
// listed again by the next delta round.
func (s *Server) Replace(r *Recording, created time.Time, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	r.Created, r.End, r.Content, r.seq = created.UTC(), created.UTC().Add(30*time.Minute), content, s.seq
}

// Remove deletes a recording (its meeting expired).
func (s *Server) Remove(r *Recording) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.recs {
		if x == r {
			s.recs = append(s.recs[:i], s.recs[i+1:]...)
			return
		}
	}
}

// Edit changes the fake's state under its lock (faults).
func (s *Server) Edit(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// Revoke takes an application permission (PermRecordings, PermUsers) from the app: calls that
// need it answer 403.
func (s *Server) Revoke(permission string) { s.Edit(func() { s.revoked[permission] = true }) }

// NoPolicy removes the application access policy of organizer (a user id): the recordings of
// their meetings answer 403 "No application access policy found for this app".
func (s *Server) NoPolicy(organizer string) { s.Edit(func() { s.policy[organizer] = true }) }

// PaymentRequired makes every content request answer 402 PaymentRequired, "Evaluation
// capacity for the month has exceeded" (PaymentMessage), as Graph did for metered APIs past
// their evaluation quota, until called with false.
func (s *Server) PaymentRequired(on bool) { s.Edit(func() { s.payment = on }) }

// Pause holds every request (the token endpoint's and the API's; not the download URLs') until
// Resume: a request the code under test makes meanwhile waits, and is counted (Held).
func (s *Server) Pause() {
	s.Edit(func() {
		if s.gate == nil {
			s.gate = make(chan struct{})
		}
	})
}

// Resume lets the requests held by Pause through, and those after them.
func (s *Server) Resume() {
	s.Edit(func() {
		if s.gate != nil {
			close(s.gate)
			s.gate = nil
		}
	})
}

// Held counts the requests that arrived while the fake was paused.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// RateLimit answers the next API requests with 429, each with one of these Retry-After values
// ("" for none).
func (s *Server) RateLimit(retryAfter ...string) {
	s.Edit(func() { s.limited = append(s.limited, retryAfter...) })
}

// Unavailable answers the next API requests with 503, each with one of these Retry-After
// values ("" for none).
func (s *Server) Unavailable(retryAfter ...string) {
	s.Edit(func() { s.busy = append(s.busy, retryAfter...) })
}

// ExpireDeltaTokens makes every delta and skip token issued so far unusable, answered as code
// says: "410" (410 Gone) or "syncStateNotFound" (400 with that error code).
func (s *Server) ExpireDeltaTokens(code string) {
	s.Edit(func() { s.epoch, s.expiry = s.epoch+1, code })
}

// ExpireTokens makes every access token issued so far invalid (401).
func (s *Server) ExpireTokens() { s.Edit(func() { s.tokens = map[string]bool{} }) }

// TokensIssued counts the access tokens handed out.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// Count returns how many API requests of a kind (users, user, groups, members, delta, adhoc,
// recording, content, subscriptions) the fake answered.
func (s *Server) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Calls[kind]
}
