// Package meettest is a local fake of the Google Meet REST API v2 for tests, speaking its wire
// format as the v2 reference documents it: conferenceRecords.list (newest first, filtered,
// paged), conferenceRecords.get, conferenceRecords.recordings.list (oldest first, paged; states
// STARTED, ENDED, FILE_GENERATED; driveDestination), spaces.get, each visible only to the
// space's owner and the conference's participants, conference records deleted 30 days after
// they end, and the Google API error model (testdata/). It signs callers in through a Drive
// fake's token endpoint (gdrivetest: the service account, impersonation, scopes and their
// delegation), whose files the recordings point to: RecordToDrive files a recording in Drive
// as Meet does, in either layout. The real client library (google.golang.org/api/meet/v2) is
// pointed at it.
package meettest

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

// Recording states, as the Recording resource's State enum names them
// (https://developers.google.com/workspace/meet/api/reference/rest/v2/conferenceRecords.recordings#State).
const (
	// Started: "An active recording session has started."
	Started = "STARTED"
	// Ended: "This recording session has ended, but the recording file hasn't been generated yet."
	Ended = "ENDED"
	// FileGenerated: "Recording file is generated and ready to download."
	FileGenerated = "FILE_GENERATED"
)

// Retention is how long a conference record lives after its conference ends: "The resource is
// deleted 30 days after the conference ends" (ConferenceRecord.expireTime,
// https://developers.google.com/workspace/meet/api/reference/rest/v2/conferenceRecords).
const Retention = 30 * 24 * time.Hour

type space struct {
	name, code, owner string
}

type conference struct {
	name, space string
	start, end  time.Time // end zero: ongoing
	// people are the space's owner and the participants: who may list the conference and its
	// artifacts ("If you're a meeting space owner or participant, you can call the get and list
	// methods", https://developers.google.com/workspace/meet/api/guides/conferences).
	people     []string
	recordings []*recording
}

type recording struct {
	name, state string
	start, end  time.Time
	file        string // the Drive file, once generated
}

// Server is the fake.
type Server struct {
	URL string
	// Now is the clock by which conference records expire (default time.Now); set it before
	// the first request.
	Now func() time.Time

	drive  *gdrivetest.Server
	mu     sync.Mutex
	spaces map[string]*space
	confs  []*conference
	faults []int
	next   int
	// Requests counts the API requests served.
	Requests int
}

// Start serves a fake on loopback until the test ends, signing callers in through drive's
// token endpoint (its ServiceAccountJSON) and filing recordings in its Drive.
func Start(t testing.TB, drive *gdrivetest.Server) *Server {
	t.Helper()
	s := &Server{Now: time.Now, drive: drive, spaces: map[string]*space{}}
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *Server) id() string {
	s.next++
	return fmt.Sprintf("c%04dQ", s.next)
}

// Meeting holds a conference in a new space owned by organizer, attended by participants, from
// start to end (zero: still going on), and returns its name (conferenceRecords/<id>).
func (s *Server) Meeting(organizer string, participants []string, start, end time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := &space{name: "spaces/" + s.id(), owner: organizer}
	sp.code = fmt.Sprintf("abc-%04d-xyz", s.next)
	s.spaces[sp.name] = sp
	c := &conference{name: "conferenceRecords/" + s.id(), space: sp.name, start: start.UTC(), end: end.UTC(),
		people: append([]string{organizer}, participants...)}
	s.confs = append(s.confs, c)
	return c.name
}

// End ends an ongoing conference at end.
func (s *Server) End(conference string, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conf(conference).end = end.UTC()
}

// Record starts a recording of conference at start (state STARTED) and returns its name.
func (s *Server) Record(conference string, start time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conf(conference)
	r := &recording{name: c.name + "/recordings/" + s.id(), state: Started, start: start.UTC()}
	c.recordings = append(c.recordings, r)
	return r.name
}

// Stop ends a recording at end (state ENDED: no file yet).
func (s *Server) Stop(recording string, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec(recording)
	r.state, r.end = Ended, end.UTC()
}

// Generate gives an ended recording its Drive file (state FILE_GENERATED).
func (s *Server) Generate(recording, fileID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec(recording)
	r.state, r.file = FileGenerated, fileID
}

// RecordToDrive records the whole of conference (which must have ended) as Meet does: the MP4
// filed in the organizer's Drive under layout (gdrivetest.MeetRecording, named after title),
// and a FILE_GENERATED recording pointing to it. It returns the recording's name and the file's
// id.
func (s *Server) RecordToDrive(conference string, layout gdrivetest.MeetLayout, title string, content []byte) (recording, fileID string) {
	s.mu.Lock()
	c := s.conf(conference)
	people, start, end := slices.Clone(c.people), c.start, c.end
	s.mu.Unlock()
	fileID = s.drive.MeetRecording(layout, people[0], people[1:], title, content)
	recording = s.Record(conference, start)
	s.Stop(recording, end)
	s.Generate(recording, fileID)
	return recording, fileID
}

// Fail answers the next API requests with these statuses, in order: 429 as RESOURCE_EXHAUSTED,
// 5xx as INTERNAL (500) or UNAVAILABLE (503).
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	s.faults = append(s.faults, statuses...)
	s.mu.Unlock()
}

func (s *Server) conf(name string) *conference {
	for _, c := range s.confs {
		if c.name == name {
			return c
		}
	}
	panic("meettest: no conference " + name)
}

func (s *Server) rec(name string) *recording {
	for _, c := range s.confs {
		for _, r := range c.recordings {
			if r.name == name {
				return r
			}
		}
	}
	panic("meettest: no recording " + name)
}
