package storecopy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// t0 is the populated store's clock: nanoseconds that a microsecond time type would lose.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.UTC)

// openSQLite opens a new SQLite store in the test's directory, as a copy's side.
func openSQLite(t *testing.T, name string) *Database {
	t.Helper()
	d, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), name), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// openPostgres opens a fresh PostgreSQL database (pgtest: skipped without a server), as a
// copy's side.
func openPostgres(t *testing.T) *Database {
	t.Helper()
	d, err := Open(context.Background(), pgtest.New(t), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// populate gives s some of everything, through the store contract: jobs of two sources in
// several states with their history and events, deliveries (fanned out, claimed, attempted:
// delivered, retried, dead), a disabled endpoint, export runs with exported ids and a
// checkpoint, two mapping changes, the instance id, two audit entries, and a lease (which a
// copy leaves behind). Some events stay pending (not fanned out).
func populate(t *testing.T, s bridge.Store) {
	t.Helper()
	ctx := context.Background()
	var recs []connectors.Recording
	for i := range 6 {
		recs = append(recs, connectors.Recording{ItemID: fmt.Sprintf("call-%d.wav", i), Version: "v1", Name: fmt.Sprintf("call-%d.wav", i),
			Size: int64(1000 * (i + 1)), ModTime: t0.Add(-time.Hour), Link: "file:///inbox/x", Fields: map[string]string{"team": "sales"},
			Owner: &connectors.Owner{Email: "sam@acme.test"}})
	}
	jobs, err := s.AddRecordings(ctx, "inbox", recs, "cursor-é-1", t0)
	must(t, err)
	_, err = s.AddRecordings(ctx, "zoom", recs[:2], `{"next":"x"}`, t0) // same created_at: ties keep insertion order
	must(t, err)
	at := t0
	move := func(j *bridge.Job, to bridge.State, reason string, events ...string) {
		t.Helper()
		at = at.Add(time.Second + 7)
		from := j.State
		j.State, j.UpdatedAt = to, at
		var evs []bridge.Event
		for _, typ := range events {
			evs = append(evs, bridge.NewEvent(typ, j, map[string]any{"reason": reason}))
		}
		must(t, s.Update(ctx, j, from, reason, evs...))
	}
	for i := range jobs {
		j := &jobs[i]
		j.Author, j.ExternalID, j.Metadata = "email:sam@acme.test", "ext-"+j.ItemID, json.RawMessage(`{"bridge_job":"`+j.ID+`"}`)
		move(j, bridge.StateReady, "mapped")
		switch i {
		case 0, 1, 2, 3: // uploaded; 0 and 1 done
			j.IdempotencyKey, j.AttemptAt, j.Attempts = "key-"+j.ID, at, 1
			move(j, bridge.StateUploading, "upload attempt 1")
			if i == 3 {
				continue // left uploading, as a crash leaves it
			}
			j.TranscriptionID = fmt.Sprintf("tr-%d", i)
			move(j, bridge.StateQueued, "uploaded", bridge.EventUploaded)
			if i < 2 {
				move(j, bridge.StateDone, "transcript and reports ready", bridge.EventReportCompleted, bridge.EventCompleted)
			}
		case 4:
			j.Hold, j.Reason, j.RequiredMinutes, j.NextAt = bridge.HoldNoBalance, "insufficient_balance", 12.345678901234, at.Add(time.Hour)
			move(j, bridge.StateHeld, "insufficient_balance", bridge.EventHeld)
		case 5:
			j.Reason = "too small"
			move(j, bridge.StateSkipped, "too small", bridge.EventSkipped)
		}
	}
	deliver(t, s, at)
	exports(t, s, at)
	_, err = s.NoteMappingChange(ctx, "identities apply --source zoom: 2 created", at)
	must(t, err)
	_, err = s.NoteMappingChange(ctx, "jobs release", at.Add(time.Minute))
	must(t, err)
	_, err = s.InstanceID(ctx)
	must(t, err)
	_, err = s.Lease(ctx, "tracker", "replica-1", at, time.Minute)
	must(t, err)
	must(t, s.Audit(ctx, bridge.AuditEntry{At: at, Who: "admin session 1a2b3c4d", Action: "replay", Targets: []string{"d-1", "d-é"}, Detail: "2 deliveries"}))
	must(t, s.Audit(ctx, bridge.AuditEntry{At: at.Add(time.Second), Who: "admin from 127.0.0.1", Action: "release", Targets: []string{jobs[4].ID},
		Error: "job is done, not held"}))
	_, err = s.AlertEndpoint(ctx, bridge.EndpointAlert{Name: "crm", Since: at.Add(-time.Hour), AlertedAt: at, Error: "answered 503"})
	must(t, err)
	_, err = s.Forget(ctx, bridge.Tombstone{JobID: "j-forgotten", Source: "inbox", ItemID: "gone-é.wav", DedupeKey: "gdrive:x@1",
		ExternalID: "crm-9", TranscriptionID: "tr-9", Reason: "forgotten: bridge forget --job j-forgotten by cli", CreatedAt: at})
	must(t, err)
}

// deliver fans out all but the last two pending events to two endpoints, claims crm's due
// deliveries and records: one delivered, one to retry, one dead; it disables endpoint "gone".
func deliver(t *testing.T, s bridge.Store, now time.Time) {
	t.Helper()
	ctx := context.Background()
	pending, err := s.PendingEvents(ctx, 100)
	must(t, err)
	for _, e := range pending[:len(pending)-2] {
		ref := bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID, TranscriptionID: e.TranscriptionID}
		must(t, s.FanOut(ctx, ref, []string{"crm", "audit"}, now))
	}
	claimed, err := s.Claim(ctx, "crm", now.Add(time.Second), time.Minute, 3)
	must(t, err)
	if len(claimed) < 3 {
		t.Fatalf("claimed %d deliveries, want 3", len(claimed))
	}
	outcomes := []struct {
		status bridge.DeliveryStatus
		code   int
		err    string
	}{{bridge.DeliveryDelivered, 200, ""}, {bridge.DeliveryPending, 503, "503 Service Unavailable"}, {bridge.DeliveryDead, 410, "gone"}}
	for i, o := range outcomes {
		d := claimed[i]
		at := now.Add(time.Duration(i+2) * time.Second)
		d.Status, d.Attempts, d.LastStatus, d.LastError, d.UpdatedAt = o.status, d.Attempts+1, o.code, o.err, at
		d.NextAttemptAt = at.Add(time.Minute)
		must(t, s.Record(ctx, &d, bridge.Attempt{At: at, Status: o.code, Latency: 12.5 + float64(i)/3, Response: `{"ok":true}`, Error: o.err}))
	}
	must(t, s.DisableEndpoint(ctx, "gone", "answered 410 Gone", now, bridge.Event{Type: "endpoint.disabled", Data: json.RawMessage(`{"endpoint":"gone"}`)}))
}

// exports finishes one run of export nightly (two ids exported, checkpoint moved) and leaves a
// second one running.
func exports(t *testing.T, s bridge.Store, now time.Time) {
	t.Helper()
	ctx := context.Background()
	tick := now.Truncate(time.Hour)
	ok, err := s.ClaimRun(ctx, "nightly", tick, now, time.Minute)
	must(t, err)
	if !ok {
		t.Fatal("ClaimRun = false, want true")
	}
	r := bridge.ExportRun{Export: "nightly", Tick: tick, Status: bridge.ExportCompleted, From: tick.Add(-24 * time.Hour), Until: tick,
		Location: "/exports/nightly.zip", Listed: 3, Exported: 2, Skipped: 1, StartedAt: now, FinishedAt: now.Add(time.Second)}
	must(t, s.FinishRun(ctx, r, []string{"tr-0", "tr-1"}, tick, bridge.Event{Type: "export.completed"}))
	_, err = s.ClaimRun(ctx, "nightly", tick.Add(time.Hour), now, time.Minute)
	must(t, err)
}

// state is everything the contract reads of a store, as JSON: two equal states are two stores
// that the bridge cannot tell apart.
func state(t *testing.T, s bridge.Store) string {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	jobs, err := s.Jobs(ctx, bridge.JobFilter{})
	must(t, err)
	out["jobs"] = jobs
	revisions, history := map[string]int64{}, map[string][]bridge.Change{}
	for _, j := range jobs {
		revisions[j.ID] = j.Revision
		history[j.ID], err = s.History(ctx, j.ID)
		must(t, err)
	}
	out["revisions"], out["history"] = revisions, history
	out["counts"], err = s.Counts(ctx)
	must(t, err)
	for _, src := range []string{"inbox", "zoom"} {
		out["cursor "+src], err = s.Cursor(ctx, src)
		must(t, err)
	}
	out["pending"], err = s.PendingEvents(ctx, 1000)
	must(t, err)
	out["instance"], err = s.InstanceID(ctx)
	must(t, err)
	out["mapping"], err = s.LastMappingChange(ctx)
	must(t, err)
	deliveryState(t, s, out)
	exportState(t, s, out)
	out["audit"], err = s.AuditLog(ctx, 0)
	must(t, err)
	out["tombstones"], err = s.Tombstones(ctx)
	must(t, err)
	out["failing"], err = s.FailingEndpoints(ctx)
	must(t, err)
	b, err := json.MarshalIndent(out, "", " ")
	must(t, err)
	return string(b)
}

func deliveryState(t *testing.T, s bridge.Store, out map[string]any) {
	ctx := context.Background()
	ds, err := s.Deliveries(ctx, bridge.DeliveryFilter{})
	must(t, err)
	// Newest first, says the contract; ties (one event's deliveries to several endpoints) come
	// in an order of the store's own (SQLite's: the order it inserted them), so they are put in
	// the order of their endpoints here.
	slices.SortFunc(ds, func(a, b bridge.Delivery) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.EventID, a.EventID), strings.Compare(a.Endpoint, b.Endpoint))
	})
	out["deliveries"] = ds
	attempts := map[string][]bridge.Attempt{}
	for _, d := range ds {
		_, attempts[d.ID], err = s.Delivery(ctx, d.ID)
		must(t, err)
	}
	out["attempts"] = attempts
	out["disabled"], err = s.DisabledEndpoints(ctx)
	must(t, err)
}

func exportState(t *testing.T, s bridge.Store, out map[string]any) {
	ctx := context.Background()
	var err error
	out["runs"], err = s.Runs(ctx, "", 100)
	must(t, err)
	cp, ok, err := s.Checkpoint(ctx, "nightly")
	must(t, err)
	out["checkpoint"] = []any{cp, ok}
	out["exported"], err = s.Exported(ctx, "nightly", []string{"tr-0", "tr-1", "tr-2"})
	must(t, err)
	tick, ok, err := s.LastTick(ctx, "nightly")
	must(t, err)
	out["last tick"] = []any{tick, ok}
	sources := map[string]string{}
	for _, id := range []string{"tr-0", "tr-2", "tr-9"} {
		sources[id], err = s.SourceOf(ctx, id)
		must(t, err)
	}
	out["sources"] = sources
}

// sameState fails the test when the two states differ, showing the first differing line.
func sameState(t *testing.T, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			t.Fatalf("state of the destination differs from the source's at line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	t.Fatalf("state of the destination has %d lines, the source's %d", len(g), len(w))
}
