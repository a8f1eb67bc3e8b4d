package gdrive_test

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/connectortest"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

const sam = "sam@acme.test"

func newSource(t *testing.T, fake *gdrivetest.Server, cfg gdrive.Config) *gdrive.Source {
	t.Helper()
	cfg.Credentials, cfg.Endpoint, cfg.MinBackoff = fake.ServiceAccountJSON(), fake.URL, time.Millisecond
	if cfg.Subjects == nil {
		cfg.Subjects = []string{sam}
	}
	src, err := gdrive.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

type fixture struct {
	fake   *gdrivetest.Server
	folder string
	ids    map[string]string
}

func (f *fixture) Put(t *testing.T, name string, data []byte) {
	if id, ok := f.ids[name]; ok {
		f.fake.Update(id, data)
		return
	}
	f.ids[name] = f.fake.Put(name, "audio/wav", f.folder, sam, "", data)
}
func (f *fixture) Remove(t *testing.T, name string) { f.fake.Delete(f.ids[name]) }
func (f *fixture) Settle(*testing.T)                {}

func TestSuite(t *testing.T) {
	connectortest.Run(t, func(t *testing.T) (connectors.Source, connectortest.Fixture) {
		fake := gdrivetest.Start(t)
		folder := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
		fake.Put("elsewhere.wav", "audio/wav", gdrivetest.Root(sam), sam, "", []byte("not in the folder"))
		return newSource(t, fake, gdrive.Config{FolderID: folder}), &fixture{fake: fake, folder: folder, ids: map[string]string{}}
	})
}

func names(recs []connectors.Recording) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

func list(t *testing.T, src *gdrive.Source, cursor string) ([]connectors.Recording, string) {
	t.Helper()
	recs, next, err := src.List(context.Background(), cursor)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs, next
}

// TestChangesFeedFindsLateAndMovedFiles: after the first full listing, the changes feed brings
// a new file, an old file moved into the folder, and a folder moved in with its files; a
// trashed file and a document are left out, and no full listing runs in between.
func TestChangesFeedFindsLateAndMovedFiles(t *testing.T) {
	fake := gdrivetest.Start(t)
	root := gdrivetest.Root(sam)
	calls := fake.Folder("Calls", root, sam, "")
	sub := fake.Folder("2026", calls, sam, "")
	fake.Put("a.wav", "audio/wav", calls, sam, "", []byte("a"))
	fake.Put("b", "video/mp4", sub, sam, "", []byte("b"))
	fake.Put("notes", "application/vnd.google-apps.document", calls, sam, "", nil)
	old := fake.Put("old.m4a", "audio/mp4", root, sam, "", []byte("old, elsewhere"))
	outside := fake.Folder("Imported", root, sam, "")
	fake.Put("imported.mp3", "audio/mpeg", outside, sam, "", []byte("in a folder moved in later"))

	src := newSource(t, fake, gdrive.Config{FolderID: calls})
	recs, cursor := list(t, src, "")
	if got := strings.Join(names(recs), ","); got != "a.wav,b.mp4" {
		t.Fatalf("first listing = %s, want a.wav,b.mp4 (recursive; the extension from the MIME type)", got)
	}
	fake.Put("c.wav", "audio/wav", sub, sam, "", []byte("c"))
	fake.Move(old, calls)
	fake.Move(outside, calls)
	trashed := fake.Put("d.wav", "audio/wav", calls, sam, "", []byte("d"))
	fake.Trash(trashed)
	before := fake.Requests
	recs, cursor = list(t, src, cursor)
	if got := strings.Join(names(recs), ","); got != "c.wav,imported.mp3,old.m4a" {
		t.Errorf("incremental listing = %s, want c.wav,imported.mp3,old.m4a", got)
	}
	if n := fake.Requests - before; n > 3 {
		t.Errorf("the incremental pass made %d requests; want the changes feed and one listing of the moved folder", n)
	}
	if again, _ := list(t, src, cursor); len(again) != 0 {
		t.Errorf("a pass with no changes listed %v", names(again))
	}
}

func TestThrottlingIsRetried(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	fake.Put("a.wav", "audio/wav", calls, sam, "", []byte("a"))
	src := newSource(t, fake, gdrive.Config{FolderID: calls})
	fake.Fail(403, 429, 503)
	recs, _ := list(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("listed %d after throttling, want 1", len(recs))
	}
	fake.Fail(403, 429)
	rc, err := src.Open(context.Background(), recs[0])
	if err != nil {
		t.Fatalf("Open after throttling: %v", err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "a" {
		t.Errorf("downloaded %q", b)
	}
}

// TestMeetRecordingsOfEachUser impersonates two users and takes each one's "Meet Recordings"
// folder, the owner being the user.
func TestMeetRecordingsOfEachUser(t *testing.T) {
	fake := gdrivetest.Start(t)
	for _, u := range []string{sam, "kim@acme.test"} {
		meet := fake.Folder("Meet Recordings", gdrivetest.Root(u), u, "")
		fake.Put("Standup (2026-11-20 10:00 GMT+1) - Recording", "video/mp4", meet, u, "", []byte("meeting of "+u))
		fake.Put("other.wav", "audio/wav", gdrivetest.Root(u), u, "", []byte("not a meet recording"))
	}
	src := newSource(t, fake, gdrive.Config{MeetRecordings: true, Subjects: []string{sam, "kim@acme.test"}})
	recs, _ := list(t, src, "")
	owners := map[string]bool{}
	for _, r := range recs {
		if !strings.HasSuffix(r.Name, ".mp4") || r.Owner == nil || r.SourceExternalID != "gdrive:"+r.ItemID {
			t.Errorf("recording = %+v, want an .mp4 name, an owner and external id gdrive:<id>", r)
			continue
		}
		owners[r.Owner.Email] = true
		rc, err := src.Open(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != "meeting of "+r.Owner.Email {
			t.Errorf("%s read %q as %s", r.ItemID, b, r.Fields["subject"])
		}
	}
	if len(recs) != 2 || !owners[sam] || !owners["kim@acme.test"] {
		t.Errorf("recordings = %v with owners %v; want one per user", names(recs), owners)
	}
}

func TestSharedDriveOwnerIsTheLastModifier(t *testing.T) {
	fake := gdrivetest.Start(t)
	const drive = "0AShared"
	id := fake.Put("call.wav", "audio/wav", drive, "", drive, []byte("shared"))
	fake.Modify(id, "kim@acme.test")
	src := newSource(t, fake, gdrive.Config{SharedDriveID: drive})
	recs, cursor := list(t, src, "")
	if len(recs) != 1 || recs[0].Owner == nil || recs[0].Owner.Email != "kim@acme.test" || recs[0].Owner.Name != "kim" {
		t.Fatalf("recordings = %+v, want one owned by its last modifier (shared drives have no owners)", recs)
	}
	fake.Put("later.wav", "audio/wav", drive, "", drive, []byte("later"))
	recs, _ = list(t, src, cursor)
	if len(recs) != 1 || recs[0].Name != "later.wav" || recs[0].Fields["drive_id"] != drive {
		t.Errorf("incremental shared-drive listing = %+v", recs)
	}
}

func TestAbusiveFilesNeedAcknowledgement(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	id := fake.Put("a.wav", "audio/wav", calls, sam, "", []byte("a"))
	fake.SetAbusive(id)
	for _, ack := range []bool{false, true} {
		src := newSource(t, fake, gdrive.Config{FolderID: calls, AcknowledgeAbuse: ack})
		recs, _ := list(t, src, "")
		rc, err := src.Open(context.Background(), recs[0])
		if (err == nil) != ack {
			t.Errorf("acknowledge_abuse %v: Open error = %v", ack, err)
		}
		if rc != nil {
			rc.Close()
		}
	}
}

func TestBadOptionsNameTheOption(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{}, "option folder_id"},
		{map[string]any{"folder_id": "x", "meet_recordings": true}, "option meet_recordings"},
		{map[string]any{"folder_id": "x", "credentials_file": "/no/such/file"}, "option credentials_file"},
		{map[string]any{"folder_id": "x", "full_every": "10s"}, "option full_every"},
		{map[string]any{"folder_id": "x", "folder": "y"}, `unknown option "folder"`},
	} {
		_, err := connectors.New("gdrive", "x", tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want an error mentioning %q", tc.opts, err, tc.want)
		}
	}
}

// TestGenericTypesWithMediaNamesAreListed: a file Drive could not type (application/octet-stream
// and the like) is listed when its name has an extension the service takes, by the full
// listing and by the changes feed; its content is checked before upload. Others are not.
func TestGenericTypesWithMediaNamesAreListed(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	fake.Put("call.wav", "application/octet-stream", calls, sam, "", []byte("a"))
	fake.Put("standup.M4A", "binary/octet-stream", calls, sam, "", []byte("b"))
	fake.Put("radio.ogg", "application/ogg", calls, sam, "", []byte("c"))
	fake.Put("notes.txt", "application/octet-stream", calls, sam, "", []byte("not a recording"))
	fake.Put("blob", "application/octet-stream", calls, sam, "", []byte("no extension"))
	fake.Put("report.wav.pdf", "application/pdf", calls, sam, "", []byte("%PDF"))
	src := newSource(t, fake, gdrive.Config{FolderID: calls})
	recs, cursor := list(t, src, "")
	if got := strings.Join(names(recs), ","); got != "call.wav,radio.ogg,standup.M4A" {
		t.Errorf("full listing = %s, want call.wav,radio.ogg,standup.M4A", got)
	}
	fake.Put("later.mp3", "application/octet-stream", calls, sam, "", []byte("d"))
	fake.Put("later.bin", "application/octet-stream", calls, sam, "", []byte("e"))
	recs, _ = list(t, src, cursor)
	if got := strings.Join(names(recs), ","); got != "later.mp3" {
		t.Errorf("changes feed = %s, want later.mp3", got)
	}
}

// TestOpenFailuresAreClassified: throttling and server errors left after the retries are
// transient (the bridge tries again later); a file gone or refused is not.
func TestOpenFailuresAreClassified(t *testing.T) {
	fake := gdrivetest.Start(t)
	calls := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	id := fake.Put("a.wav", "audio/wav", calls, sam, "", []byte("a"))
	src := newSource(t, fake, gdrive.Config{FolderID: calls, MaxAttempts: 1})
	recs, _ := list(t, src, "")
	for _, tc := range []struct {
		name      string
		setup     func()
		transient bool
	}{
		{"503", func() { fake.Fail(503) }, true},
		{"429", func() { fake.Fail(429) }, true},
		{"403 userRateLimitExceeded", func() { fake.Fail(403) }, true},
		{"403 cannotDownloadAbusiveFile", func() { fake.SetAbusive(id) }, false},
		{"404", func() { fake.Delete(id) }, false},
	} {
		tc.setup()
		rc, err := src.Open(context.Background(), recs[0])
		if rc != nil {
			rc.Close()
		}
		if err == nil || errors.Is(err, connectors.ErrTransient) != tc.transient {
			t.Errorf("Open after %s = %v (transient %v), want an error, transient %v", tc.name, err, errors.Is(err, connectors.ErrTransient), tc.transient)
		}
	}
}
