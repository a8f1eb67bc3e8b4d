package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// forgotten writes a job of item through queued and done with two events, fans both out to crm
// and erp, records an attempt of each delivery, then moves the job to deleted with a
// transcription.deleted event fanned out to crm; it returns the job as stored.
func (d *db) forgotten(t *testing.T, item string) bridge.Job {
	t.Helper()
	j := d.add(t, "inbox", t0, rec(item, "1"))[0]
	j.TranscriptionID, j.ExternalID = "tr-"+item, "ext-"+item
	d.move(t, &j, bridge.StateQueued, t0, bridge.NewEvent(bridge.EventUploaded, &j, nil))
	d.move(t, &j, bridge.StateDone, t0.Add(time.Minute), bridge.NewEvent(bridge.EventCompleted, &j, nil))
	for _, e := range d.pending(t) {
		if e.JobID != j.ID {
			continue
		}
		for _, dl := range d.fanOut(t, e, t0.Add(2*time.Minute), "crm", "erp") {
			d.record(t, dl, bridge.DeliveryDelivered, t0, t0.Add(3*time.Minute))
		}
	}
	d.move(t, &j, bridge.StateDeleted, t0.Add(4*time.Minute), bridge.DeletedEvent(&j, "forgotten", "test"))
	for _, e := range d.pending(t) {
		if e.JobID == j.ID && e.Type == bridge.EventDeleted {
			d.fanOut(t, e, t0.Add(5*time.Minute), "crm")
		}
	}
	return j
}

func tombstoneOf(j bridge.Job) bridge.Tombstone {
	return bridge.Tombstone{JobID: j.ID, Source: j.Source, ItemID: j.ItemID, DedupeKey: j.DedupeKey, ExternalID: j.ExternalID,
		TranscriptionID: j.TranscriptionID, Reason: "forgotten: test", CreatedAt: t0.Add(6 * time.Minute)}
}

// jobDeliveries lists the deliveries of job id.
func (d *db) jobDeliveries(t *testing.T, id string) []bridge.Delivery {
	t.Helper()
	var out []bridge.Delivery
	for _, dl := range d.deliveries(t, bridge.DeliveryFilter{}) {
		if dl.JobID == id {
			out = append(out, dl)
		}
	}
	return out
}

var forgetCases = []testCase{
	{"removes deliveries and attempts but the deletion's, once", func(t *testing.T, d *db) {
		j, other := d.forgotten(t, "a"), d.forgotten(t, "b")
		n, err := d.Forget(ctx, tombstoneOf(j))
		// 2 events × 2 endpoints, an attempt each; both handed on.
		want := bridge.Scrubbed{Deliveries: 4, Attempts: 4, Events: 2, Tombstone: true}
		if err != nil || n.Deliveries != want.Deliveries || n.Attempts != want.Attempts || n.Events != want.Events || !n.Tombstone {
			t.Errorf("Forget(%s) = %+v, %v; want %+v", j.ID, n, err, want)
		}
		ds := d.jobDeliveries(t, j.ID)
		if len(ds) != 1 || ds[0].Type != bridge.EventDeleted || ds[0].Endpoint != "crm" {
			t.Errorf("deliveries of a forgotten job = %+v; want its transcription.deleted to crm only", ds)
		}
		if got := d.jobDeliveries(t, other.ID); len(got) != 5 {
			t.Errorf("deliveries of another job = %d; want its 5 untouched", len(got))
		}
		if h, err := d.History(ctx, j.ID); err != nil || len(h) == 0 || h[len(h)-1].Reason == "" || h[0].Reason != "" {
			t.Errorf("History(%s) = %+v, %v; want earlier reasons emptied, the move to deleted kept", j.ID, h, err)
		}
		if n, err := d.Forget(ctx, tombstoneOf(j)); err != nil || !n.Zero() {
			t.Errorf("Forget(%s) again = %+v, %v; want nothing to do", j.ID, n, err)
		}
		ts, err := d.Tombstones(ctx)
		if err != nil || len(ts) != 1 || ts[0] != tombstoneOf(j) {
			t.Errorf("Tombstones() = %+v, %v; want [%+v]", ts, err, tombstoneOf(j))
		}
	}},
	{"empties events not handed on yet", func(t *testing.T, d *db) {
		j := d.add(t, "inbox", t0, rec("a", "1"))[0]
		d.move(t, &j, bridge.StateSkipped, t0, bridge.NewEvent(bridge.EventSkipped, &j, map[string]any{"reason": "a@example.com"}))
		n, err := d.Forget(ctx, tombstoneOf(j))
		if err != nil || n.Events != 1 {
			t.Errorf("Forget(%s) = %+v, %v; want 1 event emptied", j.ID, n, err)
		}
		for _, e := range d.pending(t) {
			if e.JobID == j.ID && string(e.Data) != "{}" {
				t.Errorf("pending event of a forgotten job has data %s; want {}", e.Data)
			}
		}
	}},
	{"a forgotten item is never stored again", func(t *testing.T, d *db) {
		r := rec("a", "1")
		r.DedupeKey = "gdrive:a@1"
		j := d.add(t, "inbox", t0, r)[0]
		if _, err := d.Forget(ctx, tombstoneOf(j)); err != nil {
			t.Fatal(err)
		}
		other := rec("b", "1")
		other.DedupeKey = "gdrive:a@1"
		for _, tc := range []struct {
			source string
			r      recording
		}{{"inbox", rec("a", "2")}, {"meet", other}} {
			added, err := d.AddRecordings(ctx, tc.source, []recording{tc.r, rec("c-"+tc.source, "1")}, "next", t0)
			if err != nil || ids(added) != "c-"+tc.source {
				t.Errorf("AddRecordings(%s, %s@%s) = [%s], %v; want only c-%s", tc.source, tc.r.ItemID, tc.r.Version, ids(added), err, tc.source)
			}
		}
	}},
}

var tombstonedCases = []testCase{
	{"by each id", func(t *testing.T, d *db) {
		j := d.forgotten(t, "a")
		if _, err := d.Forget(ctx, tombstoneOf(j)); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			q    bridge.TombstoneQuery
			want bool
		}{
			{bridge.TombstoneQuery{JobID: j.ID}, true},
			{bridge.TombstoneQuery{Source: "inbox", ItemID: "a"}, true},
			{bridge.TombstoneQuery{Source: "other", ItemID: "a"}, false},
			{bridge.TombstoneQuery{ExternalID: "ext-a"}, true},
			{bridge.TombstoneQuery{TranscriptionID: "tr-a"}, true},
			{bridge.TombstoneQuery{TranscriptionID: "tr-b"}, false},
			{bridge.TombstoneQuery{DedupeKey: "gdrive:x"}, false},
			{bridge.TombstoneQuery{}, false},
		} {
			if got, err := d.Tombstoned(ctx, tc.q); err != nil || got != tc.want {
				t.Errorf("Tombstoned(%+v) = %v, %v; want %v", tc.q, got, err, tc.want)
			}
		}
	}},
}

// aged writes, at each of ages before now, a finished job with a delivered and a dead delivery
// (an attempt each) and a pending delivery, all last changed then; it returns the jobs.
func (d *db) aged(t *testing.T, now time.Time, ages ...time.Duration) []bridge.Job {
	t.Helper()
	var out []bridge.Job
	for i, age := range ages {
		at := now.Add(-age)
		j := d.add(t, "inbox", at, rec(fmt.Sprint("aged-", i), "1"))[0]
		evs := []bridge.Event{bridge.NewEvent(bridge.EventCompleted, &j, nil), bridge.NewEvent(bridge.EventReportCompleted, &j, nil),
			bridge.NewEvent(bridge.EventReportFailed, &j, nil)}
		d.move(t, &j, bridge.StateDone, at, evs...)
		var mine []bridge.Event
		for _, e := range d.pending(t) {
			if e.JobID == j.ID {
				mine = append(mine, e)
			}
		}
		for k, status := range []bridge.DeliveryStatus{bridge.DeliveryDelivered, bridge.DeliveryDead, ""} {
			dl := d.fanOut(t, mine[k], at, "crm")[0]
			if status != "" {
				d.record(t, dl, status, at, at)
			}
		}
		out = append(out, j)
	}
	return out
}

var purgeCases = []testCase{
	{"leaves nothing past its age", func(t *testing.T, d *db) {
		now := t0.Add(400 * 24 * time.Hour)
		day := 24 * time.Hour
		jobs := d.aged(t, now, 500*day, 100*day, 60*day, 10*day)
		ages := map[string]time.Duration{bridge.RetainDeliveries: 30 * day, bridge.RetainDeadLetters: 90 * day, bridge.RetainJobs: 365 * day}
		wantExpired := map[string]int{bridge.RetainDeliveries: 3, bridge.RetainDeadLetters: 2, bridge.RetainJobs: 1}
		for _, kind := range bridge.RetentionKinds {
			n, oldest, err := d.Expired(ctx, kind, now.Add(-ages[kind]))
			if err != nil || n != wantExpired[kind] || !oldest.Equal(now.Add(-500*day)) {
				t.Errorf("Expired(%s) = %d, %v, %v; want %d, %v", kind, n, oldest, err, wantExpired[kind], now.Add(-500*day))
			}
		}
		total := map[string]int{}
		for _, kind := range bridge.RetentionKinds {
			for { // batches of 1: the purge takes small steps
				n, err := d.Purge(ctx, kind, now.Add(-ages[kind]), 1)
				if err != nil {
					t.Fatalf("Purge(%s) = %v", kind, err)
				}
				if n == 0 {
					break
				}
				total[kind] += n
			}
		}
		if total[bridge.RetainDeliveries] != 3 || total[bridge.RetainDeadLetters] != 2 || total[bridge.RetainJobs] != 1 {
			t.Errorf("Purge removed %v; want 3 deliveries, 2 dead letters, 1 job", total)
		}
		for _, kind := range bridge.RetentionKinds {
			if n, _, err := d.Expired(ctx, kind, now.Add(-ages[kind])); err != nil || n != 0 {
				t.Errorf("Expired(%s) after the purge = %d, %v; want 0", kind, n, err)
			}
		}
		for _, dl := range d.deliveries(t, bridge.DeliveryFilter{}) {
			age := now.Sub(dl.UpdatedAt)
			if dl.Status == bridge.DeliveryDelivered && age > ages[bridge.RetainDeliveries] ||
				dl.Status == bridge.DeliveryDead && age > ages[bridge.RetainDeadLetters] || dl.JobID == jobs[0].ID {
				t.Errorf("delivery %s (%s, %v old, job %s) is left past its age", dl.ID, dl.Status, age, dl.JobID)
			}
		}
		if _, err := d.Job(ctx, jobs[0].ID); err == nil {
			t.Errorf("Job(%s), finished 500 days ago, is still there", jobs[0].ID)
		}
		for _, j := range jobs[1:] {
			if _, err := d.Job(ctx, j.ID); err != nil {
				t.Errorf("Job(%s) = %v; want it kept, younger than a year", j.ID, err)
			}
		}
	}},
	{"unknown kind", func(t *testing.T, d *db) {
		if n, err := d.Purge(ctx, "bogus", t0, 10); err == nil || n != 0 {
			t.Errorf("Purge(bogus) = %d, %v; want an error", n, err)
		}
	}},
}
