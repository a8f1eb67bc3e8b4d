package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/connectors"
)

// chromiumPath is Debian's Chromium (apt-get install -y chromium; .ci/run installs it).
const chromiumPath = "/usr/bin/chromium"

// Real text, as long as it comes: a receiver's error with its URL, a file name from Meet, an
// endpoint named after its system, a reason quoting an API's answer, an id without spaces.
const (
	longEndpoint = "crm-production-eu-west-1-customer-relationship-management-transcripts-receiver"
	longSource   = "google-drive-shared-drive-sales-emea-quarterly-business-reviews-and-customer-calls"
	longFile     = "Quarterly business review with the whole EMEA sales organisation, partners and guests (2026-11-20 10:00 GMT+1) final-final-v3.mp4"
	longError    = `Post "https://crm-production-eu-west-1.internal.example.com/api/v2/integrations/transcript-bridge/hooks/transcripts?tenant=acme-corporation-international&region=eu-west-1": dial tcp: lookup crm-production-eu-west-1.internal.example.com on 127.0.0.53:53: no such host`
	longToken    = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a089f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	longExport   = "nightly-export-of-every-completed-transcript-to-the-archive-bucket"
	longReason   = "source_blocked: source " + longSource + ": Drive answered 403 downloadQuotaExceeded: The download quota for this file has been exceeded. (" + longToken + ")"
)

// view is one page of the status page: a name for its screenshot and its path.
type view struct{ name, path string }

// failingAPI answers with a long error, as a workspace behind a proxy that refuses does.
type failingAPI struct{}

func (failingAPI) Workspace(context.Context) (*api.Workspace, error) {
	return nil, errors.New("api: GET /workspace: " + longError)
}
func (failingAPI) Members(context.Context) ([]api.Member, error) {
	return nil, errors.New("api: GET /workspace/members: " + longError)
}

// longTextRig is a page whose store holds the longest real text each view shows: held, failed
// and done jobs with long names and reasons, dead deliveries with long errors to a disabled
// endpoint with a long name, a failed export, audit entries with long details. It returns the
// views the status page has.
func longTextRig(t *testing.T) (*rig, []view) {
	t.Helper()
	rg := newRig(t, func(o *Options) {
		o.API = failingAPI{}
		o.Sources = []string{"inbox", longSource}
		o.Endpoints = []Endpoint{{Name: "crm", URL: "https://crm.example/hook"},
			{Name: longEndpoint, URL: "https://crm-production-eu-west-1.internal.example.com/api/v2/integrations/transcript-bridge/hooks/transcripts"}}
	})
	ctx := context.Background()
	recs := []connectors.Recording{
		{ItemID: "calls/2026/11/" + longFile, Version: longToken, Name: longFile, Size: 1 << 30, Link: "https://drive.google.com/file/d/" + longToken + "/view",
			Owner: &connectors.Owner{Provider: "gdrive", ID: longToken, Email: "someone.with.a.very.long.name@sales-emea.example-corporation.com"}},
		{ItemID: "short.wav", Version: "1", Name: "short.wav", Size: 4096},
	}
	jobs, err := rg.store.AddRecordings(ctx, longSource, recs, "", t0)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("AddRecordings = %v, %v", jobs, err)
	}
	held := jobs[0]
	held.State, held.Hold, held.Reason, held.ExternalID, held.UpdatedAt = bridge.StateHeld, bridge.HoldSourceBlocked, longReason, "gdrive:"+longToken, t0
	if err := rg.store.Update(ctx, &held, bridge.StateDiscovered, longReason); err != nil {
		t.Fatal(err)
	}
	failed := jobs[1]
	failed.State, failed.Reason, failed.UpdatedAt = bridge.StateFailed, "failed: "+longError, t0
	if err := rg.store.Update(ctx, &failed, bridge.StateDiscovered, failed.Reason); err != nil {
		t.Fatal(err)
	}
	d := deadWithError(t, rg, &held, longEndpoint)
	at := t0.Add(3 * time.Second)
	if err := rg.store.DisableEndpoint(ctx, longEndpoint, "answered 410 Gone: "+longError, at); err != nil {
		t.Fatal(err)
	}
	tick := t0.Truncate(time.Hour)
	rg.store.ClaimRun(ctx, longExport, tick, t0, time.Minute)
	rg.store.FinishRun(ctx, bridge.ExportRun{Export: longExport, Tick: tick,
		Status: bridge.ExportFailed, Location: "s3://archive-bucket-eu-west-1/transcripts/" + longToken, Error: "put object: " + longError,
		StartedAt: t0, FinishedAt: t0}, nil, tick, bridge.Event{Type: bridge.EventExportFailed})
	manifestTick := longManifest(t, rg)
	rg.store.Audit(ctx, bridge.AuditEntry{At: t0, Who: "admin session 1a2b3c4d from 2001:db8:85a3:8d3:1319:8a2e:370:7348", Action: "replay",
		Targets: []string{d.ID, held.ID, longToken}, Detail: "every dead delivery to " + longEndpoint + " since " + t0.Format(time.RFC3339), Error: longError})
	return rg, []view{
		{"overview", "/"}, {"jobs", "/jobs"}, {"jobs-search", "/jobs?q=Quarterly"}, {"job-held", "/jobs/" + held.ID},
		{"job-failed", "/jobs/" + failed.ID}, {"held", "/held"}, {"deliveries", "/deliveries"}, {"dead-letters", "/deliveries?status=dead"},
		{"delivery", "/deliveries/" + d.ID}, {"endpoints", "/endpoints"}, {"exports", "/exports"}, {"audit", "/audit"},
		{"manifest", "/exports/manifest?export=" + longExport + "&tick=" + url.QueryEscape(manifestTick.Format(time.RFC3339))},
		{"not-found", "/jobs/" + longToken},
	}
}

// longManifest stores a completed run of longExport an hour after the failed one, whose
// manifest names long titles, files and ids, and returns its tick.
func longManifest(t *testing.T, rg *rig) time.Time {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "exports", longSource, "2026-11-02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	title := strings.TrimSuffix(longFile, ".mp4")
	m := export.Manifest{Export: longExport, Format: "md", Layout: "zip", Counts: export.Counts{Listed: 2, Exported: 1, Skipped: 1},
		Archives:    []export.Archive{{File: longExport + "-20261102T100000Z-001.zip", Size: 1 << 20, SHA256: strings.Repeat("9f86d081884c7d65", 4), Count: 1}},
		Transcripts: []export.Transcript{{ID: "01a21dca-4712-7c59-a4af-2f43c12db1b2", Title: title, ExternalID: "gdrive:" + longToken, File: title + ".md", Archive: longExport + "-001.zip"}},
		Skipped:     []export.Skipped{{ID: "01a21dca-4712-7c59-a4af-2f43c12db1b3", Title: title, Reason: "deleted in between: " + longError}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, export.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tick := t0.Truncate(time.Hour).Add(time.Hour)
	rg.store.ClaimRun(ctx, longExport, tick, t0, time.Minute)
	rg.store.FinishRun(ctx, bridge.ExportRun{Export: longExport, Tick: tick, Status: bridge.ExportCompleted, Location: dir, Listed: 2,
		Exported: 1, Skipped: 1, StartedAt: t0, FinishedAt: t0}, []string{"tr-1"}, tick, bridge.Event{Type: bridge.EventExportCompleted})
	return tick
}

// deadWithError gives job j an event delivered to endpoint, dead after one attempt that failed
// with longError and an answer of long unbroken text, and returns the delivery.
func deadWithError(t *testing.T, rg *rig, j *bridge.Job, endpoint string) bridge.Delivery {
	t.Helper()
	ctx := context.Background()
	j.UpdatedAt = t0.Add(time.Second)
	if err := rg.store.Update(ctx, j, j.State, "", bridge.Event{Type: bridge.EventHeld, JobID: j.ID, Data: []byte(`{"reason":"` + longReason + `"}`)}); err != nil {
		t.Fatal(err)
	}
	pending, err := rg.store.PendingEvents(ctx, 10)
	if err != nil || len(pending) == 0 {
		t.Fatalf("PendingEvents = %v, %v", pending, err)
	}
	e := pending[len(pending)-1]
	if err := rg.store.FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{endpoint}, t0); err != nil {
		t.Fatal(err)
	}
	claimed, err := rg.store.Claim(ctx, endpoint, t0.Add(time.Second), time.Minute, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("Claim = %v, %v", claimed, err)
	}
	d := claimed[0]
	at := t0.Add(2 * time.Second)
	d.Status, d.Attempts, d.LastError, d.UpdatedAt = bridge.DeliveryDead, 1, longError, at
	if err := rg.store.Record(ctx, &d, bridge.Attempt{At: at, Latency: 3, Error: longError, Response: strings.Repeat("<html><body>"+longToken, 3)}); err != nil {
		t.Fatal(err)
	}
	return d
}

// overflowJS lists what overflows horizontally, as "what: how": the document wider than the
// window, and each element of a card (or of main) that reaches outside it or whose content
// spills out of its own box, unless a scrolling or clipping box inside the card holds it.
const overflowJS = `(() => {
  const out = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) out.push("document: scrollWidth " + de.scrollWidth + " > clientWidth " + de.clientWidth);
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const clipped = (el, box) => {
    for (let p = el.parentElement; p && p !== box; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if (ox !== "visible") return true;
    }
    return false;
  };
  const reported = new Set();
  const under = (el) => { for (let p = el.parentElement; p; p = p.parentElement) if (reported.has(p)) return true; return false; };
  for (const el of document.querySelectorAll("main *, header *")) {
    const up = el.parentElement;
    const box = up && (up.closest(".card") || up.closest("main") || up.closest("header"));
    if (!box || box === el || clipped(el, box) || under(el)) continue;
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.position === "absolute") continue;
    const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    const text = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 60);
    if (r.width > 0 && (r.right > b.right + 1 || r.left < b.left - 1)) {
      reported.add(el);
      out.push(name(el) + " [" + text + "]: " + Math.round(r.left) + ".." + Math.round(r.right) + " outside " + name(box) + " " + Math.round(b.left) + ".." + Math.round(b.right));
    } else if (cs.overflowX === "visible" && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
      reported.add(el);
      out.push(name(el) + " [" + text + "]: content " + el.scrollWidth + " px in " + el.clientWidth + " px");
    }
  }
  return out.slice(0, 20);
})()`

// TestLayoutHoldsRealText renders every view at 1280×800, 390×844 and 820×1180 with the longest real
// names, reasons and errors, and fails on horizontal overflow: the document wider than the
// window, or anything wider than its card. Each view's screenshot is kept among the test's
// artefacts (go test -artifacts -outputdir DIR).
func TestLayoutHoldsRealText(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser through every view at three sizes")
	}
	ctx := newBrowser(t)
	rg, views := longTextRig(t)
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	sizes := []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}, {"tablet", 820, 1180}}
	measure := func(name, path string) {
		for _, size := range sizes {
			browse(t, ctx, 10*time.Second, "resize", chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(1)))
			browse(t, ctx, 30*time.Second, "open "+path, chromedp.Navigate(rg.srv.URL+path), chromedp.WaitVisible(css("main h1")))
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			over, err := chromedp.Run(cctx, chromedp.Evaluate[[]string](overflowJS))
			cancel()
			if err != nil {
				t.Fatalf("browser: measure %s: %v", path, err)
			}
			shot := screenshot(t, ctx, fmt.Sprintf("%s-%s.png", size.name, name))
			if len(over) > 0 {
				t.Errorf("%s at %d×%d overflows horizontally (%s):\n  %s", path, size.w, size.h, shot, strings.Join(over, "\n  "))
			}
		}
	}
	measure("sign-in", "/login")
	browse(t, ctx, 30*time.Second, "sign in", chromedp.Navigate(rg.srv.URL+"/"), chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), testToken), chromedp.Submit(css(`#token`)), chromedp.WaitVisible(css(`#h-jobs`)))
	for _, v := range views {
		measure(v.name, v.path)
	}
}

// newBrowser starts a headless Chromium for t with a fresh profile and returns a context
// driving its first tab. Without Chromium the test skips, and fails under CI=true.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing under CI (.ci/run installs it with apt-get install -y chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing: apt-get install -y chromium to run the browser tests", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.UserDataDir(t.TempDir()), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return ctx
}

// browse runs actions in the browser within d, failing the test with what as the step.
func browse(t *testing.T, ctx context.Context, d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(cctx, actions...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// screenshot saves the whole page as name among the test's artefacts and returns its path.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(cctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
