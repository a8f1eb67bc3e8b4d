package gdrive_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

const kim = "kim@acme.test"

// clock is a settable Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func read(t *testing.T, src connectors.Source, r connectors.Recording) string {
	t.Helper()
	rc, err := src.Open(context.Background(), r)
	if err != nil {
		t.Fatalf("Open(%s as %s): %v", r.ItemID, r.Fields["subject"], err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// TestMeetRecordingsBothLayouts (issue 34, point 1): meet_recordings syncs the legacy "Meet
// Recordings" folder and, once Meet switched, the "Google Meet" folder with a subfolder per
// meeting: a recording made after the switch comes from the changes feed, one made before is
// still listed from the renamed legacy folder by its id, a folder the user names "Meet
// Recordings" afterwards is not taken for it, and a source started after the switch finds the
// legacy folder under its new name.
func TestMeetRecordingsBothLayouts(t *testing.T) {
	fake := gdrivetest.Start(t)
	before := fake.MeetRecording(gdrivetest.LegacyLayout, sam, []string{kim}, "Standup (2026-07-20 10:00 GMT+2)", []byte("before"))
	clk := &clock{t: time.Date(2026, 7, 21, 0, 0, 0, 0, time.UTC)}
	src := newSource(t, fake, gdrive.Config{MeetRecordings: true, Now: clk.now})
	recs, cursor := list(t, src, "")
	if len(recs) != 1 || recs[0].ItemID != before {
		t.Fatalf("first listing = %v, want the legacy recording %s", names(recs), before)
	}

	fake.SwitchMeetLayout(sam)
	after := fake.MeetRecording(gdrivetest.FolderLayout, sam, []string{kim}, "Standup (2026-07-27 10:00 GMT+2)", []byte("after"))
	recs, cursor = list(t, src, cursor)
	if len(recs) != 1 || recs[0].ItemID != after || recs[0].Name != "Standup (2026-07-27 10:00 GMT+2) - Recording.mp4" {
		t.Errorf("changes after the switch = %+v, want the recording in Google Meet/<meeting>/", recs)
	}

	mine := fake.Folder(gdrivetest.LegacyFolder, gdrivetest.Root(sam), sam, "")
	fake.Put("not meet.wav", "audio/wav", mine, sam, "", []byte("x"))
	clk.t = clk.t.Add(2 * time.Hour) // a full listing
	recs, _ = list(t, src, cursor)
	if got := ids(recs); !slices.Equal(got, sorted(before, after)) {
		t.Errorf("full listing after the switch = %v (%v), want %v: both layouts, and no folder taken by its name once the legacy one is known",
			got, names(recs), sorted(before, after))
	}

	late := newSource(t, fake, gdrive.Config{MeetRecordings: true})
	fake.Trash(mine)
	recs, _ = list(t, late, "")
	if got := ids(recs); !slices.Equal(got, sorted(before, after)) {
		t.Errorf("a source started after the switch listed %v (%v), want %v", got, names(recs), sorted(before, after))
	}
	for _, r := range recs {
		if want := map[string]string{before: "before", after: "after"}[r.ItemID]; read(t, src, r) != want {
			t.Errorf("Open(%s) did not read %q", r.ItemID, want)
		}
	}
}

func ids(recs []connectors.Recording) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ItemID)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// TestShortcutIsTheOrganizersFile (issue 34, point 2): a participant's shortcut is listed as
// the organizer's file (its id, version and owner, read through the participant), the
// shortcut and the organizer's file are one recording when both are subjects, and a shortcut
// whose target the participant cannot read is unavailable with that reason, unless the
// organizer reads it.
func TestShortcutIsTheOrganizersFile(t *testing.T) {
	fake := gdrivetest.Start(t)
	fake.Folder(gdrivetest.MeetFolder, gdrivetest.Root(kim), kim, "") // kim's folder exists before her first shortcut
	id := fake.MeetRecording(gdrivetest.FolderLayout, sam, []string{kim}, "Standup (2026-08-03 10:00 GMT+2)", []byte("organizer's"))

	alone := newSource(t, fake, gdrive.Config{MeetRecordings: true, Subjects: []string{kim}})
	recs, _ := list(t, alone, "")
	if len(recs) != 1 {
		t.Fatalf("kim's listing = %+v, want the recording her shortcut points to", recs)
	}
	r := recs[0]
	if r.ItemID != id || r.Owner == nil || r.Owner.Email != sam || r.Fields["subject"] != kim || r.DedupeKey != "gdrive:"+id+"@"+r.Version ||
		r.Unavailable != "" {
		t.Errorf("kim's recording = %+v, want item %s owned by %s, read as %s, keyed gdrive:<id>@<version>", r, id, sam, kim)
	}
	if got := read(t, alone, r); got != "organizer's" {
		t.Errorf("Open through the shortcut read %q", got)
	}

	both := newSource(t, fake, gdrive.Config{MeetRecordings: true, Subjects: []string{kim, sam}})
	recs, _ = list(t, both, "")
	if len(recs) != 1 || recs[0].ItemID != id || recs[0].Version != r.Version || recs[0].Fields["subject"] != sam {
		t.Errorf("kim's and sam's listing = %+v, want one recording of %s, sam's own", recs, id)
	}

	fake.Unshare(id, kim)
	recs, _ = list(t, newSource(t, fake, gdrive.Config{MeetRecordings: true, Subjects: []string{kim}}), "")
	if len(recs) != 1 || recs[0].Unavailable == "" || !strings.Contains(recs[0].Unavailable, "cannot read") || recs[0].ItemID == id {
		t.Errorf("kim's listing once the target is unshared = %+v, want the shortcut, unavailable with the reason", recs)
	}
	recs, _ = list(t, newSource(t, fake, gdrive.Config{MeetRecordings: true, Subjects: []string{kim, sam}}), "")
	if len(recs) != 1 || recs[0].ItemID != id || recs[0].Unavailable != "" {
		t.Errorf("kim's and sam's listing once unshared from kim = %+v, want sam's recording alone", recs)
	}
}

// TestMeetCheckSaysWhatMeetDoes (issue 34, point 1): Check names the Meet folders found, and
// for a user with none says what Meet does today, as a warning with its fix.
func TestMeetCheckSaysWhatMeetDoes(t *testing.T) {
	fake := gdrivetest.Start(t)
	fake.MeetRecording(gdrivetest.LegacyLayout, sam, nil, "Standup (2026-07-20 10:00 GMT+2)", []byte("before"))
	fake.SwitchMeetLayout(sam)
	const lee = "lee@acme.test"
	lines, err := newSource(t, fake, gdrive.Config{MeetRecordings: true, Subjects: []string{sam, lee}}).Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{`legacy Meet folder "` + gdrivetest.RenamedLegacyFolder + `"`, `sam@acme.test has no "Google Meet" folder yet`} {
		if !strings.Contains(all, want) {
			t.Errorf("Check lines lack %q:\n%s", want, all)
		}
	}
	var warned bool
	for _, l := range lines {
		problem, fix, ok := connectors.ParseWarning(l)
		if ok && strings.Contains(problem, lee) && strings.Contains(problem, "since 2026-07-23") && fix != "" {
			warned = true
		}
		if strings.Contains(l, "creates it with the first recording") {
			t.Errorf("Check still says %q", l)
		}
	}
	if !warned {
		t.Errorf("Check lines = %s\nwant a warning for %s saying what Meet does since 2026-07-23, with a fix", all, lee)
	}
}

// TestReaderReadsAsTheSource: the Reader describes a file as the source lists it, and says
// when the user cannot read it.
func TestReaderReadsAsTheSource(t *testing.T) {
	fake := gdrivetest.Start(t)
	id := fake.MeetRecording(gdrivetest.FolderLayout, sam, nil, "Standup (2026-08-03 10:00 GMT+2)", []byte("mp4"))
	rd, err := gdrive.NewReader(context.Background(), gdrive.Config{Credentials: fake.ServiceAccountJSON(), Endpoint: fake.URL,
		Subjects: []string{sam, kim}, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rd.File(context.Background(), sam, id)
	listed, _ := list(t, newSource(t, fake, gdrive.Config{MeetRecordings: true}), "")
	if err != nil || len(listed) != 1 || r.ItemID != listed[0].ItemID || r.Version != listed[0].Version || r.DedupeKey != listed[0].DedupeKey ||
		r.Owner.Email != sam {
		t.Fatalf("Reader.File = %+v, %v; want what the source lists, %+v", r, err, listed)
	}
	if b, err := rd.Open(context.Background(), r); err != nil {
		t.Errorf("Reader.Open: %v", err)
	} else {
		b.Close()
	}
	fake.Unshare(id, kim)
	if _, err := rd.File(context.Background(), kim, id); !errors.Is(err, gdrive.ErrUnreadable) {
		t.Errorf("Reader.File as a user who cannot read the file = %v, want ErrUnreadable", err)
	}
}
