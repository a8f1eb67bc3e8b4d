package meet_test

import (
	"context"
	"io"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/connectortest"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
	"github.com/transcript-bridge/bridge/connectors/meet"
	"github.com/transcript-bridge/bridge/connectors/meet/meettest"
)

const (
	sam = "sam@acme.test"
	kim = "kim@acme.test"
)

// t0 is "now" in these tests; meetings happen in the days before.
var t0 = time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)

// clock is a settable Now, shared by the source and the fake.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func start(t *testing.T) (*meettest.Server, *gdrivetest.Server, *clock) {
	drv := gdrivetest.Start(t)
	fake := meettest.Start(t, drv)
	clk := &clock{t: t0}
	fake.Now = clk.now
	return fake, drv, clk
}

func newSource(t *testing.T, fake *meettest.Server, drv *gdrivetest.Server, clk *clock, cfg meet.Config) *meet.Source {
	t.Helper()
	cfg.Credentials, cfg.APIURL, cfg.DriveURL, cfg.MinBackoff, cfg.Now = drv.ServiceAccountJSON(), fake.URL, drv.URL, time.Millisecond, clk.now
	if cfg.Users == nil {
		cfg.Users = []string{sam}
	}
	src, err := meet.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func list(t *testing.T, src *meet.Source, cursor string) ([]connectors.Recording, string) {
	t.Helper()
	recs, next, err := src.List(context.Background(), cursor)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs, next
}

func read(t *testing.T, src *meet.Source, r connectors.Recording) string {
	t.Helper()
	rc, err := src.Open(context.Background(), r)
	if err != nil {
		t.Fatalf("Open(%s): %v", r.ItemID, err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// fixture holds a meeting per item, its recording filed in the organizer's Drive.
type fixture struct {
	fake  *meettest.Server
	drv   *gdrivetest.Server
	files map[string]string
	n     int
}

func (f *fixture) Put(t *testing.T, name string, data []byte) {
	if id, ok := f.files[name]; ok {
		f.drv.Update(id, data)
		return
	}
	f.n++
	at := t0.Add(-time.Duration(f.n) * 24 * time.Hour)
	conf := f.fake.Meeting(sam, []string{kim}, at, at.Add(time.Hour))
	_, f.files[name] = f.fake.RecordToDrive(conf, gdrivetest.FolderLayout, strings.TrimSuffix(name, path.Ext(name)), data)
}

// Remove throws the recording's file away in Drive (to the trash); Meet still lists the
// recording.
func (f *fixture) Remove(t *testing.T, name string) { f.drv.Trash(f.files[name]) }
func (f *fixture) Settle(*testing.T)                {}

// Listed is the name of a Meet recording's file: the meeting's, then " - Recording", with the
// extension of its type (video/mp4).
func (f *fixture) Listed(name string) string {
	return strings.TrimSuffix(name, path.Ext(name)) + " - Recording.mp4"
}

// TestSuite (issue 34, point 3): the meet source passes the shared connector suite.
func TestSuite(t *testing.T) {
	connectortest.Run(t, func(t *testing.T) (connectors.Source, connectortest.Fixture) {
		fake, drv, clk := start(t)
		return newSource(t, fake, drv, clk, meet.Config{}), &fixture{fake: fake, drv: drv, files: map[string]string{}}
	})
}

// TestRecordingsOfTheUsersMeetings (issue 34, point 3): the conferences the users organized or
// attended are listed over pages, filtered by end_time from start_date; each generated
// recording is listed once whichever users were in it, as its Drive file (the organizer its
// owner, read as them), with the conference record and its space in the metadata; a recording
// not generated yet waits for a later sweep, and a later sweep reads no conference again.
func TestRecordingsOfTheUsersMeetings(t *testing.T) {
	fake, drv, clk := start(t)
	for i := range 101 { // a page and more of meetings without recordings
		at := t0.Add(-48*time.Hour + time.Duration(i)*time.Minute)
		fake.Meeting(kim, nil, at, at.Add(time.Minute))
	}
	old := fake.Meeting(sam, []string{kim}, t0.Add(-20*24*time.Hour), t0.Add(-20*24*time.Hour+time.Hour))
	fake.RecordToDrive(old, gdrivetest.LegacyLayout, "Kickoff (2026-07-31 12:00 GMT)", []byte("before start_date"))
	standup := fake.Meeting(sam, []string{kim}, t0.Add(-5*time.Hour), t0.Add(-4*time.Hour))
	_, file := fake.RecordToDrive(standup, gdrivetest.FolderLayout, "Standup (2026-08-20 07:00 GMT)", []byte("standup"))
	review := fake.Meeting(sam, []string{kim}, t0.Add(-3*time.Hour), t0.Add(-2*time.Hour))
	pending := fake.Record(review, t0.Add(-3*time.Hour))
	fake.Stop(pending, t0.Add(-2*time.Hour))

	src := newSource(t, fake, drv, clk, meet.Config{Users: []string{kim, sam}, StartDate: "2026-08-15"})
	recs, cursor := list(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("first sweep = %+v, want the standup's recording alone (once for two users)", recs)
	}
	r := recs[0]
	if r.ItemID != file || r.Owner == nil || r.Owner.Email != sam || r.Fields["subject"] != sam || r.SourceExternalID != "gdrive:"+file ||
		r.DedupeKey != "gdrive:"+file+"@"+r.Version || r.Name != "Standup (2026-08-20 07:00 GMT) - Recording.mp4" {
		t.Errorf("recording = %+v, want Drive file %s owned by its organizer %s, read as them, keyed as the gdrive source keys it", r, file, sam)
	}
	if r.Metadata["conference_record"] != standup || !strings.HasPrefix(r.Metadata["space"], "spaces/") || r.Metadata["meeting_code"] == "" {
		t.Errorf("metadata = %v, want the conference record %s, its space and meeting code", r.Metadata, standup)
	}
	if got := read(t, src, r); got != "standup" {
		t.Errorf("Open read %q", got)
	}

	clk.t = clk.t.Add(10 * time.Minute)
	before := fake.Requests
	if recs, cursor = list(t, src, cursor); len(recs) != 0 {
		t.Errorf("a sweep with nothing new = %+v", recs)
	}
	if n := fake.Requests - before; n > 4 {
		t.Errorf("a sweep with nothing new made %d Meet requests; want a listing per user and the waiting conference's recordings", n)
	}

	clk.t = clk.t.Add(2 * time.Hour) // the review ended before this sweep's window: it is read as waiting
	id := drv.MeetRecording(gdrivetest.FolderLayout, sam, []string{kim}, "Review (2026-08-20 09:00 GMT)", []byte("review"))
	fake.Generate(pending, id)
	recs, _ = list(t, src, cursor)
	if len(recs) != 1 || recs[0].ItemID != id || recs[0].Metadata["conference_record"] != review {
		t.Errorf("sweep after the file was generated = %+v, want the review's recording %s", recs, id)
	}
}

// TestUnreadableFilesAreUnavailable: a generated recording whose Drive file the user cannot
// read is listed unavailable with the reason, unless another user (the organizer) read it; a
// file in the trash is left out.
func TestUnreadableFilesAreUnavailable(t *testing.T) {
	fake, drv, clk := start(t)
	conf := fake.Meeting(sam, []string{kim}, t0.Add(-2*time.Hour), t0.Add(-time.Hour))
	_, file := fake.RecordToDrive(conf, gdrivetest.FolderLayout, "Standup (2026-08-20 10:00 GMT)", []byte("x"))
	drv.Unshare(file, kim)
	recs, _ := list(t, newSource(t, fake, drv, clk, meet.Config{Users: []string{kim}}), "")
	if len(recs) != 1 || recs[0].Unavailable == "" || !strings.Contains(recs[0].Unavailable, "add the meeting's organizer to users") {
		t.Errorf("kim's sweep = %+v, want the recording unavailable, saying why", recs)
	}
	recs, _ = list(t, newSource(t, fake, drv, clk, meet.Config{Users: []string{kim, sam}}), "")
	if len(recs) != 1 || recs[0].Unavailable != "" || recs[0].ItemID != file {
		t.Errorf("kim's and sam's sweep = %+v, want sam's reading alone", recs)
	}
	drv.Trash(file)
	if recs, _ = list(t, newSource(t, fake, drv, clk, meet.Config{Users: []string{sam}}), ""); len(recs) != 0 {
		t.Errorf("sweep with the file in the trash = %+v, want nothing", recs)
	}
}

func TestBadOptionsNameTheOption(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"credentials_file": "sa.json"}, "option users: required"},
		{map[string]any{"users": []any{"sam"}, "credentials_file": "sa.json"}, "option users"},
		{map[string]any{"users": []any{sam}}, "option credentials_file: required"},
		{map[string]any{"users": []any{sam}, "credentials_file": "sa.json", "start_date": "last week"}, "option start_date"},
		{map[string]any{"users": []any{sam}, "credentials_file": "/no/such/file"}, "option credentials_file"},
		{map[string]any{"users": []any{sam}, "credentials_file": "sa.json", "subject": sam}, `unknown option "subject"`},
	} {
		_, err := connectors.New("meet", "m", tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want an error mentioning %q", tc.opts, err, tc.want)
		}
	}
}
