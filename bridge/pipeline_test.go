package bridge_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors/localdir"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// env is a pipeline over a real SQLite store, a real folder and the sandbox on loopback.
type env struct {
	sb    *sandboxtest.Sandbox
	store *sqlite.Store
	// dbPath is the store's file (replicas open it again).
	dbPath string
	inbox  string
	p      *bridge.Pipeline
	api    *api.Client
}

func newEnv(t testing.TB, reports []string, sbOpts ...func(*sandbox.Options)) *env {
	t.Helper()
	ctx := context.Background()
	sb := sandboxtest.Start(t, append([]func(*sandbox.Options){func(o *sandbox.Options) { o.DataRate = 1000000 }}, sbOpts...)...)
	dbPath := filepath.Join(t.TempDir(), "bridge.db")
	store, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client, err := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey, HTTPClient: sandboxtest.HTTPClient(t, nil),
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 30, DataPerMinute: -1})
	if err != nil {
		t.Fatal(err)
	}
	inbox := t.TempDir()
	src, err := localdir.New(localdir.Config{Path: inbox, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	instance, _ := store.InstanceID(ctx)
	m, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:sam@acme.test", Metadata: map[string]string{"file": "{{.Name}}"}})
	if err != nil {
		t.Fatal(err)
	}
	p := &bridge.Pipeline{Store: store, API: client, Instance: instance, UploadConcurrency: 8,
		Sources: map[string]*bridge.SourceConfig{"inbox": {Name: "inbox", Type: "localdir", Source: src, Mapper: m,
			Upload: bridge.UploadOptions{Reports: reports}}}}
	return &env{sb: sb, store: store, dbPath: dbPath, inbox: inbox, p: p, api: client}
}

// run processes until nothing can move, like bridge run --once.
func (e *env) run(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.p.Run(ctx, bridge.RunOptions{Once: true, StepInterval: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond}); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func (e *env) put(t testing.TB, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.inbox, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *env) states(t testing.TB) map[string]bridge.State {
	jobs, err := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bridge.State{}
	for _, j := range jobs {
		out[j.ItemID] = j.State
	}
	return out
}

// wav is a valid 8 kHz WAV of seconds, its samples drawn from seed.
func wav(seconds float64, seed uint64) []byte { return mediatest.WAV(seconds, 0, seed) }

func TestHundredFilesUnderFaultsExactlyOnce(t *testing.T) {
	faults, _ := sandbox.ParseFaults("5xx=0.05,429=0.05,reset=0.05,latency=1ms")
	e := newEnv(t, []string{"summary"}, func(o *sandbox.Options) {
		o.Faults, o.FaultSeed = faults, 7
		o.Seed.Workspaces[0].BalanceMinutes = 1000
	})
	const n = 100
	for i := range n {
		e.put(t, fmt.Sprintf("call-%03d.wav", i), wav(30, uint64(i)))
	}
	e.run(t)
	for item, st := range e.states(t) {
		if st != bridge.StateDone {
			t.Errorf("%s ended %s", item, st)
		}
	}
	ws := e.sb.Workspace(t, sandboxtest.WorkspaceID)
	total := 0
	for _, c := range ws.Transcriptions {
		total += c
	}
	if total != n || ws.Transcriptions["completed"] != n {
		t.Errorf("the sandbox holds %v, want exactly %d completed", ws.Transcriptions, n)
	}
	if ws.AvailableMinutes != 1000-n*0.5 {
		t.Errorf("balance %v, want %v: each 30 s file charged once", ws.AvailableMinutes, 1000-n*0.5)
	}
	// One completed transcription per external id, owned by the mapped author.
	seen := map[string]bool{}
	for it, err := range e.api.All(context.Background(), api.ListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[*it.ExternalID] {
			t.Errorf("external id %s transcribed twice", *it.ExternalID)
		}
		seen[*it.ExternalID] = true
		if it.Author.ID != sandboxtest.SamID {
			t.Errorf("%s owned by %s, want Sam", *it.ExternalID, it.Author.Email)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct external ids, want %d", len(seen), n)
	}
}

func TestBadFilesAreSkippedAndTheRestGoOn(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, "good.wav", wav(5, 1))
	e.put(t, "tiny.wav", wav(0.01, 2))
	e.put(t, "notes.txt", []byte("not a recording at all, but long enough to pass the size check? no."))
	e.put(t, "noise.mp3", bytes.Repeat([]byte{0x5a, 0x13}, 2000))
	e.run(t)
	want := map[string]bridge.State{"good.wav": bridge.StateDone, "tiny.wav": bridge.StateSkipped, "notes.txt": bridge.StateSkipped, "noise.mp3": bridge.StateFailed}
	got := e.states(t)
	for item, st := range want {
		if got[item] != st {
			t.Errorf("%s = %s, want %s", item, got[item], st)
		}
	}
	jobs, _ := e.store.Jobs(context.Background(), bridge.JobFilter{States: []bridge.State{bridge.StateFailed, bridge.StateSkipped}})
	for _, j := range jobs {
		if j.Reason == "" {
			t.Errorf("%s is %s without a reason", j.ItemID, j.State)
		}
		if j.ItemID == "noise.mp3" && j.Reason != api.ErrorFileCorrupted {
			t.Errorf("noise.mp3 reason = %q, want the upstream error_code verbatim", j.Reason)
		}
	}
	// Events were written for the skipped and failed ones, waiting for the relay.
	ev, _ := e.store.PendingEvents(context.Background(), 100)
	kinds := map[string]int{}
	for _, x := range ev {
		kinds[x.Type]++
	}
	if kinds[bridge.EventSkipped] != 2 || kinds[bridge.EventFailed] != 1 {
		t.Errorf("events by type = %v, want 2 %s and 1 %s", kinds, bridge.EventSkipped, bridge.EventFailed)
	}
}

func TestBalanceHoldsAndResubmits(t *testing.T) {
	e := newEnv(t, nil, func(o *sandbox.Options) { o.Seed.Workspaces[0].BalanceMinutes = 0 })
	e.put(t, "a.wav", wav(60, 1))
	e.run(t)
	jobs, _ := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if len(jobs) != 1 || jobs[0].State != bridge.StateHeld {
		t.Fatalf("with no minutes: %+v, want held", jobs)
	}
	// Half a minute: accepted (the balance is not empty) but the file needs one minute, so
	// the service ends it insufficient_balance and the job waits in resubmit.
	setBalance(t, e, 0.5)
	e.p.Now = func() time.Time { return time.Now().Add(2 * time.Minute) } // past the hold's recheck time
	e.run(t)
	j, _ := e.store.Job(context.Background(), jobs[0].ID)
	if j.State != bridge.StateResubmit || j.RequiredMinutes != 1 {
		t.Fatalf("after insufficient_balance: %s (needs %v), want resubmit needing 1 minute", j.State, j.RequiredMinutes)
	}
	firstKey := j.IdempotencyKey
	setBalance(t, e, 5)
	e.p.Now = func() time.Time { return time.Now().Add(4 * time.Minute) }
	e.run(t)
	j, _ = e.store.Job(context.Background(), j.ID)
	if j.State != bridge.StateDone || j.IdempotencyKey == firstKey {
		t.Errorf("after the top-up: %s with key %s (first %s), want done with a new key", j.State, j.IdempotencyKey, firstKey)
	}
	if ws := e.sb.Workspace(t, sandboxtest.WorkspaceID); ws.Transcriptions["completed"] != 1 || ws.AvailableMinutes != 4 {
		t.Errorf("sandbox: %v, balance %v; want one completed and 4 minutes left", ws.Transcriptions, ws.AvailableMinutes)
	}
}

func setBalance(t testing.TB, e *env, minutes float64) {
	t.Helper()
	req := fmt.Sprintf(`{"available_minutes":%v}`, minutes)
	resp, err := httpPut(e.sb.Root+sandbox.ControlPath+"/workspaces/"+sandboxtest.WorkspaceID+"/balance", req)
	if err != nil || resp != 200 {
		t.Fatalf("set balance: %d %v", resp, err)
	}
}

// TestAdoptsAfterTheIdempotencyWindow: a job left in uploading past the window is looked up by
// its bridge_job metadata and adopted, not uploaded again.
func TestAdoptsAfterTheIdempotencyWindow(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	file := wav(5, 3)
	e.put(t, "a.wav", file)
	if _, err := e.p.Scan(ctx, "inbox"); err != nil {
		t.Fatal(err)
	}
	if err := e.p.MapDiscovered(ctx); err != nil {
		t.Fatal(err)
	}
	jobs, _ := e.store.Jobs(ctx, bridge.JobFilter{})
	j := jobs[0]
	// A first attempt that landed two days ago, whose answer was never stored.
	res, err := e.api.Upload(ctx, api.UploadParams{Filename: j.Name, Size: j.Size, Body: bytes.NewReader(file),
		ExternalID: j.ExternalID, Metadata: j.Metadata, IdempotencyKey: "long-forgotten"})
	if err != nil {
		t.Fatal(err)
	}
	j.State, j.IdempotencyKey, j.AttemptAt, j.Attempts = bridge.StateUploading, "long-forgotten", time.Now().Add(-48*time.Hour), 1
	if err := e.store.Update(ctx, &j, bridge.StateReady, "crashed attempt"); err != nil {
		t.Fatal(err)
	}
	e.run(t)
	got, _ := e.store.Job(ctx, j.ID)
	if got.State != bridge.StateDone || got.TranscriptionID != res.UUID {
		t.Errorf("job = %s with %s, want done with the adopted %s", got.State, got.TranscriptionID, res.UUID)
	}
	posts := 0
	for _, en := range e.sb.Journal(t) {
		if en.Method == "POST" && en.Path == sandbox.BasePath+"/transcriptions" {
			posts++
		}
	}
	if posts != 1 {
		t.Errorf("%d uploads reached the sandbox, want only the first one", posts)
	}
}

// TestConcurrentRunsShareNothingTwice guards the in-process claim: two Steps at once never
// start the same job twice.
func TestConcurrentStepsUploadOnce(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 20 {
		e.put(t, fmt.Sprintf("f%02d.wav", i), wav(3, uint64(i)))
	}
	ctx := context.Background()
	e.p.Scan(ctx, "inbox")
	var steps, uploads sync.WaitGroup
	for range 4 {
		steps.Go(func() { e.p.Step(ctx, &uploads, true) })
	}
	steps.Wait()
	uploads.Wait()
	e.run(t)
	if ws := e.sb.Workspace(t, sandboxtest.WorkspaceID); ws.Transcriptions["completed"] != 20 {
		t.Errorf("sandbox holds %v, want 20 completed", ws.Transcriptions)
	}
}

func TestUnknownAuthorIsHeld(t *testing.T) {
	e := newEnv(t, nil)
	instance, _ := e.store.InstanceID(context.Background())
	m, err := mapping.New("inbox", "localdir", instance, mapping.Rules{Author: "email:nobody@acme.test"})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Mapper = m
	e.put(t, "a.wav", wav(3, 1))
	e.run(t)
	jobs, _ := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if len(jobs) != 1 || jobs[0].State != bridge.StateHeld || !strings.Contains(jobs[0].Reason, "author_not_member") {
		t.Fatalf("job = %s %q, want held for author_not_member", jobs[0].State, jobs[0].Reason)
	}
	if ws := e.sb.Workspace(t, sandboxtest.WorkspaceID); len(ws.Transcriptions) != 0 || ws.AvailableMinutes != 600 {
		t.Errorf("a refused author left %v and balance %v", ws.Transcriptions, ws.AvailableMinutes)
	}
}

// TestFinishedFilesMove: the pipeline lets the source act on final jobs (localdir's done/ and
// failed/ folders).
func TestFinishedFilesMove(t *testing.T) {
	e := newEnv(t, nil)
	src, err := localdir.New(localdir.Config{Path: e.inbox, Recursive: true, MoveFinished: true})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Source = src
	e.put(t, "good.wav", wav(3, 1))
	e.put(t, "notes.txt", []byte("not a recording"))
	e.run(t)
	for _, p := range []string{"done/good.wav", "failed/notes.txt"} {
		if _, err := os.Stat(filepath.Join(e.inbox, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestAuthorNotMemberMapsAgainOnce: the service refuses the author (not a member); the job goes
// back through the rules once, with a fresh member list, and is then held with the service's
// code rather than looping.
func TestAuthorNotMemberMapsAgainOnce(t *testing.T) {
	e := newEnv(t, nil)
	m, err := mapping.New("inbox", "localdir", "i", mapping.Rules{Author: "email:left@acme.test"})
	if err != nil {
		t.Fatal(err)
	}
	e.p.Sources["inbox"].Mapper = m
	e.put(t, "a.wav", wav(5, 1))
	e.run(t)
	jobs, _ := e.store.Jobs(context.Background(), bridge.JobFilter{})
	if len(jobs) != 1 || jobs[0].State != bridge.StateHeld || !strings.Contains(jobs[0].Reason, api.CodeAuthorNotMember) {
		t.Fatalf("job = %+v, want held with %s", jobs, api.CodeAuthorNotMember)
	}
	hist, _ := e.store.History(context.Background(), jobs[0].ID)
	remaps := 0
	for _, c := range hist {
		if c.To == bridge.StateDiscovered && c.From == bridge.StateUploading {
			remaps++
		}
	}
	if remaps != 1 {
		t.Errorf("the job went back to mapping %d times, want once: %+v", remaps, hist)
	}
}
