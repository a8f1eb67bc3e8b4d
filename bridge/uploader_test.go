package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// clock is the pipeline's injected clock, moved by the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// step maps discovered jobs and runs the uploads that are due, to their end.
func step(t *testing.T, p *bridge.Pipeline) {
	t.Helper()
	ctx := context.Background()
	if err := p.MapDiscovered(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	if err := p.StartUploads(ctx, &wg); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// onlyJob returns the store's one job.
func (e *env) onlyJob(t *testing.T) bridge.Job {
	t.Helper()
	jobs, err := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1: %+v", len(jobs), jobs)
	}
	return jobs[0]
}

// uploads returns the upload requests that reached the sandbox and how many it accepted.
func (e *env) uploads(t *testing.T) (posts []sandbox.JournalEntry, accepted int) {
	t.Helper()
	for _, en := range e.sb.Journal(t) {
		if en.Method == http.MethodPost && en.Path == sandbox.BasePath+"/transcriptions" {
			posts = append(posts, en)
			if en.Status == http.StatusCreated {
				accepted++
			}
		}
	}
	return posts, accepted
}

// events counts the outbox events of each type.
func (e *env) events(t *testing.T) map[string]int {
	t.Helper()
	ev, err := e.store.PendingEvents(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, x := range ev {
		out[x.Type]++
	}
	return out
}

// useZoom replaces the env's folder with a Zoom account (the zoomtest fake) holding one meeting
// recorded an hour ago, whose M4A file is returned.
func (e *env) useZoom(t *testing.T) (*zoomtest.Server, *zoomtest.File) {
	t.Helper()
	m4a, err := os.ReadFile("testdata/speech.m4a")
	if err != nil {
		t.Fatal(err)
	}
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	m := fake.AddMeeting("u1", "", "Weekly sync", time.Now().Add(-time.Hour), map[string][]byte{"M4A": m4a})
	src, err := zoom.New(zoom.Config{AccountID: zoomtest.AccountID, ClientID: zoomtest.ClientID, ClientSecret: zoomtest.ClientSecret,
		APIURL: fake.URL + "/v2", OAuthURL: fake.URL + "/oauth/token", RequestsPerSecond: 10000, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	return fake, m.File("M4A")
}

func scan(t *testing.T, p *bridge.Pipeline) {
	t.Helper()
	if n, err := p.Scan(context.Background(), "inbox"); err != nil || n != 1 {
		t.Fatalf("Scan = %d, %v; want one new job", n, err)
	}
}

// TestZoomHTMLOrShortBodyOnceIsRetried: Zoom answers a download once with an HTML page (a
// recording still processing) or a body cut short (a token expiring mid-download). The job is
// tried again later with the same Idempotency-Key and ends done, transcribed once.
func TestZoomHTMLOrShortBodyOnceIsRetried(t *testing.T) {
	for _, fault := range []string{"html", "short"} {
		t.Run(fault, func(t *testing.T) {
			e := newEnv(t, nil)
			fake, file := e.useZoom(t)
			c := &clock{t: time.Now()}
			e.p.Now = c.Now
			scan(t, e.p)
			fake.Edit(func() { file.Fault = fault })
			step(t, e.p)
			j := e.onlyJob(t)
			if j.State != bridge.StateUploading || !j.NextAt.After(c.Now()) {
				t.Fatalf("after one %s answer: %s (%q), next at %v; want uploading, to be retried later", fault, j.State, j.Reason, j.NextAt)
			}
			key := j.IdempotencyKey
			c.set(c.Now().Add(time.Hour))
			step(t, e.p)
			e.run(t)
			j = e.onlyJob(t)
			if j.State != bridge.StateDone || j.IdempotencyKey != key {
				t.Errorf("job = %s (%q) with key %s; want done with the first attempt's key %s", j.State, j.Reason, j.IdempotencyKey, key)
			}
			posts, accepted := e.uploads(t)
			if accepted != 1 {
				t.Errorf("%d uploads accepted, want exactly one", accepted)
			}
			for _, p := range posts {
				if p.IdempotencyKey != key {
					t.Errorf("an upload carried key %s, want %s on every attempt", p.IdempotencyKey, key)
				}
			}
			ws := e.sb.Workspace(t, sandboxtest.WorkspaceID)
			if ws.Transcriptions["completed"] != 1 {
				t.Errorf("sandbox holds %v, want one completed transcription", ws.Transcriptions)
			}
			// The HTML page is seen before a byte is sent; the short body only at its end, when
			// the upload is cut off: the service keeps that attempt as failed UPLOAD_INCOMPLETE
			// (nothing charged) and frees the key.
			wantPosts, wantFailed := 1, 0
			if fault == "short" {
				wantPosts, wantFailed = 2, 1
			}
			if len(posts) != wantPosts || ws.Transcriptions["failed"] != wantFailed {
				t.Errorf("%d upload requests and %d failed transcriptions, want %d and %d", len(posts), ws.Transcriptions["failed"], wantPosts, wantFailed)
			}
		})
	}
}

// TestZoomUnavailableIsHeldAfterTheDeadline: Zoom answers HTML on every download. The job is
// retried with backoff, and held (never skipped) once 72 hours have passed since the first
// failure (not since the job was found), across a restart; the hold says why and is announced
// once; the job is still tried every few hours and goes through when Zoom serves the file.
func TestZoomUnavailableIsHeldAfterTheDeadline(t *testing.T) {
	e := newEnv(t, nil)
	fake, file := e.useZoom(t)
	fake.Edit(func() { file.Always = "html" })
	t0 := time.Now()
	c := &clock{t: t0}
	e.p.Now = c.Now
	scan(t, e.p)
	if err := e.p.MapDiscovered(context.Background()); err != nil {
		t.Fatal(err)
	}
	at := func(h float64) { c.set(t0.Add(time.Duration(h * float64(time.Hour)))) }
	state := func(want bridge.State, when string) bridge.Job {
		t.Helper()
		j := e.onlyJob(t)
		if j.State != want {
			t.Fatalf("%s: job is %s (%q), want %s", when, j.State, j.Reason, want)
		}
		return j
	}
	// The job waits ten hours (say, for minutes) before its first attempt.
	at(10)
	step(t, e.p)
	state(bridge.StateUploading, "after the first failure (10 h after the job was found)")
	at(30)
	step(t, e.p)
	state(bridge.StateUploading, "20 h after the first failure")

	// A restart: a new pipeline over the same store knows when the failures began.
	p := &bridge.Pipeline{Store: e.store, API: e.api, Instance: e.p.Instance, Sources: e.p.Sources, Now: c.Now}
	at(81)
	step(t, p)
	state(bridge.StateUploading, "71 h after the first failure")
	at(83)
	step(t, p)
	j := state(bridge.StateHeld, "73 h after the first failure")
	t.Logf("held: %s", j.Reason)
	shown := j.Reason[:min(len(j.Reason), 117)] // what bridge jobs list shows of a reason
	for _, want := range []string{"source_unavailable: ", "inbox", j.ItemID, "HTML page"} {
		if !strings.Contains(shown, want) {
			t.Errorf("held with reason %q; want its beginning to name %q", j.Reason, want)
		}
	}
	if !strings.HasPrefix(j.Reason, "source_unavailable: ") {
		t.Errorf("reason %q does not begin with source_unavailable", j.Reason)
	}
	if n := e.events(t)[bridge.EventHeld]; n != 1 {
		t.Errorf("%d %s events, want 1", n, bridge.EventHeld)
	}
	if !j.NextAt.After(c.Now().Add(time.Hour)) {
		t.Errorf("held until %v, want a few hours after %v", j.NextAt, c.Now())
	}

	// Still tried every few hours, quietly.
	at(84)
	step(t, p)
	state(bridge.StateHeld, "an hour into the hold")
	at(90)
	step(t, p)
	state(bridge.StateHeld, "tried again while Zoom still answers HTML")
	if n := e.events(t)[bridge.EventHeld]; n != 1 {
		t.Errorf("%d %s events after a second hold, want still 1", n, bridge.EventHeld)
	}
	if posts, _ := e.uploads(t); len(posts) != 0 {
		t.Errorf("%d upload requests reached the service while Zoom answered HTML, want none", len(posts))
	}

	fake.Edit(func() { file.Always = "" })
	at(95)
	step(t, p)
	state(bridge.StateQueued, "once Zoom serves the file")
	if _, accepted := e.uploads(t); accepted != 1 {
		t.Errorf("%d uploads accepted, want 1", accepted)
	}
}

// TestZoomRetryAfterIsHonoured: a 503 with Retry-After from Zoom's download is retried no
// sooner than it asks.
func TestZoomRetryAfterIsHonoured(t *testing.T) {
	e := newEnv(t, nil)
	fake, file := e.useZoom(t)
	c := &clock{t: time.Now()}
	e.p.Now = c.Now
	scan(t, e.p)
	fake.Edit(func() { file.Fault = "503" })
	step(t, e.p)
	j := e.onlyJob(t)
	if j.State != bridge.StateUploading || j.NextAt.Before(c.Now().Add(120*time.Second)) {
		t.Errorf("after a 503 with Retry-After: 120: %s (%q), next at %v; want uploading, not before %v", j.State, j.Reason, j.NextAt, c.Now().Add(120*time.Second))
	}
}

// TestZoomRecordingGoneIsSkipped: a recording deleted at Zoom (404) is a permanent failure:
// skipped with the reason, as before.
func TestZoomRecordingGoneIsSkipped(t *testing.T) {
	e := newEnv(t, nil)
	fake, file := e.useZoom(t)
	scan(t, e.p)
	fake.Edit(func() { file.ID = "deleted" }) // the download URL now finds nothing
	step(t, e.p)
	j := e.onlyJob(t)
	if j.State != bridge.StateSkipped || !strings.Contains(j.Reason, "404") {
		t.Errorf("job = %s (%q), want skipped with Zoom's 404", j.State, j.Reason)
	}
}

// TestZoomDailyLimitHoldsUntilTheReset (issue 29, point 6): a download refused for Zoom's
// spent daily limit holds the job source_blocked with Zoom's words until the limit resets at
// 00:00 UTC, never fails or skips it; released by hand once Zoom serves again, it is done.
func TestZoomDailyLimitHoldsUntilTheReset(t *testing.T) {
	e := newEnv(t, nil)
	fake, file := e.useZoom(t)
	c := &clock{t: time.Now()}
	e.p.Now = c.Now
	scan(t, e.p)
	fake.Edit(func() { file.Always = "daily" })
	step(t, e.p)
	j := e.onlyJob(t)
	now := time.Now().UTC()
	reset := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
	if j.State != bridge.StateHeld || j.Hold != bridge.HoldSourceBlocked || !strings.Contains(j.Reason, "daily") ||
		j.NextAt.Sub(reset).Abs() > time.Minute {
		t.Fatalf("after a daily-limit 429: %s/%s (%q), next at %v; want held source_blocked until %v", j.State, j.Hold, j.Reason, j.NextAt, reset)
	}
	fake.Edit(func() { file.Always = "" })
	if _, err := bridge.Release(context.Background(), e.store, j.ID, "", c.Now()); err != nil {
		t.Fatal(err)
	}
	step(t, e.p)
	e.run(t)
	if j = e.onlyJob(t); j.State != bridge.StateDone {
		t.Errorf("after the release: %s (%q), want done", j.State, j.Reason)
	}
}

// TestDriveUnavailableThenServed: Drive answers 503 (beyond its own retries) once; the job is
// retried later and done.
func TestDriveUnavailableThenServed(t *testing.T) {
	e := newEnv(t, nil)
	fake := gdrivetest.Start(t)
	const sam = "sam@acme.test"
	folder := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	fake.Put("call.wav", "audio/wav", folder, sam, "", wav(5, 1))
	src, err := gdrive.New(context.Background(), gdrive.Config{Credentials: fake.ServiceAccountJSON(), Endpoint: fake.URL,
		FolderID: folder, Subjects: []string{sam}, MaxAttempts: 1, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	c := &clock{t: time.Now()}
	e.p.Now = c.Now
	scan(t, e.p)
	if err := e.p.MapDiscovered(context.Background()); err != nil {
		t.Fatal(err)
	}
	fake.Fail(http.StatusServiceUnavailable)
	step(t, e.p)
	if j := e.onlyJob(t); j.State != bridge.StateUploading {
		t.Fatalf("after a Drive 503: %s (%q), want uploading, to be retried", j.State, j.Reason)
	}
	c.set(c.Now().Add(time.Hour))
	step(t, e.p)
	e.run(t)
	if j := e.onlyJob(t); j.State != bridge.StateDone {
		t.Errorf("job = %s (%q), want done", j.State, j.Reason)
	}
	if _, accepted := e.uploads(t); accepted != 1 {
		t.Errorf("%d uploads accepted, want 1", accepted)
	}
}

// TestS3ServerErrorThenServed: S3 answers 500 InternalError (beyond the SDK's retries) once;
// the job is retried later and done.
func TestS3ServerErrorThenServed(t *testing.T) {
	t.Setenv("AWS_MAX_ATTEMPTS", "1") // the SDK's own retries would hide the one 500
	e := newEnv(t, nil)
	backend := s3mem.New()
	if err := backend.CreateBucket("recordings"); err != nil {
		t.Fatal(err)
	}
	data := wav(5, 2)
	if _, err := backend.PutObject("recordings", "calls/a.wav", nil, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
	var fail atomic.Int32
	s3srv := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".wav") && fail.Add(-1) >= 0 {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>`)
			return
		}
		s3srv.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	src, err := s3.New(context.Background(), s3.Config{Bucket: "recordings", Prefix: "calls/", Endpoint: srv.URL, PathStyle: true,
		Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test-secret"})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	c := &clock{t: time.Now()}
	e.p.Now = c.Now
	scan(t, e.p)
	fail.Store(1)
	step(t, e.p)
	if j := e.onlyJob(t); j.State != bridge.StateUploading {
		t.Fatalf("after an S3 500: %s (%q), want uploading, to be retried", j.State, j.Reason)
	}
	c.set(c.Now().Add(time.Hour))
	step(t, e.p)
	e.run(t)
	if j := e.onlyJob(t); j.State != bridge.StateDone {
		t.Errorf("job = %s (%q), want done", j.State, j.Reason)
	}
	if _, accepted := e.uploads(t); accepted != 1 {
		t.Errorf("%d uploads accepted, want 1", accepted)
	}
}

// TestNotMediaIsSkippedBeforeUpload: files whose first bytes are no audio or video (random bytes
// or a text named .wav, an HTML page named .m4a) are skipped with the reason and never sent;
// real recordings, and files no signature can rule out, go through.
func TestNotMediaIsSkippedBeforeUpload(t *testing.T) {
	e := newEnv(t, nil)
	rng := rand.New(rand.NewPCG(9, 9))
	noise := make([]byte, 6000)
	for i := range noise {
		noise[i] = byte(rng.UintN(256))
	}
	m4a, err := os.ReadFile("testdata/speech.m4a")
	if err != nil {
		t.Fatal(err)
	}
	e.put(t, "noise.wav", noise)
	e.put(t, "minutes.wav", bytes.Repeat([]byte("Minutes of the weekly sync. Present: Sam, Olivia.\n"), 40))
	e.put(t, "error.m4a", bytes.Repeat([]byte("<html><body>Sorry, this page is not available.</body></html>\n"), 30))
	e.put(t, "good.wav", wav(5, 4))
	e.put(t, "speech.m4a", m4a)
	e.run(t)
	want := map[string]bridge.State{"noise.wav": bridge.StateSkipped, "minutes.wav": bridge.StateSkipped, "error.m4a": bridge.StateSkipped,
		"good.wav": bridge.StateDone, "speech.m4a": bridge.StateDone}
	jobs, err := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.State != want[j.ItemID] {
			t.Errorf("%s = %s (%q), want %s", j.ItemID, j.State, j.Reason, want[j.ItemID])
			continue
		}
		if j.State == bridge.StateSkipped {
			prefix := "unsupported_file_format: content of " + j.Name + " is not audio or video (first bytes "
			if !strings.HasPrefix(j.Reason, prefix) {
				t.Errorf("%s skipped with reason %q, want it to begin %q", j.ItemID, j.Reason, prefix)
			}
		}
	}
	posts, _ := e.uploads(t)
	if len(posts) != 2 {
		t.Errorf("%d upload requests, want 2 (the real recordings only)", len(posts))
	}
	ev, _ := e.store.PendingEvents(context.Background(), 100)
	skipped := 0
	for _, x := range ev {
		if x.Type == bridge.EventSkipped {
			var d struct{ Reason string }
			json.Unmarshal(x.Data, &d)
			if strings.HasPrefix(d.Reason, api.CodeUnsupportedFileFormat+": content of ") {
				skipped++
			}
		}
	}
	if skipped != 3 {
		t.Errorf("%d %s events for the content, want 3", skipped, bridge.EventSkipped)
	}
}
