package bridge_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// replica returns another pipeline like e's, on its own handle of e's database: another
// process sharing the store.
func (e *env) replica(t testing.TB, name string) *bridge.Pipeline {
	t.Helper()
	store, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := e.p
	r := &bridge.Pipeline{Store: store, API: p.API, Instance: p.Instance, Sources: p.Sources, UploadConcurrency: p.UploadConcurrency,
		Replica: name, Lease: p.Lease, Log: p.Log}
	return r
}

func TestReplicasDoEachThingOnce(t *testing.T) {
	e := newEnv(t, []string{"summary"})
	e.p.Replica = "r0"
	const n = 24
	for i := range n {
		e.put(t, fmt.Sprintf("f%02d.wav", i), wav(2, uint64(i)))
	}
	replicas := []*bridge.Pipeline{e.p, e.replica(t, "r1"), e.replica(t, "r2")}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, r := range replicas {
		wg.Go(func() {
			if err := r.Run(ctx, bridge.RunOptions{Once: true, StepInterval: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond}); err != nil {
				t.Errorf("replica %s: Run = %v", r.Replica, err)
			}
		})
	}
	wg.Wait()
	if ws := e.sb.Workspace(t, sandboxtest.WorkspaceID); ws.Transcriptions["completed"] != n {
		t.Errorf("sandbox holds %v, want %d completed (one transcription per file)", ws.Transcriptions, n)
	}
	reports := 0
	for _, en := range e.sb.Journal(t) {
		if en.Method == "POST" && len(en.Path) > len(sandbox.BasePath) && en.Status < 300 && hasSuffix(en.Path, "/reports") {
			reports++
		}
	}
	if reports > n {
		t.Errorf("%d report requests for %d transcriptions, want at most one each", reports, n)
	}
	if states := e.states(t); len(states) != n {
		t.Errorf("%d jobs, want %d", len(states), n)
	}
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// stalled is a source whose Open waits until release is closed: a replica paused mid-upload.
type stalled struct {
	connectors.Source
	opened  chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stalled) Open(ctx context.Context, r connectors.Recording) (io.ReadCloser, error) {
	first := false
	s.once.Do(func() { first = true; close(s.opened) })
	if first {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Source.Open(ctx, r)
}

func TestUploadIsTakenOverWhenItsLeaseRunsOut(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, "a.wav", wav(2, 1))
	ctx := context.Background()
	// Replica A claims the upload and stalls in the source; its lease is renewed every 100 ms.
	a := e.replica(t, "a")
	a.Lease = 300 * time.Millisecond
	sc := *a.Sources["inbox"]
	st := &stalled{Source: sc.Source, opened: make(chan struct{}), release: make(chan struct{})}
	sc.Source = st
	a.Sources = map[string]*bridge.SourceConfig{"inbox": &sc}
	if _, err := a.Scan(ctx, "inbox"); err != nil {
		t.Fatal(err)
	}
	var uploads sync.WaitGroup
	if err := a.Step(ctx, &uploads, false); err != nil {
		t.Fatal(err)
	}
	<-st.opened
	jobs, _ := e.store.Jobs(ctx, bridge.JobFilter{})
	if len(jobs) != 1 || jobs[0].State != bridge.StateUploading {
		t.Fatalf("after A's step: jobs %+v, want one in uploading", jobs)
	}
	key := jobs[0].IdempotencyKey
	// While A's lease runs, B leaves the job alone.
	b := e.replica(t, "b")
	var none sync.WaitGroup
	if err := b.Step(ctx, &none, false); err != nil {
		t.Fatal(err)
	}
	none.Wait()
	if j, _ := e.store.Job(ctx, jobs[0].ID); j.State != bridge.StateUploading || j.Attempts != 1 || j.Revision != jobs[0].Revision && j.NextAt.Before(jobs[0].NextAt) {
		t.Fatalf("B's step while A holds the upload: job %+v, want A's attempt untouched", j)
	}
	if h, _ := e.store.History(ctx, jobs[0].ID); len(h) != 3 {
		t.Errorf("History after B's step = %+v; want found, ready, A's attempt and nothing of B", h)
	}
	// B, an hour later by its clock, finds the lease run out, takes the job over with the same
	// key and uploads it; A's next renewal is refused and its attempt ends.
	b.Now = func() time.Time { return time.Now().Add(time.Hour) }
	for deadline := time.Now().Add(30 * time.Second); ; {
		var wg sync.WaitGroup
		if err := b.Step(ctx, &wg, false); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		j, _ := e.store.Job(ctx, jobs[0].ID)
		if j.State == bridge.StateQueued {
			if j.IdempotencyKey != key {
				t.Errorf("B uploaded with key %s, want A's %s (within the idempotency window)", j.IdempotencyKey, key)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B never took the upload over: job %s in %s", j.ID, j.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(st.release)
	uploads.Wait()
	e.run(t)
	if ws := e.sb.Workspace(t, sandboxtest.WorkspaceID); ws.Transcriptions["completed"] != 1 {
		t.Errorf("sandbox holds %v, want 1 completed", ws.Transcriptions)
	}
	if j, _ := e.store.Job(ctx, jobs[0].ID); j.State != bridge.StateDone {
		t.Errorf("job in %s, want done", j.State)
	}
}

func TestOneReplicaScansASourceAtATime(t *testing.T) {
	e := newEnv(t, nil)
	e.p.Replica = "a"
	e.put(t, "a.wav", wav(2, 1))
	ctx := context.Background()
	store := e.store
	if ok, err := store.Lease(ctx, "source:inbox", "other", time.Now(), time.Hour); err != nil || !ok {
		t.Fatalf("Lease(source:inbox, other) = %v, %v", ok, err)
	}
	if n, err := e.p.Scan(ctx, "inbox"); err != nil || n != 0 {
		t.Errorf("Scan(inbox) while another replica scans = %d, %v; want 0, nil", n, err)
	}
	if err := store.Release(ctx, "source:inbox", "other"); err != nil {
		t.Fatal(err)
	}
	if n, err := e.p.Scan(ctx, "inbox"); err != nil || n != 1 {
		t.Errorf("Scan(inbox) once the lease is free = %d, %v; want 1, nil", n, err)
	}
	if ls, _ := store.Leases(ctx); len(ls) != 0 {
		t.Errorf("Leases() after the scan = %+v, want none (a finished scan gives its lease up)", ls)
	}
}

func TestOneReplicaTracks(t *testing.T) {
	e := newEnv(t, nil, func(o *sandbox.Options) { o.TimeScale = 1000 }) // they stay in flight
	for i := range 4 {
		e.put(t, fmt.Sprintf("f%02d.wav", i), wav(2, uint64(i)))
	}
	ctx := context.Background()
	e.p.Scan(ctx, "inbox")
	for range 3 {
		var wg sync.WaitGroup
		e.p.Step(ctx, &wg, false)
		wg.Wait()
	}
	if c, _ := e.store.Counts(ctx); c[bridge.StateQueued]+c[bridge.StateProcessing] != 4 {
		t.Fatalf("counts %v, want 4 in flight", c)
	}
	requests := func(step func()) int {
		before := len(e.sb.Journal(t))
		step()
		return len(e.sb.Journal(t)) - before - 0
	}
	one := requests(func() { e.replica(t, "solo").Step(ctx, &sync.WaitGroup{}, true) })
	e.store.Release(ctx, "tracker", "solo")
	three := requests(func() {
		var wg sync.WaitGroup
		for i := range 3 {
			r := e.replica(t, fmt.Sprint("r", i))
			wg.Go(func() { r.Step(ctx, &sync.WaitGroup{}, true) })
		}
		wg.Wait()
	})
	if one == 0 || three != one {
		t.Errorf("a tracking step costs %d requests on one replica and %d on three together; want the same, not zero", one, three)
	}
}
