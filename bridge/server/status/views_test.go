package status

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
)

// TestWorkspaceIsCached: however often the overview is loaded, the API is asked for the
// workspace at most once per 30 s, and the held queue asks for the members as seldom.
func TestWorkspaceIsCached(t *testing.T) {
	rg := newRig(t, func(o *Options) { o.CacheFor = time.Second }) // raised to 30 s
	rg.heldJob(t, "a.wav")
	rg.login(t, rg.client)
	for i := range 30 {
		code, page := rg.get(t, rg.client, "/")
		if code != http.StatusOK {
			t.Fatalf("GET / = %d", code)
		}
		if i == 0 {
			contains(t, "the overview", page, "Acme", "123.5 minutes", "500 requests/min")
		}
		rg.get(t, rg.client, "/held")
		rg.clock.add(time.Second)
	}
	if n := rg.api.workspace.Load(); n != 1 {
		t.Errorf("30 overviews in 30 s asked for the workspace %d times, want 1", n)
	}
	if n := rg.api.members.Load(); n != 1 {
		t.Errorf("30 held queues in 30 s asked for the members %d times, want 1", n)
	}
	rg.get(t, rg.client, "/")
	if n := rg.api.workspace.Load(); n != 2 {
		t.Errorf("an overview past 30 s asked for the workspace %d times in all, want 2", n)
	}
}

// TestReleaseAndReassign: the held queue lists the held job with the members to pick from;
// reassigning it releases it with the member's author (bridge.Release) and writes the audit
// log; an unknown member or a job no longer held is refused, and that is audited too.
func TestReleaseAndReassign(t *testing.T) {
	rg := newRig(t, nil)
	a, b := rg.heldJob(t, "a.wav"), rg.heldJob(t, "b.wav")
	csrf := rg.login(t, rg.client)
	_, page := rg.get(t, rg.client, "/held")
	contains(t, "the held queue", page, "a.wav", "b.wav", "unmapped", `value="m-sam">Sam &lt;sam@acme.test&gt;`, "owner@acme.test")
	res, _ := rg.post(t, rg.client, "/held/"+a.ID+"/reassign", url.Values{"csrf": {csrf}, "member": {"m-sam"}, "return": {"/jobs/" + a.ID}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/jobs/"+a.ID {
		t.Fatalf("reassign = %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	ctx := context.Background()
	if j, _ := rg.store.Job(ctx, a.ID); j.State != bridge.StateDiscovered || j.Author != "email:sam@acme.test" {
		t.Errorf("reassigned job = %s by %q, want discovered by email:sam@acme.test", j.State, j.Author)
	}
	_, page = rg.get(t, rg.client, "/jobs/"+a.ID)
	contains(t, "the job's page after the reassign", page, "released with author email:sam@acme.test", "held → discovered")
	rg.post(t, rg.client, "/held/"+b.ID+"/reassign", url.Values{"csrf": {csrf}, "member": {"m-nobody"}})
	rg.post(t, rg.client, "/held/"+a.ID+"/release", url.Values{"csrf": {csrf}, "author": {"email:owner@acme.test"}})
	rg.post(t, rg.client, "/held/"+b.ID+"/release", url.Values{"csrf": {csrf}, "author": {"user:not-a-uuid"}})
	_, page = rg.get(t, rg.client, "/held")
	contains(t, "the held queue after a refused release", page, "release failed", "user:not-a-uuid")
	log, _ := rg.store.AuditLog(ctx, 0)
	var got []string
	for _, e := range slices.Backward(log) {
		got = append(got, e.Action+" "+strings.Join(e.Targets, ",")+" err="+boolText(e.Error != ""))
	}
	want := []string{"login  err=no", "reassign " + a.ID + " err=no", "reassign " + b.ID + " err=yes", "release " + a.ID + " err=yes",
		"release " + b.ID + " err=yes"}
	if !slices.Equal(got, want) {
		t.Errorf("audit log =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(log[1].Error, "not held") || !strings.Contains(log[2].Error, "m-nobody") {
		t.Errorf("audit errors = %q, %q; want not held, the unknown member", log[1].Error, log[2].Error)
	}
}

func boolText(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestReplayAndPause: a dead letter is replayed one by one and an endpoint's by time; an
// endpoint is paused and resumed; each through the store, each in the audit log with its ids.
func TestReplayAndPause(t *testing.T) {
	rg := newRig(t, nil)
	j := rg.heldJob(t, "a.wav")
	d := rg.deadDelivery(t, &j, "crm")
	csrf := rg.login(t, rg.client)
	_, page := rg.get(t, rg.client, "/deliveries?status=dead")
	contains(t, "the dead letters", page, d.ID, "410 Gone", "/deliveries/"+d.ID+"/replay")
	_, page = rg.get(t, rg.client, "/")
	contains(t, "the overview", page, `<a href="/deliveries?endpoint=crm&amp;status=dead">1</a>`)
	rg.post(t, rg.client, "/deliveries/"+d.ID+"/replay", url.Values{"csrf": {csrf}})
	ctx := context.Background()
	if got, _, _ := rg.store.Delivery(ctx, d.ID); got.Status != bridge.DeliveryPending {
		t.Errorf("replayed delivery is %s, want pending", got.Status)
	}
	res, _ := rg.post(t, rg.client, "/deliveries/replay", url.Values{"csrf": {csrf}, "endpoint": {"crm"}, "since": {"2026-11-01T00:00"}})
	if res.Header.Get("Location") != "/deliveries?endpoint=crm" {
		t.Errorf("bulk replay → %q", res.Header.Get("Location"))
	}
	rg.post(t, rg.client, "/deliveries/replay", url.Values{"csrf": {csrf}, "endpoint": {"crm"}, "since": {"yesterday"}})
	rg.post(t, rg.client, "/endpoints/crm/pause", url.Values{"csrf": {csrf}})
	if off, _ := rg.store.DisabledEndpoints(ctx); !strings.Contains(off["crm"], "paused from the status page by admin session") {
		t.Errorf("disabled endpoints = %v, want crm paused by the admin", off)
	}
	_, page = rg.get(t, rg.client, "/endpoints")
	contains(t, "the endpoints", page, "https://crm.example/hook", "Resume", "410")
	rg.post(t, rg.client, "/endpoints/crm/resume", url.Values{"csrf": {csrf}})
	rg.post(t, rg.client, "/endpoints/nope/pause", url.Values{"csrf": {csrf}})
	if off, _ := rg.store.DisabledEndpoints(ctx); len(off) != 0 {
		t.Errorf("disabled endpoints after resume = %v, want none", off)
	}
	log, _ := rg.store.AuditLog(ctx, 0)
	var got []string
	for _, e := range slices.Backward(log[:len(log)-1]) { // all but the sign-in
		got = append(got, e.Action+" "+strings.Join(e.Targets, ",")+" err="+boolText(e.Error != ""))
	}
	want := []string{"replay " + d.ID + " err=no", "replay " + d.ID + " err=no", "replay  err=yes", "pause crm err=no", "resume crm err=no",
		"pause nope err=yes"}
	if !slices.Equal(got, want) {
		t.Errorf("audit log =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, page = rg.get(t, rg.client, "/audit")
	contains(t, "the audit page", page, "pause", "resume", "replay", "endpoint crm since 2026-11-01T00:00", "is not configured")
}

// TestViews: every view renders what the store holds: jobs filtered and found by external id,
// a job's timeline with its state changes, deliveries and attempts, exports with a manifest.
func TestViews(t *testing.T) {
	rg := newRig(t, nil)
	j := rg.heldJob(t, "a.wav")
	j.ExternalID = "crm:Deal-42"
	d := rg.deadDelivery(t, &j, "crm")
	other := rg.heldJob(t, "b.wav")
	rg.login(t, rg.client)
	_, page := rg.get(t, rg.client, "/jobs?q=deal-4")
	contains(t, "the search", page, "1 job,", j.ID)
	if strings.Contains(page, other.ID) {
		t.Error("the search by external id lists another job")
	}
	if code, _ := rg.get(t, rg.client, "/jobs?state=bogus"); code != http.StatusBadRequest {
		t.Errorf("GET /jobs?state=bogus = %d, want 400", code)
	}
	_, page = rg.get(t, rg.client, "/jobs?state=held&source=inbox")
	contains(t, "the held jobs of inbox", page, "2 jobs", j.ID, other.ID)
	_, page = rg.get(t, rg.client, "/jobs/"+j.ID)
	contains(t, "the timeline", page, "found: discovered", "discovered → held", "recording.held to crm", "crm answered Gone (410)",
		"Reassign", "/deliveries/"+d.ID)
	if code, _ := rg.get(t, rg.client, "/jobs/nope"); code != http.StatusNotFound {
		t.Errorf("GET /jobs/nope = %d, want 404", code)
	}
	_, page = rg.get(t, rg.client, "/deliveries/"+d.ID)
	contains(t, "the delivery", page, d.WebhookID, "410 Gone", `{&#34;a&#34;:1}`)

	dir := t.TempDir()
	m := export.Manifest{Export: "nightly", Format: "md", Counts: export.Counts{Listed: 1, Exported: 1},
		Transcripts: []export.Transcript{{ID: "tr-1", Title: "Weekly sync", File: "weekly.md"}}}
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, export.ManifestName), b, 0o644)
	ctx := context.Background()
	tick := t0.Truncate(time.Hour)
	rg.store.ClaimRun(ctx, "nightly", tick, t0, time.Minute)
	rg.store.FinishRun(ctx, bridge.ExportRun{Export: "nightly", Tick: tick, Status: bridge.ExportCompleted, Location: dir, Listed: 1,
		Exported: 1, StartedAt: t0, FinishedAt: t0}, []string{"tr-1"}, tick, bridge.Event{Type: bridge.EventExportCompleted})
	_, page = rg.get(t, rg.client, "/exports")
	contains(t, "the exports", page, "nightly", "completed", "/exports/manifest?export=nightly&amp;tick=2026-11-02T09%3a00%3a00Z")
	_, page = rg.get(t, rg.client, "/exports/manifest?export=nightly&tick=2026-11-02T09:00:00Z")
	contains(t, "the manifest", page, "Weekly sync", "weekly.md", "1 exported")
	_, page = rg.get(t, rg.client, "/")
	contains(t, "the overview", page, "nightly at 2026-11-02 09:00:00Z", "completed", `href="/held">2 held`, "b.wav")
	code, css := rg.get(t, rg.client, "/static/style.css")
	if code != http.StatusOK || !strings.Contains(css, ".timeline") {
		t.Errorf("GET /static/style.css = %d", code)
	}
}
