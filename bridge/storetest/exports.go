package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// lease is how long the export cases hold a run.
const lease = 10 * time.Minute

var claimRunCases = append([]testCase{
	{"a new tick", func(t *testing.T, d *db) {
		now := t0.Add(time.Second)
		if ok, err := d.ClaimRun(ctx, "nightly", t0, now, lease); !ok || err != nil {
			t.Fatalf("ClaimRun(nightly, %v) = %v, %v; want true", t0, ok, err)
		}
		runs, err := d.Runs(ctx, "nightly", 10)
		if err != nil || len(runs) != 1 {
			t.Fatalf("Runs(nightly) = %+v, %v; want the claimed run", runs, err)
		}
		r := runs[0]
		if r.Export != "nightly" || !r.Tick.Equal(t0) || r.Status != bridge.ExportRunning || !r.StartedAt.Equal(now) ||
			!r.LeaseUntil.Equal(now.Add(lease)) || r.State(now) != bridge.ExportRunning {
			t.Errorf("Runs(nightly) = %+v; want running since %v, leased until %v", r, now, now.Add(lease))
		}
	}},
	{"claimed twice", func(t *testing.T, d *db) {
		d.claimRun(t, d.Stores, "nightly", t0, t0)
		for _, s := range d.handles(true) {
			if ok, err := s.ClaimRun(ctx, "nightly", t0, t0.Add(time.Minute), lease); ok || err != nil {
				t.Errorf("ClaimRun(nightly, %v) again within the lease = %v, %v; want false", t0, ok, err)
			}
		}
		for _, c := range []struct {
			name string
			tick time.Time
		}{{"nightly", t0.Add(24 * time.Hour)}, {"weekly", t0}} {
			if ok, err := d.ClaimRun(ctx, c.name, c.tick, t0.Add(time.Minute), lease); !ok || err != nil {
				t.Errorf("ClaimRun(%s, %v) = %v, %v; want true (another run)", c.name, c.tick, ok, err)
			}
		}
	}},
	{"a completed tick stays done", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), nil, time.Time{})
		if ok, err := d.ClaimRun(ctx, "nightly", t0, t0.Add(48*time.Hour), lease); ok || err != nil {
			t.Errorf("ClaimRun(nightly, %v) after it completed = %v, %v; want false", t0, ok, err)
		}
	}},
	{"a failed tick is claimed again", func(t *testing.T, d *db) {
		r := finished("nightly", t0)
		r.Status, r.Error = bridge.ExportFailed, "destination unreachable"
		d.finish(t, r, nil, time.Time{})
		now := t0.Add(time.Hour)
		if ok, err := d.ClaimRun(ctx, "nightly", t0, now, lease); !ok || err != nil {
			t.Fatalf("ClaimRun(nightly, %v) after it failed = %v, %v; want true", t0, ok, err)
		}
		if runs, _ := d.Runs(ctx, "nightly", 10); len(runs) != 1 || runs[0].Status != bridge.ExportRunning || !runs[0].LeaseUntil.Equal(now.Add(lease)) {
			t.Errorf("Runs(nightly) = %+v; want the one run, running again until %v", runs, now.Add(lease))
		}
	}},
}, append(concurrent("concurrent claims of one tick have one winner", func(t *testing.T, d *db, hs []Stores) {
	if wins := claimRunRace(t, hs, t0); wins != 1 {
		t.Errorf("8 concurrent ClaimRun(nightly, %v): %d won, want 1", t0, wins)
	}
}), concurrent("a lease runs out and one claimer takes over", func(t *testing.T, d *db, hs []Stores) {
	d.claimRun(t, hs[0], "nightly", t0, t0)
	last := hs[len(hs)-1]
	if ok, err := last.ClaimRun(ctx, "nightly", t0, t0.Add(lease-time.Second), lease); ok || err != nil {
		t.Fatalf("ClaimRun(nightly) a second before the lease ends = %v, %v; want false", ok, err)
	}
	if wins := claimRunRace(t, hs, t0.Add(lease+time.Second)); wins != 1 {
		t.Errorf("8 concurrent ClaimRun(nightly) after the lease: %d won, want 1", wins)
	}
})...)...)

// claimRunRace has 8 callers claim (nightly, t0) at now at once, on hs in turn, and returns how
// many won.
func claimRunRace(t *testing.T, hs []Stores, now time.Time) int {
	var mu sync.Mutex
	wins := 0
	together(8, func(i int) {
		ok, err := hs[i%len(hs)].ClaimRun(ctx, "nightly", t0, now, lease)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("ClaimRun(nightly) %d = %v", i, err)
		}
		if ok {
			wins++
		}
	})
	return wins
}

var renewRunCases = []testCase{
	{"a runner whose claim was taken over cannot renew or finish it", func(t *testing.T, d *db) {
		// The first runner is paused past its lease; a second claims the tick. Back late, the
		// first can neither renew nor finish the run: the second's claim decides.
		d.claimRun(t, d.Stores, "nightly", t0, t0)
		first := t0.Add(lease)
		later := t0.Add(lease + time.Second)
		d.claimRun(t, d.another(), "nightly", t0, later)
		if err := d.RenewRun(ctx, "nightly", t0, first, first.Add(lease)); !errors.Is(err, bridge.ErrConflict) {
			t.Errorf("RenewRun(nightly, the first runner's lease) after a take-over = %v, want ErrConflict", err)
		}
		r := finished("nightly", t0)
		r.LeaseUntil = first
		if err := d.FinishRun(ctx, r, []string{"tr-1"}, r.Until, bridge.Event{Type: bridge.EventExportCompleted}); !errors.Is(err, bridge.ErrConflict) {
			t.Errorf("FinishRun(nightly, the first runner's lease) after a take-over = %v, want ErrConflict", err)
		}
		if runs, _ := d.Runs(ctx, "nightly", 1); len(runs) != 1 || runs[0].Status != bridge.ExportRunning || !runs[0].LeaseUntil.Equal(later.Add(lease)) {
			t.Errorf("Runs(nightly, 1) = %+v; want the second runner's claim, running until %v", runs, later.Add(lease))
		}
		if ex, _ := d.Exported(ctx, "nightly", []string{"tr-1"}); ex["tr-1"] {
			t.Error("Exported(nightly, tr-1) after the late runner's FinishRun = true, want nothing written")
		}
		r.LeaseUntil = later.Add(lease)
		if err := d.FinishRun(ctx, r, []string{"tr-1"}, r.Until, bridge.Event{}); err != nil {
			t.Errorf("FinishRun(nightly, the second runner's lease) = %v, want nil", err)
		}
	}},
	{"extends the lease", func(t *testing.T, d *db) {
		d.claimRun(t, d.Stores, "nightly", t0, t0)
		until := t0.Add(3 * lease)
		if err := d.RenewRun(ctx, "nightly", t0, t0.Add(lease), until); err != nil {
			t.Fatalf("RenewRun(nightly, %v, %v) = %v", t0, until, err)
		}
		if ok, _ := d.another().ClaimRun(ctx, "nightly", t0, t0.Add(lease+time.Second), lease); ok {
			t.Errorf("ClaimRun(nightly) after the first lease but within the renewed one = true, want false")
		}
		if runs, _ := d.Runs(ctx, "nightly", 1); len(runs) != 1 || !runs[0].LeaseUntil.Equal(until) {
			t.Errorf("Runs(nightly, 1) = %+v; want leased until %v", runs, until)
		}
		if ok, _ := d.ClaimRun(ctx, "nightly", t0, until.Add(time.Second), lease); !ok {
			t.Errorf("ClaimRun(nightly) after the renewed lease = false, want true")
		}
	}},
	{"unknown run", func(t *testing.T, d *db) {
		d.RenewRun(ctx, "nightly", t0, t0.Add(lease), t0.Add(2*lease)) // an error or nothing: either way no run
		if runs, err := d.Runs(ctx, "", 10); err != nil || len(runs) != 0 {
			t.Errorf("Runs() after RenewRun of a run never claimed = %+v, %v; want none", runs, err)
		}
		if ok, err := d.ClaimRun(ctx, "nightly", t0, t0, lease); !ok || err != nil {
			t.Errorf("ClaimRun(nightly, %v) after RenewRun of it = %v, %v; want true", t0, ok, err)
		}
	}},
}

var finishRunCases = []testCase{
	{"stores the outcome, the ids, the checkpoint and the event", func(t *testing.T, d *db) {
		r := finished("nightly", t0)
		ev := bridge.Event{Type: bridge.EventExportCompleted, Data: []byte(`{"export":"nightly"}`)}
		d.claimRun(t, d.Stores, r.Export, r.Tick, r.StartedAt)
		if err := d.FinishRun(ctx, r, []string{"tr-1", "tr-2"}, r.Until, ev); err != nil {
			t.Fatalf("FinishRun(nightly, %v) = %v", r.Tick, err)
		}
		runs, err := d.Runs(ctx, "nightly", 10)
		if err != nil || len(runs) != 1 || !sameRun(runs[0], r) {
			t.Errorf("Runs(nightly) = %+v, %v; want %+v", runs, err, r)
		}
		if got, err := d.Exported(ctx, "nightly", []string{"tr-1", "tr-2", "tr-3"}); err != nil || len(got) != 2 || !got["tr-1"] || !got["tr-2"] {
			t.Errorf("Exported(nightly, tr-1 tr-2 tr-3) = %v, %v; want tr-1 and tr-2", got, err)
		}
		if cp, ok, err := d.Checkpoint(ctx, "nightly"); !ok || err != nil || !cp.Equal(r.Until) {
			t.Errorf("Checkpoint(nightly) = %v, %v, %v; want %v", cp, ok, err, r.Until)
		}
		if evs := d.pending(t); len(evs) != 1 || evs[0].Type != ev.Type || !sameJSON(evs[0].Data, ev.Data) || !evs[0].CreatedAt.Equal(r.FinishedAt) {
			t.Errorf("PendingEvents() = %+v; want %s at %v", evs, ev.Type, r.FinishedAt)
		}
	}},
	{"no checkpoint to advance, no event", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), []string{"tr-1"}, time.Time{})
		if cp, ok, err := d.Checkpoint(ctx, "nightly"); ok || err != nil {
			t.Errorf("Checkpoint(nightly) after FinishRun without advanceTo = %v, %v, %v; want none", cp, ok, err)
		}
		if evs := d.pending(t); len(evs) != 0 {
			t.Errorf("PendingEvents() after FinishRun without an event type = %+v, want none", evs)
		}
	}},
	{"the checkpoint never moves back", func(t *testing.T, d *db) {
		later := t0.Add(24 * time.Hour)
		d.finish(t, finished("nightly", later), nil, later)
		d.finish(t, finished("nightly", t0), nil, t0) // a catch-up of an older tick
		if cp, ok, err := d.Checkpoint(ctx, "nightly"); !ok || err != nil || !cp.Equal(later) {
			t.Errorf("Checkpoint(nightly) = %v, %v, %v; want %v", cp, ok, err, later)
		}
	}},
	{"an id exported again stays once", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), []string{"tr-1"}, t0)
		d.finish(t, finished("nightly", t0.Add(24*time.Hour)), []string{"tr-1", "tr-2"}, t0.Add(24*time.Hour))
		if got, err := d.Exported(ctx, "nightly", []string{"tr-1", "tr-2"}); err != nil || len(got) != 2 {
			t.Errorf("Exported(nightly, tr-1 tr-2) = %v, %v; want both", got, err)
		}
	}},
	{"a run never claimed", func(t *testing.T, d *db) {
		r := finished("nightly", t0)
		err := d.FinishRun(ctx, r, []string{"tr-1"}, r.Until, bridge.Event{Type: bridge.EventExportCompleted})
		runs, _ := d.Runs(ctx, "nightly", 10)
		if err == nil && len(runs) == 1 {
			return // stored as given: consistent
		}
		// Otherwise it fails and writes nothing: no half-written outcome.
		_, advanced, _ := d.Checkpoint(ctx, "nightly")
		exported, _ := d.Exported(ctx, "nightly", []string{"tr-1"})
		if err == nil || len(runs) != 0 || advanced || len(exported) != 0 || len(d.pending(t)) != 0 {
			t.Errorf("FinishRun(nightly, %v) never claimed = %v, leaving %d runs, checkpoint moved %v, exported %v, %d events; "+
				"want the run stored, or an error and nothing written", t0, err, len(runs), advanced, exported, len(d.pending(t)))
		}
	}},
}

var exportedCases = []testCase{
	{"per export", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), []string{"tr-1"}, time.Time{})
		if got, err := d.Exported(ctx, "weekly", []string{"tr-1"}); err != nil || len(got) != 0 {
			t.Errorf("Exported(weekly, tr-1) = %v, %v; want none (nightly exported it)", got, err)
		}
	}},
	{"none", func(t *testing.T, d *db) {
		for _, in := range [][]string{nil, {"tr-1"}} {
			if got, err := d.Exported(ctx, "nightly", in); err != nil || len(got) != 0 {
				t.Errorf("Exported(nightly, %v) = %v, %v; want none", in, got, err)
			}
		}
	}},
	{"many ids", func(t *testing.T, d *db) {
		var all []string
		for i := range 1300 {
			all = append(all, fmt.Sprintf("tr-%04d", i))
		}
		d.finish(t, finished("nightly", t0), all[:1200], time.Time{})
		got, err := d.Exported(ctx, "nightly", all)
		if err != nil || len(got) != 1200 || !got["tr-0000"] || !got["tr-1199"] || got["tr-1200"] {
			t.Errorf("Exported(nightly, 1300 ids) = %d of them, %v; want the first 1200", len(got), err)
		}
	}},
}

var checkpointCases = []testCase{
	{"before the first run", func(t *testing.T, d *db) {
		if cp, ok, err := d.Checkpoint(ctx, "nightly"); ok || err != nil || !cp.IsZero() {
			t.Errorf("Checkpoint(nightly) = %v, %v, %v; want zero, false, nil", cp, ok, err)
		}
	}},
	{"per export", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), nil, t0)
		d.finish(t, finished("weekly", t0), nil, t0.Add(-time.Hour))
		for name, want := range map[string]time.Time{"nightly": t0, "weekly": t0.Add(-time.Hour)} {
			if cp, ok, err := d.Checkpoint(ctx, name); !ok || err != nil || !cp.Equal(want) {
				t.Errorf("Checkpoint(%s) = %v, %v, %v; want %v", name, cp, ok, err, want)
			}
		}
	}},
}

var runsCases = []testCase{
	{"none", func(t *testing.T, d *db) {
		if runs, err := d.Runs(ctx, "", 10); err != nil || len(runs) != 0 {
			t.Errorf("Runs() = %+v, %v; want none", runs, err)
		}
	}},
	{"newest first, one export or all, up to limit", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0), nil, time.Time{})
		d.finish(t, finished("nightly", t0.Add(48*time.Hour)), nil, time.Time{})
		d.finish(t, finished("weekly", t0.Add(24*time.Hour)), nil, time.Time{})
		d.claimRun(t, d.Stores, "nightly", t0.Add(72*time.Hour), t0.Add(72*time.Hour))
		for _, tc := range []struct {
			export string
			limit  int
			want   string
		}{
			{"nightly", 10, "nightly+72h nightly+48h nightly+0h"},
			{"", 10, "nightly+72h nightly+48h weekly+24h nightly+0h"},
			{"", 2, "nightly+72h nightly+48h"},
			{"monthly", 10, ""},
		} {
			runs, err := d.Runs(ctx, tc.export, tc.limit)
			got := ""
			for i, r := range runs {
				if i > 0 {
					got += " "
				}
				got += fmt.Sprintf("%s+%.0fh", r.Export, r.Tick.Sub(t0).Hours())
			}
			if err != nil || got != tc.want {
				t.Errorf("Runs(%q, %d) = [%s], %v; want [%s]", tc.export, tc.limit, got, err, tc.want)
			}
		}
	}},
}

var lastTickCases = []testCase{
	{"none", func(t *testing.T, d *db) {
		if tick, ok, err := d.LastTick(ctx, "nightly"); ok || err != nil || !tick.IsZero() {
			t.Errorf("LastTick(nightly) = %v, %v, %v; want zero, false, nil", tick, ok, err)
		}
	}},
	{"the latest tick with a run", func(t *testing.T, d *db) {
		d.finish(t, finished("nightly", t0.Add(24*time.Hour)), nil, time.Time{})
		d.claimRun(t, d.Stores, "nightly", t0.Add(48*time.Hour), t0) // running
		d.claimRun(t, d.Stores, "nightly", t0, t0)
		d.claimRun(t, d.Stores, "weekly", t0.Add(96*time.Hour), t0)
		if tick, ok, err := d.LastTick(ctx, "nightly"); !ok || err != nil || !tick.Equal(t0.Add(48*time.Hour)) {
			t.Errorf("LastTick(nightly) = %v, %v, %v; want %v", tick, ok, err, t0.Add(48*time.Hour))
		}
	}},
}

var sourceOfCases = []testCase{
	{"the job's source", func(t *testing.T, d *db) {
		d.add(t, "inbox", t0, rec("a", "1"))
		j := d.add(t, "drive", t0, rec("b", "1"))[0]
		j.TranscriptionID = "tr-1"
		d.move(t, &j, bridge.StateQueued, t0)
		if src, err := d.SourceOf(ctx, "tr-1"); src != "drive" || err != nil {
			t.Errorf("SourceOf(tr-1) = %q, %v; want drive", src, err)
		}
	}},
	{"unknown transcription", func(t *testing.T, d *db) {
		d.job(t)
		if src, err := d.SourceOf(ctx, "missing"); src != "" || err != nil {
			t.Errorf("SourceOf(missing) = %q, %v; want \"\", nil", src, err)
		}
	}},
}

// claimRun claims (export, tick) at now on handle s, failing the test unless it wins.
func (d *db) claimRun(t *testing.T, s Stores, name string, tick, now time.Time) {
	t.Helper()
	if ok, err := s.ClaimRun(ctx, name, tick, now, lease); !ok || err != nil {
		t.Fatalf("ClaimRun(%s, %v, %v) = %v, %v; want true", name, tick, now, ok, err)
	}
}

// finish claims r's tick and finishes it with ids, advancing the checkpoint to advanceTo, with
// no event.
func (d *db) finish(t *testing.T, r bridge.ExportRun, ids []string, advanceTo time.Time) {
	t.Helper()
	d.claimRun(t, d.Stores, r.Export, r.Tick, r.StartedAt)
	if err := d.FinishRun(ctx, r, ids, advanceTo, bridge.Event{}); err != nil {
		t.Fatalf("FinishRun(%s, %v) = %v", r.Export, r.Tick, err)
	}
}

// finished is a completed run of export at tick: the day before it, written in a minute.
func finished(name string, tick time.Time) bridge.ExportRun {
	return bridge.ExportRun{Export: name, Tick: tick, Status: bridge.ExportCompleted, From: tick.Add(-24 * time.Hour), Until: tick,
		Location: "/exports/" + name + "/" + tick.Format("2006-01-02") + ".zip", Listed: 3, Exported: 2, Skipped: 1,
		StartedAt: tick, FinishedAt: tick.Add(time.Minute)}
}

// sameRun compares a finished run with what was stored, times by instant (the lease is the
// store's).
func sameRun(got, want bridge.ExportRun) bool {
	for _, p := range []struct{ g, w *time.Time }{{&got.Tick, &want.Tick}, {&got.From, &want.From}, {&got.Until, &want.Until},
		{&got.StartedAt, &want.StartedAt}, {&got.FinishedAt, &want.FinishedAt}} {
		if !p.g.Equal(*p.w) {
			return false
		}
		*p.g = *p.w
	}
	got.LeaseUntil, want.LeaseUntil = time.Time{}, time.Time{}
	return got == want
}
