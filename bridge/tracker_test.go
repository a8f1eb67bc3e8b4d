package bridge_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
)

// TestDeletedUpstreamIsOneOutcome: a transcription deleted upstream ends its job deleted the
// same way whether the tracker notices it (queued, processing) or the reporter does
// (transcribed): a reason saying so and one transcription.deleted event, even when both look
// again.
func TestDeletedUpstreamIsOneOutcome(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []string{"summary"})
	added, err := e.store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "q.wav", Version: "1", Name: "q.wav"},
		{ItemID: "t.wav", Version: "1", Name: "t.wav"}}, "", time.Now())
	if err != nil || len(added) != 2 {
		t.Fatalf("AddRecordings = %d, %v", len(added), err)
	}
	for i, st := range []bridge.State{bridge.StateQueued, bridge.StateTranscribed} {
		j := added[i]
		j.State, j.TranscriptionID, j.UpdatedAt = st, "00000000-0000-4000-8000-00000000000"+string(rune('1'+i)), time.Now()
		if err := e.store.Update(ctx, &j, bridge.StateDiscovered, "set up"); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.p.Track(ctx); err != nil {
		t.Fatalf("Track = %v", err)
	}
	if err := e.p.SettleReports(ctx); err != nil {
		t.Fatalf("SettleReports = %v", err)
	}
	for _, a := range added { // a second reader (an export's download) finds it gone too
		j, err := e.store.Job(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if moved, err := e.p.GoneUpstream(ctx, j.TranscriptionID, "export"); moved || err != nil {
			t.Errorf("GoneUpstream(%q) again = %v, %v; want false, nil", j.TranscriptionID, moved, err)
		}
	}
	events, err := e.store.PendingEvents(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range added {
		j, err := e.store.Job(ctx, a.ID)
		if err != nil || j.State != bridge.StateDeleted || !strings.HasPrefix(j.Reason, "the transcription was deleted upstream (404 while ") {
			t.Errorf("job %s deleted upstream = %+v, %v; want deleted, the transcription was deleted upstream (404 while …)", a.ItemID, j, err)
		}
		n := 0
		for _, ev := range events {
			if ev.JobID == a.ID && ev.Type == bridge.EventDeleted {
				n++
			}
		}
		if n != 1 {
			t.Errorf("job %s deleted upstream: %d transcription.deleted events, want 1 (%+v)", a.ItemID, n, events)
		}
	}
}

// TestDeletedUpstreamOnceAcrossReplicas: replicas that notice the same deletion at once (an
// export's download on each, and a forget) end the job deleted once: one transcription.deleted.
func TestDeletedUpstreamOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	added, err := e.store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "d.wav", Version: "1", Name: "d.wav"}}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j := added[0]
	j.State, j.TranscriptionID, j.UpdatedAt = bridge.StateDone, "00000000-0000-4000-8000-0000000000d1", time.Now()
	if err := e.store.Update(ctx, &j, bridge.StateDiscovered, "set up"); err != nil {
		t.Fatal(err)
	}
	replicas := []*bridge.Pipeline{e.p, e.replica(t, "r1"), e.replica(t, "r2"), e.replica(t, "r3")}
	var wg sync.WaitGroup
	moved := make([]bool, len(replicas))
	start := make(chan struct{})
	for i, r := range replicas {
		wg.Go(func() {
			<-start
			var err error
			if moved[i], err = r.GoneUpstream(ctx, j.TranscriptionID, "an export's download"); err != nil {
				t.Errorf("replica %d: GoneUpstream = %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	n := 0
	for _, m := range moved {
		if m {
			n++
		}
	}
	events, _ := e.store.PendingEvents(ctx, 100)
	deleted := 0
	for _, ev := range events {
		if ev.Type == bridge.EventDeleted {
			deleted++
		}
	}
	if n != 1 || deleted != 1 {
		t.Errorf("%d replicas moved the job, %d transcription.deleted events; want 1 and 1", n, deleted)
	}
}

// TestForgetAfterADeletionUpstream: a job that ended deleted upstream, forgotten later, loses
// its name and owner and gets its tombstone, but no second transcription.deleted, and the
// transcription is not deleted again.
func TestForgetAfterADeletionUpstream(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	added, err := e.store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: "u.wav", Version: "1", Name: "u.wav",
		Owner: &connectors.Owner{Provider: "zoom", ID: "u1", Email: "ada@acme.test"}}}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j := added[0]
	j.State, j.TranscriptionID, j.UpdatedAt = bridge.StateDone, "00000000-0000-4000-8000-0000000000e1", time.Now()
	if err := e.store.Update(ctx, &j, bridge.StateDiscovered, "set up"); err != nil {
		t.Fatal(err)
	}
	if moved, err := e.p.GoneUpstream(ctx, j.TranscriptionID, "an export's download"); !moved || err != nil {
		t.Fatalf("GoneUpstream = %v, %v", moved, err)
	}
	del := &countingDeleter{}
	out, err := bridge.Forget(ctx, e.store, del, bridge.ForgetTarget{OwnerEmail: "ada@acme.test"}, "test", false, time.Now())
	if err != nil || len(out) != 1 || len(del.ids) != 0 {
		t.Fatalf("Forget = %+v, %v (deleted %v); want the job, no DELETE", out, err, del.ids)
	}
	got, _ := e.store.Job(ctx, j.ID)
	if got.State != bridge.StateDeleted || got.Name != "" || got.Owner != nil || !strings.Contains(got.Reason, "deleted upstream") {
		t.Errorf("job after forget = %+v; want deleted upstream (its reason kept), without name and owner", got)
	}
	events, _ := e.store.PendingEvents(ctx, 100)
	n := 0
	for _, ev := range events {
		if ev.Type == bridge.EventDeleted {
			n++
		}
	}
	if gone, _ := e.store.Tombstoned(ctx, bridge.TombstoneQuery{JobID: j.ID}); n != 1 || !gone {
		t.Errorf("%d transcription.deleted events, tombstone %v; want 1, true", n, gone)
	}
}

// contendedAPI is the env's client with the key's data budget, 250 requests a minute,
// contended or not as the test says.
type contendedAPI struct {
	*api.Client
	contended bool
}

func (c *contendedAPI) Contended() bool                  { return c.contended }
func (c *contendedAPI) DataBudget() (int, time.Duration) { return 250, time.Minute }

// TestTrackerYieldsToAContendedBudget: while other requests queue for the key's data budget,
// the tracker polls once per rate window and spends a fiftieth of it (5 of 250: its four lists,
// then one GET, the oldest job first); once the budget is free it polls whenever asked and
// learns every finished transcription at once (its first full pass lists queued ones too).
func TestTrackerYieldsToAContendedBudget(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for i := range 6 {
		e.put(t, fmt.Sprintf("f%02d.wav", i), wav(2, uint64(i)))
	}
	e.p.Scan(ctx, "inbox")
	for range 3 {
		var wg sync.WaitGroup
		e.p.Step(ctx, &wg, false)
		wg.Wait()
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // hang detector
		page, err := e.api.List(ctx, api.ListParams{Status: api.StatusCompleted})
		if err == nil && page.Total == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox completed %+v, %v after a minute; want 6", page, err)
		}
	}
	jobs, err := e.store.Jobs(ctx, bridge.JobFilter{States: []bridge.State{bridge.StateQueued}})
	if err != nil || len(jobs) != 6 {
		t.Fatalf("queued jobs = %d, %v; want 6", len(jobs), err)
	}
	slices.SortFunc(jobs, func(a, b bridge.Job) int { return cmp.Or(a.AttemptAt.Compare(b.AttemptAt), cmp.Compare(a.ID, b.ID)) })
	budget, start := &contendedAPI{Client: e.api}, time.Now()
	now := start
	e.p.API, e.p.Now = budget, func() time.Time { return now }
	for _, step := range []struct {
		after        time.Duration
		contended    bool
		wantRequests int
		wantDone     int // the oldest jobs first
	}{
		{0, true, 5, 1},
		{30 * time.Second, true, 0, 1},
		{61 * time.Second, true, 5, 2},
		{62 * time.Second, false, 9, 6},
	} {
		now, budget.contended = start.Add(step.after), step.contended
		before := len(e.sb.Journal(t))
		if err := e.p.Track(ctx); err != nil {
			t.Fatalf("Track at +%v = %v", step.after, err)
		}
		requests := len(e.sb.Journal(t)) - before
		var done []string
		for _, j := range jobs {
			if got, err := e.store.Job(ctx, j.ID); err == nil && got.State == bridge.StateDone {
				done = append(done, j.ItemID)
			}
		}
		want := make([]string, step.wantDone)
		for i := range want {
			want[i] = jobs[i].ItemID
		}
		if requests != step.wantRequests || !slices.Equal(done, want) {
			t.Errorf("Track at +%v (contended %v) = %d requests, done %v; want %d, %v",
				step.after, step.contended, requests, done, step.wantRequests, want)
		}
	}
}
