package s3_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/connectors/s3/s3test"
)

// classes are the objects of the archive tests, by key, in their storage class.
var classes = map[string]s3test.Class{
	"calls/glacier.wav":    s3test.Glacier,
	"calls/deep.wav":       s3test.DeepArchive,
	"calls/it-archive.wav": s3test.ArchiveAccess,
	"calls/it-deep.wav":    s3test.DeepArchiveAccess,
	"calls/it-hot.wav":     s3test.IntelligentTiering,
	"calls/instant.wav":    s3test.GlacierInstant,
	"calls/standard.wav":   {StorageClass: "STANDARD"},
}

// fill puts every object of classes, each in its class.
func (d *deployed) fill(t *testing.T) {
	t.Helper()
	for k, c := range classes {
		d.put(t, k, []byte("audio of "+k), nil)
		if c.StorageClass != "STANDARD" {
			d.Transition(bucket, k, c)
		}
	}
}

// read opens a recording and returns its bytes.
func read(src *s3.Source, r connectors.Recording) (string, error) {
	rc, err := src.Open(context.Background(), r)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

func byKey(recs []connectors.Recording) map[string]connectors.Recording {
	m := map[string]connectors.Recording{}
	for _, r := range recs {
		m[r.ItemID] = r
	}
	return m
}

// TestArchivedObjectsAreSkippedWithTheReason: objects in GLACIER, DEEP_ARCHIVE and the
// Intelligent-Tiering archive tiers are listed, but S3 refuses to read them (403
// InvalidObjectState). Each recording handed over is one that opens, or one that says why it
// cannot (Unavailable, naming restore: true), under a version of its own. GLACIER_IR and
// Intelligent-Tiering's other tiers are read as any object. An object moved to GLACIER after it
// was taken is not handed over again, nor is a skipped one.
func TestArchivedObjectsAreSkippedWithTheReason(t *testing.T) {
	d := startDeployed(t, "")
	d.put(t, "calls/taken.wav", []byte("taken before it was archived"), nil)
	src := d.source(t, s3.Config{Prefix: "calls/"})
	_, cursor := list(t, src, "")
	d.Transition(bucket, "calls/taken.wav", s3test.Glacier) // a lifecycle rule, once transcribed
	d.fill(t)

	recs, next := list(t, src, cursor)
	got := byKey(recs)
	for k, c := range classes {
		r, ok := got[k]
		if !ok {
			t.Errorf("%s (%s): not listed", k, c.StorageClass)
			continue
		}
		body, err := read(src, r)
		switch {
		case c.Archived() && (r.Unavailable == "" || !strings.Contains(r.Unavailable, "restore: true") || !strings.Contains(r.Unavailable, c.StorageClass)):
			t.Errorf("%s (%s %s): Unavailable = %q, want the reason, naming its class and restore: true (Open: %v)", k, c.StorageClass, c.AccessTier, r.Unavailable, err)
		case c.Archived() && (strings.Trim(r.Version, "\"") == "" || !strings.HasSuffix(r.Version, "@archived")):
			t.Errorf("%s: version %q, want one of its own for the archived object", k, r.Version)
		case !c.Archived() && (r.Unavailable != "" || err != nil || body != "audio of "+k):
			t.Errorf("%s (%s): Unavailable %q, read %q, %v; want it read", k, c.StorageClass, r.Unavailable, body, err)
		}
	}
	if _, ok := got["calls/taken.wav"]; ok || len(recs) != len(classes) {
		t.Errorf("listed %d recordings (taken.wav again: %v), want %d, not the one archived since it was taken", len(recs), ok, len(classes))
	}
	if again, _ := list(t, src, next); len(again) != 0 {
		t.Errorf("listed again: %v, want nothing new", again)
	}
}

// TestRestoreTakesArchivedObjectsOnceRestored: with restore, an archived object is not handed
// over but restored (RestoreObject: restore_days for GLACIER and DEEP_ARCHIVE, none for
// Intelligent-Tiering; Expedited falls back to Standard for deep archives); while the restore
// runs it is listed again and not handed over, nor restored twice; once restored it is handed
// over, read, and not handed over again.
func TestRestoreTakesArchivedObjectsOnceRestored(t *testing.T) {
	d := startDeployed(t, "")
	d.fill(t)
	src := d.source(t, s3.Config{Prefix: "calls/", Restore: true, RestoreDays: 2, RestoreTier: "expedited"})
	recs, cursor := list(t, src, "")
	for _, r := range recs {
		if classes[r.ItemID].Archived() || r.Unavailable != "" {
			t.Errorf("first listing handed over %s (%q), want only objects readable now", r.ItemID, r.Unavailable)
		}
	}
	want := []s3test.RestoreRequest{
		{Bucket: bucket, Key: "calls/deep.wav", Days: 2, Tier: "Standard"},
		{Bucket: bucket, Key: "calls/glacier.wav", Days: 2, Tier: "Expedited"},
		{Bucket: bucket, Key: "calls/it-archive.wav", Tier: "Expedited"},
		{Bucket: bucket, Key: "calls/it-deep.wav", Tier: "Standard"},
	}
	restores := func() []s3test.RestoreRequest {
		rs := d.Restores()
		slices.SortFunc(rs, func(a, b s3test.RestoreRequest) int { return strings.Compare(a.Key, b.Key) })
		return rs
	}
	if rs := restores(); !slices.Equal(rs, want) {
		t.Fatalf("restores = %+v, want %+v", rs, want)
	}
	if recs, cursor = list(t, src, cursor); len(recs) != 0 || len(d.Restores()) != len(want) {
		t.Fatalf("while restoring: listed %d, %d restores; want none listed, no restore asked twice", len(recs), len(d.Restores()))
	}
	d.FinishRestore(bucket, "calls/glacier.wav")
	d.FinishRestore(bucket, "calls/it-archive.wav")
	recs, cursor = list(t, src, cursor)
	got := byKey(recs)
	for _, k := range []string{"calls/glacier.wav", "calls/it-archive.wav"} {
		body, err := read(src, got[k])
		if r := got[k]; r.Unavailable != "" || strings.Contains(r.Version, "@") || err != nil || body != "audio of "+k {
			t.Errorf("%s once restored: %+v, read %q, %v; want it handed over and read", k, r, body, err)
		}
	}
	if len(recs) != 2 {
		t.Errorf("once two are restored, listed %d, want 2", len(recs))
	}
	if again, _ := list(t, src, cursor); len(again) != 0 {
		t.Errorf("listed again: %d, want nothing new (the deep archives still restoring)", len(again))
	}
}

// TestRestoreOnTakesWhatWasSkipped: objects skipped while restore was off are restored and taken
// once it is on, as new versions.
func TestRestoreOnTakesWhatWasSkipped(t *testing.T) {
	d := startDeployed(t, "")
	d.put(t, "a.wav", []byte("audio"), nil)
	d.Transition(bucket, "a.wav", s3test.Glacier)
	skipped, cursor := list(t, d.source(t, s3.Config{}), "")
	on := d.source(t, s3.Config{Restore: true})
	if recs, _ := list(t, on, cursor); len(recs) != 0 || len(d.Restores()) != 1 {
		t.Fatalf("restore on: listed %d, %d restores; want a restore, nothing yet", len(recs), len(d.Restores()))
	}
	d.FinishRestore(bucket, "a.wav")
	recs, _ := list(t, on, cursor)
	if len(recs) != 1 || recs[0].Version == skipped[0].Version || recs[0].Unavailable != "" {
		t.Fatalf("once restored: %+v; want a.wav as a version other than the skipped %q", recs, skipped[0].Version)
	}
	if body, err := read(on, recs[0]); err != nil || body != "audio" {
		t.Errorf("read %q, %v; want the object", body, err)
	}
}

// TestOpenAnObjectArchivedSinceListed: an object archived after it was listed (a lifecycle rule,
// a restored copy expired) is refused by GetObject. Without restore the job is skipped with the
// fix; with restore, a restore is asked for and the job waits (transient) until it is readable.
func TestOpenAnObjectArchivedSinceListed(t *testing.T) {
	d := startDeployed(t, "")
	d.put(t, "a.wav", []byte("audio"), nil)
	off, on := d.source(t, s3.Config{}), d.source(t, s3.Config{Restore: true})
	recs, _ := list(t, off, "")
	d.Transition(bucket, "a.wav", s3test.Glacier)

	_, err := read(off, recs[0])
	if err == nil || errors.Is(err, connectors.ErrTransient) || errors.Is(err, connectors.ErrBlocked) || !strings.Contains(err.Error(), "restore: true") {
		t.Errorf("Open without restore = %v, want a permanent error naming restore: true", err)
	}
	for round := range 2 { // archived, then its restored copy expired
		_, err = read(on, recs[0])
		if !errors.Is(err, connectors.ErrTransient) || len(d.Restores()) != round+1 {
			t.Fatalf("Open with restore (round %d) = %v, %d restores; want transient, a restore asked for", round, err, len(d.Restores()))
		}
		if _, err := read(on, recs[0]); !errors.Is(err, connectors.ErrTransient) || len(d.Restores()) != round+1 {
			t.Fatalf("Open while restoring = %v, %d restores; want transient, no second restore", err, len(d.Restores()))
		}
		d.FinishRestore(bucket, "a.wav")
		if body, err := read(on, recs[0]); err != nil || body != "audio" {
			t.Fatalf("Open once restored = %q, %v; want the object", body, err)
		}
		d.ExpireRestore(bucket, "a.wav")
	}
}

// TestCheckCountsArchivedObjects: bridge doctor warns of archived objects (how many, and
// restore: true) while restore is off, and says what restore needs when on.
func TestCheckCountsArchivedObjects(t *testing.T) {
	d := startDeployed(t, "")
	d.fill(t)
	lines, err := d.source(t, s3.Config{Prefix: "calls/"}).Check(context.Background())
	var warned bool
	for _, l := range lines {
		if problem, fix, ok := connectors.ParseWarning(l); ok {
			warned = strings.HasPrefix(problem, "4 of the first 7 objects") && strings.Contains(fix, "restore: true")
		}
	}
	if err != nil || !warned {
		t.Errorf("Check = %q, %v; want a warning: 4 of the first 7 objects archived, fix restore: true", lines, err)
	}
	lines, err = d.source(t, s3.Config{Prefix: "calls/", Restore: true}).Check(context.Background())
	if all := strings.Join(lines, "\n"); err != nil || strings.Contains(all, "warning") || !strings.Contains(all, "s3:RestoreObject") {
		t.Errorf("Check with restore = %q, %v; want no warning, s3:RestoreObject named", lines, err)
	}
}

// TestRefusedHeadIsNotUnseen: an Intelligent-Tiering object (whose tier only HEAD tells) that a
// bucket policy lets be listed but not HEADed is handed over from the listing alone, so its job
// shows what its download answers, instead of being left out of every scan without a word.
func TestRefusedHeadIsNotUnseen(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	aws := s3test.NewAWS(backend, "us-east-1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && strings.HasSuffix(r.URL.Path, "/calls/policy.wav") {
			w.WriteHeader(http.StatusForbidden) // S3 answers HEAD without a body
			return
		}
		aws.ServeHTTP(w, r)
	}))
	defer srv.Close()
	d := &deployed{AWS: aws, server: server{backend: backend, url: srv.URL}}
	d.put(t, "calls/policy.wav", []byte("audio"), nil)
	d.Transition(bucket, "calls/policy.wav", s3test.IntelligentTiering)
	src := d.source(t, s3.Config{Prefix: "calls/", Region: "us-east-1"})
	recs, _, err := src.List(context.Background(), "")
	if err != nil || len(recs) != 1 || recs[0].ItemID != "calls/policy.wav" {
		t.Errorf("List with HEAD refused = %+v, %v; want the object handed over", recs, err)
	}
}
