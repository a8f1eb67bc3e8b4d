package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var jobCases = []testCase{
	{"keeps the recording", func(t *testing.T, d *db) {
		r := rec("a", "1")
		r.Owner.Email, r.Fields["room"], r.Metadata["duration"] = "owner@example.com", "4", "3600"
		added := d.add(t, "inbox", t0, r)
		r.Source = "inbox"
		got, err := d.Job(ctx, added[0].ID)
		if err != nil || !sameRecording(got.Recording, r) {
			t.Errorf("Job(%s) = %+v, %v; want recording %+v", added[0].ID, got, err, r)
		}
	}},
	{"unknown id", func(t *testing.T, d *db) {
		d.job(t)
		if got, err := d.Job(ctx, "missing"); !errors.Is(err, bridge.ErrNotFound) || got != nil {
			t.Errorf("Job(missing) = %+v, %v; want nil, ErrNotFound", got, err)
		}
	}},
}

var jobsCases = []testCase{
	{"filters", func(t *testing.T, d *db) {
		added := d.add(t, "inbox", t0, rec("a", "1"), rec("b", "1"), rec("c", "1"))
		d.add(t, "drive", t0.Add(time.Second), rec("d", "1"))
		b := added[1]
		b.NextAt = t0.Add(time.Hour)
		d.move(t, &b, bridge.StateHeld, t0)
		c := added[2]
		c.NextAt = t0.Add(-time.Hour)
		d.move(t, &c, bridge.StateReady, t0)
		states := func(s ...bridge.State) []bridge.State { return s }
		for _, tc := range []struct {
			name string
			f    bridge.JobFilter
			want string
		}{
			{"all", bridge.JobFilter{}, "a,b,c,d"},
			{"one state", bridge.JobFilter{States: states(bridge.StateDiscovered)}, "a,d"},
			{"two states", bridge.JobFilter{States: states(bridge.StateDiscovered, bridge.StateHeld)}, "a,b,d"},
			{"a state with no job", bridge.JobFilter{States: states(bridge.StateFailed)}, ""},
			{"source", bridge.JobFilter{Source: "drive"}, "d"},
			{"unknown source", bridge.JobFilter{Source: "zoom"}, ""},
			{"state and source", bridge.JobFilter{States: states(bridge.StateDiscovered), Source: "inbox"}, "a"},
			{"not due yet", bridge.JobFilter{States: states(bridge.StateHeld), DueBefore: t0}, ""},
			{"due at its time", bridge.JobFilter{States: states(bridge.StateHeld), DueBefore: t0.Add(time.Hour)}, "b"},
			{"due: no next time is due at once", bridge.JobFilter{DueBefore: t0}, "a,c,d"},
			{"limit", bridge.JobFilter{Limit: 2}, "a,b"},
			{"limit after the filter", bridge.JobFilter{States: states(bridge.StateDiscovered, bridge.StateReady), Limit: 2}, "a,c"},
		} {
			got, err := d.Jobs(ctx, tc.f)
			if err != nil || ids(got) != tc.want {
				t.Errorf("Jobs(%s: %+v) = [%s], %v; want [%s]", tc.name, tc.f, ids(got), err, tc.want)
			}
		}
	}},
	{"oldest first, ties in the order added", func(t *testing.T, d *db) {
		d.add(t, "inbox", t0, rec("b", "1"), rec("c", "1"))
		d.add(t, "inbox", t0.Add(-time.Hour), rec("a", "1"))
		d.add(t, "inbox", t0, rec("d", "1"))
		if got, err := d.Jobs(ctx, bridge.JobFilter{}); err != nil || ids(got) != "a,b,c,d" {
			t.Errorf("Jobs() = [%s], %v; want [a,b,c,d]", ids(got), err)
		}
	}},
	{"empty store", func(t *testing.T, d *db) {
		if got, err := d.Jobs(ctx, bridge.JobFilter{}); err != nil || len(got) != 0 {
			t.Errorf("Jobs() = %d jobs, %v; want none", len(got), err)
		}
	}},
}

var historyCases = []testCase{
	{"every change, oldest first", func(t *testing.T, d *db) {
		j := d.job(t)
		d.move(t, &j, bridge.StateReady, t0.Add(time.Minute))
		d.move(t, &j, bridge.StateHeld, t0.Add(2*time.Minute))
		other := d.add(t, "inbox", t0, rec("b", "1"))[0]
		d.move(t, &other, bridge.StateSkipped, t0.Add(3*time.Minute))
		h, err := d.History(ctx, j.ID)
		want := []bridge.Change{
			{JobID: j.ID, From: "", To: bridge.StateDiscovered, At: t0},
			{JobID: j.ID, From: bridge.StateDiscovered, To: bridge.StateReady, Reason: "to ready", At: t0.Add(time.Minute)},
			{JobID: j.ID, From: bridge.StateReady, To: bridge.StateHeld, Reason: "to held", At: t0.Add(2 * time.Minute)},
		}
		if err != nil || len(h) != len(want) {
			t.Fatalf("History(%s) = %+v, %v; want %+v", j.ID, h, err, want)
		}
		h[0].Reason = "" // the addition's reason is the store's own words
		for i := range want {
			if !sameChange(h[i], want[i]) {
				t.Errorf("History(%s)[%d] = %+v, want %+v", j.ID, i, h[i], want[i])
			}
		}
	}},
	{"unknown id", func(t *testing.T, d *db) {
		d.job(t)
		if h, err := d.History(ctx, "missing"); len(h) != 0 || err != nil && !errors.Is(err, bridge.ErrNotFound) {
			t.Errorf("History(missing) = %+v, %v; want no change (nil or ErrNotFound)", h, err)
		}
	}},
}

var countsCases = []testCase{
	{"empty store", func(t *testing.T, d *db) {
		if c, err := d.Counts(ctx); err != nil || len(c) != 0 {
			t.Errorf("Counts() = %v, %v; want no state", c, err)
		}
	}},
	{"per state", func(t *testing.T, d *db) {
		added := d.add(t, "inbox", t0, rec("a", "1"), rec("b", "1"), rec("c", "1"))
		d.add(t, "drive", t0, rec("d", "1"))
		d.move(t, &added[0], bridge.StateReady, t0)
		d.move(t, &added[1], bridge.StateReady, t0)
		d.move(t, &added[1], bridge.StateHeld, t0)
		c, err := d.Counts(ctx)
		want := map[bridge.State]int{bridge.StateDiscovered: 2, bridge.StateReady: 1, bridge.StateHeld: 1}
		if err != nil || len(c) != len(want) {
			t.Fatalf("Counts() = %v, %v; want %v", c, err, want)
		}
		for st, n := range want {
			if c[st] != n {
				t.Errorf("Counts()[%s] = %d, want %d", st, c[st], n)
			}
		}
	}},
}

var pendingEventsCases = []testCase{
	{"none", func(t *testing.T, d *db) {
		d.job(t)
		if ev, err := d.PendingEvents(ctx, 10); err != nil || len(ev) != 0 {
			t.Errorf("PendingEvents(10) = %+v, %v; want none", ev, err)
		}
	}},
	{"oldest first, up to limit", func(t *testing.T, d *db) {
		j := d.job(t)
		j.TranscriptionID = "tr-1"
		first := bridge.NewEvent(bridge.EventUploaded, &j, map[string]any{"n": 1})
		d.move(t, &j, bridge.StateQueued, t0.Add(time.Minute), first, bridge.NewEvent(bridge.EventHeld, &j, nil))
		d.move(t, &j, bridge.StateDone, t0.Add(2*time.Minute), bridge.NewEvent(bridge.EventCompleted, &j, nil))
		all, err := d.PendingEvents(ctx, 10)
		if err != nil || len(all) != 3 {
			t.Fatalf("PendingEvents(10) = %+v, %v; want 3 events", all, err)
		}
		for i, want := range []struct {
			typ string
			at  time.Time
		}{{bridge.EventUploaded, t0.Add(time.Minute)}, {bridge.EventHeld, t0.Add(time.Minute)}, {bridge.EventCompleted, t0.Add(2 * time.Minute)}} {
			e := all[i]
			if e.Type != want.typ || e.JobID != j.ID || e.TranscriptionID != "tr-1" || !e.CreatedAt.Equal(want.at) || i > 0 && e.ID <= all[i-1].ID {
				t.Errorf("PendingEvents(10)[%d] = %+v; want %s of job %s (tr-1) at %v, with an id above the previous one", i, e, want.typ, j.ID, want.at)
			}
		}
		if !sameJSON(all[0].Data, first.Data) {
			t.Errorf("PendingEvents(10)[0].Data = %s, want %s", all[0].Data, first.Data)
		}
		if two, err := d.PendingEvents(ctx, 2); err != nil || len(two) != 2 || two[0].ID != all[0].ID || two[1].ID != all[1].ID {
			t.Errorf("PendingEvents(2) = %+v, %v; want the first two", two, err)
		}
	}},
	{"handed on by FanOut", func(t *testing.T, d *db) {
		evs := d.events(t, 2)
		if err := d.FanOut(ctx, ref(evs[0]), nil, t0); err != nil {
			t.Fatal(err)
		}
		if ev, err := d.PendingEvents(ctx, 10); err != nil || len(ev) != 1 || ev[0].ID != evs[1].ID {
			t.Errorf("PendingEvents(10) after FanOut(%d) = %+v, %v; want event %d alone", evs[0].ID, ev, err, evs[1].ID)
		}
	}},
	{"written by every writer", func(t *testing.T, d *db) {
		if err := d.DisableEndpoint(ctx, "crm", "410", t0, bridge.Event{Type: "endpoint.disabled"}); err != nil {
			t.Fatal(err)
		}
		d.claimRun(t, d.Stores, "nightly", t0, t0)
		if err := d.FinishRun(ctx, finished("nightly", t0), nil, time.Time{}, bridge.Event{Type: bridge.EventExportCompleted}); err != nil {
			t.Fatal(err)
		}
		ev, err := d.PendingEvents(ctx, 10)
		if err != nil || len(ev) != 2 || ev[0].Type != "endpoint.disabled" || ev[1].Type != bridge.EventExportCompleted {
			t.Errorf("PendingEvents(10) = %+v, %v; want endpoint.disabled from DisableEndpoint, then export.completed from FinishRun", ev, err)
		}
	}},
}
