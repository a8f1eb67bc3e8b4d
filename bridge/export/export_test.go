package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// fixture is a sandbox holding n completed transcriptions, a store and an exporter.
type fixture struct {
	sb     *sandboxtest.Sandbox
	client *api.Client
	store  *sqlite.Store
	ex     *export.Exporter
	start  time.Time
}

// completed250 returns a fixture of the test's own: a sandbox with 250 completed
// transcriptions (uploaded in well under a second) and an empty store.
func completed250(t *testing.T) *fixture {
	t.Helper()
	return withStore(t, newFixture(t, 250))
}

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		o.TimeScale, o.DataRate = 0.0005, 1000000
		o.Seed.Workspaces[0].Limits.Concurrency = 50
		o.Seed.Workspaces[0].BalanceMinutes = 100000
	})
	client, err := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey, DataPerMinute: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sb: sb, client: client, start: time.Now().UTC().Add(-time.Minute)}
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 10)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			data := mediatest.WAV(2, 0, uint64(i+1))
			res, err := client.Upload(ctx, api.UploadParams{Filename: fmt.Sprintf("call-%03d.wav", i), Size: int64(len(data)), Body: bytes.NewReader(data),
				ExternalID: fmt.Sprintf("crm-%03d", i)})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = res.UUID
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := client.Wait(ctx, id, api.WaitOptions{PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func withStore(t *testing.T, f *fixture) *fixture {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c := *f
	c.store = store
	c.ex = &export.Exporter{Store: store, API: f.client}
	return &c
}

func config(t *testing.T, layout, dest string, since time.Time) *export.Config {
	c := &export.Config{Name: "nightly", Schedule: "0 2 * * *", Format: "md", Layout: layout, Destination: dest,
		Since: since.Format(time.RFC3339)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func readManifest(t *testing.T, dir string) export.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, export.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestZipRunsAndManifest: 250 completed transcripts → archives of 100, 100 and 50 and a
// manifest whose checksums verify; the next tick exports nothing new.
func TestZipRunsAndManifest(t *testing.T) {
	f := completed250(t)
	root := t.TempDir()
	c := config(t, export.LayoutZip, filepath.Join(root, "{{.Date}}"), f.start)
	tick := time.Now().UTC().Add(time.Minute)
	m, err := f.ex.RunTick(context.Background(), c, tick)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, tick.Format("2006-01-02"))
	got := readManifest(t, dir)
	if m.Counts.Listed != 250 || got.Counts.Exported != 250 || len(got.Archives) != 3 ||
		got.Archives[0].Count != 100 || got.Archives[1].Count != 100 || got.Archives[2].Count != 50 {
		t.Fatalf("manifest counts %+v, archives %+v; want 250 in 100+100+50", got.Counts, got.Archives)
	}
	byFile := map[string]export.Transcript{}
	for _, tr := range got.Transcripts {
		byFile[tr.Archive+"/"+tr.File] = tr
		if tr.ExternalID == "" || tr.Title == "" {
			t.Errorf("transcript %+v lacks its external id or title", tr)
		}
	}
	for _, a := range got.Archives {
		b, err := os.ReadFile(filepath.Join(dir, a.File))
		if err != nil {
			t.Fatal(err)
		}
		if sum(b) != a.SHA256 || int64(len(b)) != a.Size {
			t.Errorf("%s: checksum or size differs from the manifest", a.File)
		}
		z, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		for _, zf := range z.File {
			r, _ := zf.Open()
			body, _ := io.ReadAll(r)
			r.Close()
			if tr, ok := byFile[a.File+"/"+zf.Name]; !ok || tr.SHA256 != sum(body) || tr.Size != int64(len(body)) {
				t.Errorf("%s/%s: not in the manifest with its checksum", a.File, zf.Name)
			}
		}
	}
	runs, _ := f.store.Runs(context.Background(), "nightly", 0)
	if len(runs) != 1 || runs[0].Status != bridge.ExportCompleted || runs[0].Exported != 250 {
		t.Errorf("runs = %+v", runs)
	}
	// The next tick starts at the checkpoint: nothing new.
	m, err = f.ex.RunTick(context.Background(), c, tick.Add(24*time.Hour))
	if err != nil || m.Counts.Listed != 0 {
		t.Errorf("second run = %+v, %v; want nothing listed", m, err)
	}
}

func TestFilesLayoutNamesAreUnique(t *testing.T) {
	f := completed250(t)
	root := t.TempDir()
	c := config(t, export.LayoutFiles, root, f.start)
	m, err := f.ex.RunTick(context.Background(), c, time.Now().UTC().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	files := 0
	for _, e := range entries {
		if e.Name() != export.ManifestName {
			files++
		}
	}
	seen := map[string]bool{}
	for _, tr := range m.Transcripts {
		if seen[tr.File] {
			t.Errorf("file %s used twice", tr.File)
		}
		seen[tr.File] = true
		b, err := os.ReadFile(filepath.Join(root, tr.File))
		if err != nil || sum(b) != tr.SHA256 {
			t.Errorf("%s: missing or not matching its checksum", tr.File)
		}
	}
	if files != 250 || len(seen) != 250 {
		t.Errorf("%d files, %d in the manifest; want 250 each", files, len(seen))
	}
}

// TestCatchUpRunsTheLatestMissedTickOnce: with the bridge down for three nights, the next start
// runs one export (the latest tick), not three.
func TestCatchUpRunsTheLatestMissedTickOnce(t *testing.T) {
	f := completed250(t)
	root := t.TempDir()
	c := config(t, export.LayoutZip, filepath.Join(root, "{{.Date}}"), f.start.Add(-96*time.Hour))
	ctx := context.Background()
	day := time.Now().UTC().Truncate(24 * time.Hour)
	first := day.Add(-3*24*time.Hour + 2*time.Hour) // 02:00 three days ago
	if _, err := f.ex.RunTick(ctx, c, first); err != nil {
		t.Fatal(err)
	}
	now := day.Add(2*time.Hour + 30*time.Minute)
	if now.After(time.Now()) { // keep "now" in the past of the sandbox's clock
		now = time.Now().UTC()
	}
	f.ex.Now = func() time.Time { return now }
	if err := f.ex.CatchUp(ctx, []*export.Config{c}); err != nil {
		t.Fatal(err)
	}
	runs, _ := f.store.Runs(ctx, "nightly", 0)
	if len(runs) != 2 {
		t.Fatalf("runs after catch-up = %d, want 2 (the first and one catch-up)", len(runs))
	}
	if want := export.LatestTick(c, first, now); !runs[0].Tick.Equal(want) {
		t.Errorf("catch-up ran tick %v, want the latest missed one %v", runs[0].Tick, want)
	}
	if err := f.ex.CatchUp(ctx, []*export.Config{c}); err != nil {
		t.Fatal(err)
	}
	if runs, _ := f.store.Runs(ctx, "nightly", 0); len(runs) != 2 {
		t.Errorf("a second catch-up ran again: %d runs", len(runs))
	}
}

// TestCatchUpRunsTheScheduledTick: an @every schedule's firings run the tick of their minute,
// so a replica starting later in that minute catches up nothing; a run at a tick of the
// schedule's own (the last run's plus 2 s, 4 s, ...) would overlap the next minute's run on
// another replica and export the same transcripts twice.
func TestCatchUpRunsTheScheduledTick(t *testing.T) {
	f := withStore(t, newFixture(t, 3))
	c := &export.Config{Name: "nightly", Schedule: "@every 2s", Format: "md", Destination: t.TempDir(),
		Since: f.start.Add(-time.Hour).Format(time.RFC3339)}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	minute := time.Now().UTC().Add(-time.Minute).Truncate(time.Minute)
	if _, err := f.ex.RunTick(ctx, c, minute); err != nil {
		t.Fatal(err)
	}
	for _, after := range []time.Duration{37 * time.Second, 59 * time.Second} {
		f.ex.Now = func() time.Time { return minute.Add(after) }
		if err := f.ex.CatchUp(ctx, []*export.Config{c}); err != nil {
			t.Fatal(err)
		}
		if runs, _ := f.store.Runs(ctx, "nightly", 0); len(runs) != 1 {
			t.Errorf("CatchUp at %s after the tick's run: %d runs (last at %v), want 1", after, len(runs), runs[0].Tick)
		}
	}
}

// TestOneRunnerPerTick: two exporters on one store claim the same tick; one runs.
func TestOneRunnerPerTick(t *testing.T) {
	f := completed250(t)
	c := config(t, export.LayoutZip, t.TempDir(), f.start)
	tick := time.Now().UTC().Add(time.Minute)
	ok, err := f.store.ClaimRun(context.Background(), c.Name, tick, time.Now(), time.Hour)
	if err != nil || !ok {
		t.Fatalf("first claim = %v, %v", ok, err)
	}
	if _, err := f.ex.RunTick(context.Background(), c, tick); err != export.ErrBusy {
		t.Errorf("a second runner on the same tick = %v, want ErrBusy", err)
	}
}

// TestS3Destination writes a run to an in-process S3 server over HTTP.
func TestS3Destination(t *testing.T) {
	f := completed250(t)
	backend := s3mem.New()
	backend.CreateBucket("archive")
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "s3.secret")
	os.WriteFile(secret, []byte("test-secret"), 0o600)
	c := &export.Config{Name: "nightly", Schedule: "@daily", Layout: export.LayoutZip, Destination: "s3://archive/exports/{{.Date}}",
		Since: f.start.Format(time.RFC3339), S3: export.S3Config{Region: "us-east-1", Endpoint: srv.URL, PathStyle: true,
			AccessKeyID: "test", SecretAccessKeyFile: secret}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	tick := time.Now().UTC().Add(time.Minute)
	m, err := f.ex.RunTick(context.Background(), c, tick)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "exports/" + tick.Format("2006-01-02") + "/"
	for _, a := range m.Archives {
		obj, err := backend.GetObject("archive", prefix+a.File, nil)
		if err != nil {
			t.Fatalf("%s: %v", a.File, err)
		}
		b, _ := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		if sum(b) != a.SHA256 {
			t.Errorf("%s: checksum differs from the manifest", a.File)
		}
	}
	obj, err := backend.GetObject("archive", prefix+export.ManifestName, nil)
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	var got export.Manifest
	json.NewDecoder(obj.Contents).Decode(&got)
	if got.Counts.Exported != 250 || len(got.Archives) != 3 || got.Destination != "s3://archive/exports/"+tick.Format("2006-01-02") {
		t.Errorf("manifest in S3 = %+v", got.Counts)
	}
}

// TestRunsEmitEvents: a completed run writes export.completed, a failed one export.failed, each
// with the state change (the outbox, then the relay).
func TestRunsEmitEvents(t *testing.T) {
	f := completed250(t)
	ctx := context.Background()
	ok := config(t, export.LayoutZip, t.TempDir(), f.start)
	if _, err := f.ex.RunTick(ctx, ok, time.Now().UTC().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(blocked, nil, 0o644)
	bad := config(t, export.LayoutZip, filepath.Join(blocked, "sub"), f.start) // a folder under a file
	bad.Name = "broken"
	if _, err := f.ex.RunTick(ctx, bad, time.Now().UTC().Add(time.Minute)); err == nil {
		t.Fatal("a run to an impossible folder succeeded")
	}
	evs, _ := f.store.PendingEvents(ctx, 10)
	types := map[string]string{}
	for _, e := range evs {
		types[e.Type] = string(e.Data)
	}
	if !strings.Contains(types["export.completed"], `"exported":250`) || !strings.Contains(types["export.failed"], `"export":"broken"`) {
		t.Errorf("events = %v", types)
	}
	if cp, has, _ := f.store.Checkpoint(ctx, "broken"); has {
		t.Errorf("a failed run moved the checkpoint to %v", cp)
	}
}

// TestLateCompletionIsExportedOnce: a transcript created in a run's window but still processing
// is taken by the next run (the checkpoint stops before it), and nothing is written twice.
func TestLateCompletionIsExportedOnce(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale, o.DataRate = 0.2, 1000000 })
	client, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ex := &export.Exporter{Store: store, API: client}
	ctx := context.Background()
	start := time.Now().UTC().Add(-time.Minute)
	upload := func(name string, seed uint64) string {
		data := mediatest.WAV(2, 0, seed)
		res, err := client.Upload(ctx, api.UploadParams{Filename: name, Size: int64(len(data)), Body: bytes.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		return res.UUID
	}
	wait := func(id string) {
		if _, err := client.Wait(ctx, id, api.WaitOptions{PollMin: 50 * time.Millisecond, PollMax: 200 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	a := upload("early.wav", 1)
	wait(a)
	b := upload("late.wav", 2) // still processing when the first run lists
	c := config(t, export.LayoutFiles, filepath.Join(t.TempDir(), "{{.Time}}"), start)
	m1, err := ex.RunTick(ctx, c, time.Now().UTC().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	wait(b)
	m2, err := ex.RunTick(ctx, c, time.Now().UTC().Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(m *export.Manifest) []string {
		var out []string
		for _, tr := range m.Transcripts {
			out = append(out, tr.ID)
		}
		return out
	}
	if g1, g2 := ids(m1), ids(m2); len(g1) != 1 || g1[0] != a || len(g2) != 1 || g2[0] != b {
		t.Errorf("first run %v, second %v; want [%s] then [%s]", g1, g2, a, b)
	}
}

// TestSharedFolderKeepsEveryRun: two exports writing one folder (no per-run template) never
// replace or remove each other's files or manifests.
func TestSharedFolderKeepsEveryRun(t *testing.T) {
	f := completed250(t)
	root := t.TempDir()
	ctx := context.Background()
	a := config(t, export.LayoutFiles, root, f.start)
	a.Name = "first"
	b := config(t, export.LayoutFiles, root, f.start)
	b.Name = "second"
	ma, err := f.ex.RunTick(ctx, a, time.Now().UTC().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := f.ex.RunTick(ctx, b, time.Now().UTC().Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*export.Manifest{ma, mb} {
		for _, tr := range m.Transcripts {
			data, err := os.ReadFile(filepath.Join(root, tr.File))
			if err != nil || sum(data) != tr.SHA256 {
				t.Fatalf("%s: %s is missing or was replaced", m.Export, tr.File)
			}
		}
	}
	entries, _ := os.ReadDir(root)
	manifests := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "manifest") {
			manifests++
		}
	}
	if len(entries) != 502 || manifests != 2 {
		t.Errorf("%d files with %d manifests; want 500 transcripts and 2 manifests", len(entries), manifests)
	}
}
