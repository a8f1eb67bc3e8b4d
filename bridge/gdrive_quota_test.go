package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
)

// TestDriveDownloadQuotaHoldsTheJob (issue 29, points 1 and 7): Drive refusing a file's download
// with 403 downloadQuotaExceeded (its real answer, gdrivetest/testdata) holds the job
// source_blocked with Drive's words for a day, never skips it; once the quota has renewed the
// job is uploaded once.
func TestDriveDownloadQuotaHoldsTheJob(t *testing.T) {
	e := newEnv(t, nil)
	fake := gdrivetest.Start(t)
	const sam = "sam@acme.test"
	folder := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	id := fake.Put("call.wav", "audio/wav", folder, sam, "", wav(5, 1))
	fake.RefuseDownload(id, gdrivetest.ReasonDownloadQuota)
	src, err := gdrive.New(context.Background(), gdrive.Config{Credentials: fake.ServiceAccountJSON(), Endpoint: fake.URL,
		FolderID: folder, Subjects: []string{sam}, MaxAttempts: 1, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	t0 := time.Now()
	c := &clock{t: t0}
	e.p.Now = c.Now
	scan(t, e.p)
	if err := e.p.MapDiscovered(context.Background()); err != nil {
		t.Fatal(err)
	}
	step(t, e.p)
	j := e.onlyJob(t)
	if j.State != bridge.StateHeld || j.Hold != bridge.HoldSourceBlocked || !strings.Contains(j.Reason, "download quota for this file has been exceeded") {
		t.Fatalf("after downloadQuotaExceeded: job %s/%s (%q), want held %s with Drive's words", j.State, j.Hold, j.Reason, bridge.HoldSourceBlocked)
	}
	if got := j.NextAt.Sub(t0); got != 24*time.Hour {
		t.Errorf("held for %v, want tried again in 24h", got)
	}
	fake.RefuseDownload(id, "") // the quota renewed
	c.set(t0.Add(25 * time.Hour))
	step(t, e.p)
	e.run(t)
	if j = e.onlyJob(t); j.State != bridge.StateDone {
		t.Errorf("a day later: job %s (%q), want done", j.State, j.Reason)
	}
	if _, accepted := e.uploads(t); accepted != 1 {
		t.Errorf("%d uploads accepted, want 1", accepted)
	}
}
