package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var addRecordingsCases = append([]testCase{
	{"new recordings are discovered jobs", func(t *testing.T, d *db) {
		now := t0.Add(time.Minute)
		added, err := d.AddRecordings(ctx, "inbox", []recording{rec("a", "1"), rec("b", "1")}, "c1", now)
		if err != nil || len(added) != 2 {
			t.Fatalf("AddRecordings(inbox, a b) = %d jobs, %v; want 2", len(added), err)
		}
		seen := map[string]bool{}
		for i, j := range added {
			want := rec(string(rune('a'+i)), "1")
			want.Source = "inbox"
			if j.ID == "" || seen[j.ID] || j.State != bridge.StateDiscovered || !j.CreatedAt.Equal(now) || !j.UpdatedAt.Equal(now) {
				t.Errorf("AddRecordings job %d = id %q, %s, created %v, updated %v; want a new id, discovered, at %v", i, j.ID, j.State, j.CreatedAt, j.UpdatedAt, now)
			}
			seen[j.ID] = true
			if !sameRecording(j.Recording, want) {
				t.Errorf("AddRecordings job %d recording = %+v, want %+v", i, j.Recording, want)
			}
			got, err := d.Job(ctx, j.ID)
			if err != nil || !sameJob(*got, j) {
				t.Errorf("Job(%s) = %+v, %v; want the job AddRecordings returned, %+v", j.ID, got, err, j)
			}
		}
	}},
	{"a second sighting is a no-op", func(t *testing.T, d *db) {
		first := d.add(t, "inbox", t0, rec("a", "1"))
		again, err := d.AddRecordings(ctx, "inbox", []recording{rec("a", "1")}, "c2", t0.Add(time.Hour))
		if err != nil || len(again) != 0 {
			t.Errorf("AddRecordings(inbox, a@1) again = %d jobs, %v; want 0, nil", len(again), err)
		}
		if all, _ := d.Jobs(ctx, bridge.JobFilter{}); len(all) != 1 || !all[0].UpdatedAt.Equal(t0) || all[0].ID != first[0].ID {
			t.Errorf("Jobs() after a second sighting = %+v; want the first job alone, untouched", all)
		}
		if h, _ := d.History(ctx, first[0].ID); len(h) != 1 {
			t.Errorf("History(%s) after a second sighting = %d changes, want 1", first[0].ID, len(h))
		}
		if c, _ := d.Cursor(ctx, "inbox"); c != "c2" {
			t.Errorf("Cursor(inbox) after a second sighting = %q, want c2 (the cursor moves even when nothing is new)", c)
		}
	}},
	{"a new version is a new job", func(t *testing.T, d *db) {
		d.add(t, "inbox", t0, rec("a", "1"))
		again, err := d.AddRecordings(ctx, "inbox", []recording{rec("a", "1"), rec("a", "2")}, "", t0)
		if err != nil || len(again) != 1 || again[0].Version != "2" {
			t.Errorf("AddRecordings(inbox, a@1 a@2) = %s, %v; want the job of a@2 alone", versions(again), err)
		}
	}},
	{"the same item in another source is another job", func(t *testing.T, d *db) {
		d.add(t, "inbox", t0, rec("a", "1"))
		other, err := d.AddRecordings(ctx, "drive", []recording{rec("a", "1")}, "", t0)
		if err != nil || len(other) != 1 || other[0].Source != "drive" {
			t.Errorf("AddRecordings(drive, a@1) = %+v, %v; want one job of source drive", other, err)
		}
	}},
	{"one recording twice in one call", func(t *testing.T, d *db) {
		added, err := d.AddRecordings(ctx, "inbox", []recording{rec("a", "1"), rec("a", "1")}, "", t0)
		if err != nil || len(added) != 1 {
			t.Errorf("AddRecordings(inbox, a@1 a@1) = %d jobs, %v; want 1", len(added), err)
		}
	}},
	{"an empty list only moves the cursor", func(t *testing.T, d *db) {
		added, err := d.AddRecordings(ctx, "inbox", nil, "page-2", t0)
		if err != nil || len(added) != 0 {
			t.Errorf("AddRecordings(inbox, none) = %d jobs, %v; want 0, nil", len(added), err)
		}
		if c, err := d.Cursor(ctx, "inbox"); c != "page-2" || err != nil {
			t.Errorf("Cursor(inbox) = %q, %v; want page-2", c, err)
		}
	}},
}, concurrent("concurrent sightings make one job", func(t *testing.T, d *db, hs []Stores) {
	var mu sync.Mutex
	var created []string
	together(8, func(i int) {
		added, err := hs[i%len(hs)].AddRecordings(ctx, "inbox", []recording{rec("a", "1"), rec(fmt.Sprint("own-", i), "1")}, fmt.Sprint("c", i), t0)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("AddRecordings %d = %v", i, err)
		}
		for _, j := range added {
			if j.ItemID == "a" {
				created = append(created, j.ID)
			}
		}
	})
	if len(created) != 1 {
		t.Errorf("8 concurrent AddRecordings(inbox, a@1) created %d jobs, want 1", len(created))
	}
	if all, _ := d.Jobs(ctx, bridge.JobFilter{}); len(all) != 9 {
		t.Errorf("Jobs() = %d after 8 callers each adding a shared and an own item, want 9", len(all))
	}
})...)

var cursorCases = []testCase{
	{"unknown source", func(t *testing.T, d *db) {
		if c, err := d.Cursor(ctx, "inbox"); c != "" || err != nil {
			t.Errorf("Cursor(inbox) before any scan = %q, %v; want \"\", nil", c, err)
		}
	}},
	{"moves with the jobs, per source", func(t *testing.T, d *db) {
		for _, step := range []struct{ source, cursor string }{{"inbox", "p1"}, {"drive", "d1"}, {"inbox", "p2"}} {
			if _, err := d.AddRecordings(ctx, step.source, []recording{rec(step.cursor, "1")}, step.cursor, t0); err != nil {
				t.Fatal(err)
			}
		}
		for source, want := range map[string]string{"inbox": "p2", "drive": "d1", "zoom": ""} {
			if c, err := d.Cursor(ctx, source); c != want || err != nil {
				t.Errorf("Cursor(%s) = %q, %v; want %q", source, c, err, want)
			}
		}
	}},
	{"seen by another handle", func(t *testing.T, d *db) {
		d.AddRecordings(ctx, "inbox", nil, "p1", t0)
		if c, err := d.another().Cursor(ctx, "inbox"); c != "p1" || err != nil {
			t.Errorf("Cursor(inbox) on a second handle = %q, %v; want p1", c, err)
		}
	}},
}

var updateCases = append([]testCase{
	{"writes every field and the history", func(t *testing.T, d *db) {
		j := d.job(t)
		at := t0.Add(time.Minute)
		j.State, j.Reason, j.Author, j.ExternalID = bridge.StateUploading, "slot free", "m-1", "ext-1"
		j.Metadata = json.RawMessage(`{"bridge_job":"x","team":"sales"}`)
		j.IdempotencyKey, j.AttemptAt, j.Attempts = "key-1", at, 2
		j.TranscriptionID, j.RequiredMinutes, j.NextAt, j.UpdatedAt = "tr-1", 12.5, at.Add(time.Hour), at
		if err := d.Update(ctx, &j, bridge.StateDiscovered, "uploading"); err != nil {
			t.Fatalf("Update(%s, discovered → uploading) = %v", j.ID, err)
		}
		if got, err := d.Job(ctx, j.ID); err != nil || !sameJob(*got, j) {
			t.Errorf("Job(%s) = %+v, %v; want %+v", j.ID, got, err, j)
		}
		h, _ := d.History(ctx, j.ID)
		if len(h) != 2 || !sameChange(h[1], bridge.Change{JobID: j.ID, From: bridge.StateDiscovered, To: bridge.StateUploading, Reason: "uploading", At: at}) {
			t.Errorf("History(%s) = %+v; want the addition, then discovered → uploading at %v", j.ID, h, at)
		}
	}},
	{"writes the hold reason, and clears it", func(t *testing.T, d *db) {
		j := d.job(t)
		j.Hold = bridge.HoldNoBalance
		d.move(t, &j, bridge.StateHeld, t0.Add(time.Minute))
		if got, err := d.Job(ctx, j.ID); err != nil || got.Hold != bridge.HoldNoBalance || !sameJob(*got, j) {
			t.Errorf("Job(%s) held = %+v, %v; want %+v, hold %s", j.ID, got, err, j, bridge.HoldNoBalance)
		}
		j.Hold = ""
		d.move(t, &j, bridge.StateReady, t0.Add(2*time.Minute))
		if got, err := d.Job(ctx, j.ID); err != nil || got.Hold != "" || !sameJob(*got, j) {
			t.Errorf("Job(%s) released = %+v, %v; want %+v, no hold", j.ID, got, err, j)
		}
	}},
	{"unknown job", func(t *testing.T, d *db) {
		j := bridge.Job{ID: "missing", Recording: rec("a", "1"), State: bridge.StateReady, UpdatedAt: t0}
		if err := d.Update(ctx, &j, bridge.StateDiscovered, "x"); !errors.Is(err, bridge.ErrConflict) && !errors.Is(err, bridge.ErrNotFound) {
			t.Errorf("Update(missing) = %v, want ErrConflict or ErrNotFound", err)
		}
		if got, err := d.Job(ctx, "missing"); !errors.Is(err, bridge.ErrNotFound) {
			t.Errorf("Job(missing) after Update(missing) = %+v, %v; want ErrNotFound (Update never creates)", got, err)
		}
	}},
	{"a stale from is a conflict and writes nothing", func(t *testing.T, d *db) {
		j := d.job(t)
		d.move(t, &j, bridge.StateReady, t0.Add(time.Minute))
		stale := j
		stale.State, stale.Reason, stale.UpdatedAt = bridge.StateSkipped, "late", t0.Add(2*time.Minute)
		if err := d.Update(ctx, &stale, bridge.StateDiscovered, "late", bridge.NewEvent(bridge.EventSkipped, &stale, nil)); !errors.Is(err, bridge.ErrConflict) {
			t.Errorf("Update(%s, discovered → skipped) after it moved to ready = %v, want ErrConflict", j.ID, err)
		}
		if got, _ := d.Job(ctx, j.ID); !sameJob(*got, j) {
			t.Errorf("Job(%s) after a conflict = %+v, want it unchanged, %+v", j.ID, got, j)
		}
		if h, _ := d.History(ctx, j.ID); len(h) != 2 {
			t.Errorf("History(%s) after a conflict = %d changes, want 2", j.ID, len(h))
		}
		if ev, _ := d.PendingEvents(ctx, 10); len(ev) != 0 {
			t.Errorf("PendingEvents(10) after a conflict = %+v, want none", ev)
		}
	}},
	{"the same state without a reason adds no history", func(t *testing.T, d *db) {
		j := d.job(t)
		j.NextAt, j.UpdatedAt = t0.Add(time.Hour), t0.Add(time.Minute) // a recheck later: not a change
		if err := d.Update(ctx, &j, bridge.StateDiscovered, ""); err != nil {
			t.Fatal(err)
		}
		j.UpdatedAt = t0.Add(2 * time.Minute)
		if err := d.Update(ctx, &j, bridge.StateDiscovered, "no member yet"); err != nil {
			t.Fatal(err)
		}
		h, _ := d.History(ctx, j.ID)
		if len(h) != 2 || !sameChange(h[1], bridge.Change{JobID: j.ID, From: bridge.StateDiscovered, To: bridge.StateDiscovered, Reason: "no member yet", At: j.UpdatedAt}) {
			t.Errorf("History(%s) = %+v; want the addition and the rewrite with a reason, not the one without", j.ID, h)
		}
		if got, _ := d.Job(ctx, j.ID); !got.NextAt.Equal(j.NextAt) || !got.UpdatedAt.Equal(j.UpdatedAt) {
			t.Errorf("Job(%s) = next %v, updated %v; want %v, %v", j.ID, got.NextAt, got.UpdatedAt, j.NextAt, j.UpdatedAt)
		}
	}},
	{"a holder's lease runs out and one taker takes over", func(t *testing.T, d *db) {
		// A worker claims the job until t0+10m (NextAt) and dies. Before then the job is not
		// due; after it, two workers race to take it over: one wins, and the first worker,
		// back late, finds the job moved on.
		const lease = 10 * time.Minute
		j := d.job(t)
		d.move(t, &j, bridge.StateReady, t0)
		holder := j
		holder.IdempotencyKey, holder.NextAt = "key-1", t0.Add(lease)
		d.move(t, &holder, bridge.StateUploading, t0)
		uploading := bridge.JobFilter{States: []bridge.State{bridge.StateUploading}}
		uploading.DueBefore = t0.Add(lease - time.Second)
		if due, _ := d.Jobs(ctx, uploading); len(due) != 0 {
			t.Fatalf("Jobs(uploading, due before the lease ends) = %s, want none", ids(due))
		}
		uploading.DueBefore = t0.Add(lease + time.Second)
		due, _ := d.Jobs(ctx, uploading)
		if len(due) != 1 || due[0].ID != j.ID {
			t.Fatalf("Jobs(uploading, due after the lease ended) = %s, want the job", ids(due))
		}
		hs := d.handles(true)
		wins := 0
		var mu sync.Mutex
		together(2, func(i int) {
			taken := due[0]
			taken.State, taken.IdempotencyKey, taken.UpdatedAt = bridge.StateReady, "", uploading.DueBefore
			err := hs[i].Update(ctx, &taken, bridge.StateUploading, "taken over")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, bridge.ErrConflict):
				t.Errorf("take-over %d: Update = %v, want nil or ErrConflict", i, err)
			}
		})
		if wins != 1 {
			t.Errorf("2 take-overs after the lease: %d won, want 1", wins)
		}
		holder.State, holder.UpdatedAt = bridge.StateQueued, uploading.DueBefore
		if err := d.Update(ctx, &holder, bridge.StateUploading, "late"); !errors.Is(err, bridge.ErrConflict) {
			t.Errorf("the first holder's late Update(uploading → queued) = %v, want ErrConflict", err)
		}
	}},
	{"a stale revision is a conflict, even in the same state", func(t *testing.T, d *db) {
		// A holder paused past its lease wakes with a copy of the job read before another
		// replica took it over without changing its state (uploading, a new lease): the late
		// write is refused, and the revision tells the writes apart.
		j := d.job(t)
		if j.Revision != 1 {
			t.Errorf("AddRecordings(inbox, a@1)[0].Revision = %d, want 1", j.Revision)
		}
		d.move(t, &j, bridge.StateUploading, t0)
		paused := j
		j.NextAt = t0.Add(time.Hour)
		d.move(t, &j, bridge.StateUploading, t0.Add(time.Minute))
		if j.Revision != paused.Revision+1 {
			t.Errorf("Update in place: Revision = %d, want %d", j.Revision, paused.Revision+1)
		}
		paused.State, paused.TranscriptionID, paused.UpdatedAt = bridge.StateQueued, "tr-late", t0.Add(2*time.Minute)
		if err := d.Update(ctx, &paused, bridge.StateUploading, "late"); !errors.Is(err, bridge.ErrConflict) {
			t.Errorf("Update(revision %d) after the job moved to revision %d = %v, want ErrConflict", paused.Revision, j.Revision, err)
		}
		if got, _ := d.Job(ctx, j.ID); !sameJob(*got, j) {
			t.Errorf("Job(%s) after a stale write = %+v, want %+v", j.ID, got, j)
		}
	}},
	{"a job not read from the store is compared by state", func(t *testing.T, d *db) {
		j := d.job(t)
		d.move(t, &j, bridge.StateReady, t0)
		blind := j
		blind.Revision, blind.State, blind.UpdatedAt = 0, bridge.StateSkipped, t0.Add(time.Minute)
		if err := d.Update(ctx, &blind, bridge.StateReady, "by hand"); err != nil || blind.Revision != j.Revision+1 {
			t.Errorf("Update(revision 0, ready → skipped) = %v, revision %d; want nil, %d", err, blind.Revision, j.Revision+1)
		}
	}},
}, append(concurrent("concurrent writes in place have one winner", func(t *testing.T, d *db, hs []Stores) {
	j := d.job(t)
	var wins int
	var mu sync.Mutex
	together(6, func(i int) {
		c := j
		c.NextAt, c.UpdatedAt = t0.Add(time.Duration(i+1)*time.Minute), t0.Add(time.Minute)
		err := hs[i%len(hs)].Update(ctx, &c, bridge.StateDiscovered, "")
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, bridge.ErrConflict):
			t.Errorf("write %d: Update = %v, want nil or ErrConflict", i, err)
		}
	})
	if wins != 1 {
		t.Errorf("6 concurrent Update(discovered → discovered) of revision %d: %d won, want 1", j.Revision, wins)
	}
}), concurrent("concurrent claims have one winner", func(t *testing.T, d *db, hs []Stores) {
	j := d.job(t)
	var wins, conflicts int
	var winner string
	var mu sync.Mutex
	together(8, func(i int) {
		c := j
		c.State, c.IdempotencyKey, c.UpdatedAt = bridge.StateUploading, fmt.Sprint("key-", i), t0.Add(time.Minute)
		err := hs[i%len(hs)].Update(ctx, &c, bridge.StateDiscovered, "claim", bridge.NewEvent(bridge.EventHeld, &c, nil))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			wins, winner = wins+1, c.IdempotencyKey
		case errors.Is(err, bridge.ErrConflict):
			conflicts++
		default:
			t.Errorf("claim %d: Update = %v", i, err)
		}
	})
	if wins != 1 || conflicts != 7 {
		t.Fatalf("8 concurrent Update(discovered → uploading): %d won, %d conflicted; want 1 and 7", wins, conflicts)
	}
	if got, _ := d.Job(ctx, j.ID); got.IdempotencyKey != winner {
		t.Errorf("Job(%s).IdempotencyKey = %q, want the winner's %q", j.ID, got.IdempotencyKey, winner)
	}
	if h, _ := d.History(ctx, j.ID); len(h) != 2 {
		t.Errorf("History(%s) = %d changes, want 2 (the losers wrote none)", j.ID, len(h))
	}
	if ev, _ := d.PendingEvents(ctx, 10); len(ev) != 1 {
		t.Errorf("PendingEvents(10) = %d events, want the winner's one", len(ev))
	}
})...)...)

// sameRecording compares recordings, times by instant.
func sameRecording(got, want recording) bool {
	if !got.ModTime.Equal(want.ModTime) {
		return false
	}
	got.ModTime = want.ModTime
	return reflect.DeepEqual(got, want)
}

// sameChange compares history entries, times by instant.
func sameChange(got, want bridge.Change) bool {
	if !got.At.Equal(want.At) {
		return false
	}
	got.At = want.At
	return got == want
}

// sameJob compares jobs: times by instant, metadata as JSON.
func sameJob(got, want bridge.Job) bool {
	for _, p := range []struct{ g, w *time.Time }{{&got.AttemptAt, &want.AttemptAt}, {&got.NextAt, &want.NextAt},
		{&got.CreatedAt, &want.CreatedAt}, {&got.UpdatedAt, &want.UpdatedAt}, {&got.ModTime, &want.ModTime}} {
		if !p.g.Equal(*p.w) {
			return false
		}
		*p.g = *p.w
	}
	if !sameJSON(got.Metadata, want.Metadata) {
		return false
	}
	got.Metadata = want.Metadata
	return reflect.DeepEqual(got, want)
}

// sameJSON compares two JSON documents by value (an empty one is null).
func sameJSON(a, b []byte) bool {
	var x, y any
	if len(a) > 0 && json.Unmarshal(a, &x) != nil || len(b) > 0 && json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(x, y)
}

func versions(jobs []bridge.Job) string {
	var out string
	for _, j := range jobs {
		out += j.ItemID + "@" + j.Version + " "
	}
	return "[" + out + "]"
}
