package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// checkBeforeCopy reads the SQLite store the bridge left and checks that it is caught mid-way:
// once write has run on the store, some jobs done, one uploading, some queued or processing,
// some deliveries delivered and some pending, and some events not handed on to the relay. It
// returns the instance id.
func checkBeforeCopy(t *testing.T, path string, write func(s bridge.Store) error) string {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := write(s); err != nil {
		t.Fatal(err)
	}
	counts, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := s.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[bridge.DeliveryStatus]int{}
	for _, d := range ds {
		status[d.Status]++
	}
	pending, err := s.PendingEvents(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before the copy: jobs %v; deliveries %v; %d events not handed on to the relay", counts, status, len(pending))
	inFlight := counts[bridge.StateQueued] + counts[bridge.StateProcessing] + counts[bridge.StateTranscribed]
	if counts[bridge.StateDone] != 2 || counts[bridge.StateUploading] != 1 || inFlight == 0 {
		t.Errorf("jobs before the copy: %v, want 2 done, 1 uploading and some queued or processing", counts)
	}
	if status[bridge.DeliveryDelivered] != 6 || status[bridge.DeliveryPending] == 0 || len(pending) == 0 {
		t.Errorf("deliveries before the copy: %v and %d events not handed on, want 6 delivered, some pending and some events", status, len(pending))
	}
	id, err := s.InstanceID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// checkAfterCopy checks the PostgreSQL store and the receiver once the bridge went on there:
// the instance id kept, every job done once, every delivery delivered, the endpoint disabled on
// SQLite disabled here; every event accepted once under one webhook-id, deliveries refused
// before the copy accepted after it under the same one; nothing delivered before the copy sent
// again.
func checkAfterCopy(t *testing.T, s bridge.Store, instance string, rx *copyReceiver) {
	t.Helper()
	ctx := context.Background()
	if id, err := s.InstanceID(ctx); err != nil || id != instance {
		t.Errorf("InstanceID on PostgreSQL = %q, %v, want %q (SQLite's)", id, err, instance)
	}
	jobs, err := s.Jobs(ctx, bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		h, err := s.History(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, c := range h {
			if c.To == bridge.StateDone {
				done++
			}
		}
		if j.State != bridge.StateDone || done != 1 {
			t.Errorf("job %s (%s): %s, done %d times, want done once", j.ID, j.Name, j.State, done)
		}
	}
	ds, err := s.Deliveries(ctx, bridge.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Status != bridge.DeliveryDelivered {
			t.Errorf("delivery %s (%s of job %s): %s, want delivered", d.ID, d.Type, d.JobID, d.Status)
		}
	}
	if off, err := s.DisabledEndpoints(ctx); err != nil || off["legacy"] == "" {
		t.Errorf("DisabledEndpoints on PostgreSQL = %v, %v, want legacy", off, err)
	}
	rx.mu.Lock()
	defer rx.mu.Unlock()
	// 5 jobs × 3 events, and endpoint.disabled.
	if len(jobs) != 5 || len(ds) != 16 || len(rx.ids) != 16 {
		t.Errorf("%d jobs, %d deliveries, %d events received, want 5, 16 and 16", len(jobs), len(ds), len(rx.ids))
	}
	resumed := 0
	for id := range rx.refused {
		if rx.after[id] && rx.accepted[id] == 1 {
			resumed++
		}
	}
	if resumed == 0 {
		t.Errorf("no delivery refused before the copy was accepted after it (under the same webhook-id)")
	}
	for key, ids := range rx.ids {
		if len(ids) != 1 {
			t.Errorf("%s arrived with %d webhook-ids, want one", key, len(ids))
		}
	}
	for id, n := range rx.accepted {
		if n != 1 {
			t.Errorf("webhook-id %s accepted %d times, want once", id, n)
		}
		if rx.before[id] && rx.after[id] {
			t.Errorf("webhook-id %s, delivered before the copy, was sent again after it", id)
		}
	}
	if rx.bad > 0 || len(rx.before) != 6 {
		t.Errorf("%d bad signatures, %d deliveries before the copy, want 0 and 6", rx.bad, len(rx.before))
	}
}

// checkUploadedOnce checks upstream that each file is one transcription, completed.
func checkUploadedOnce(t *testing.T, baseURL string, files []string) {
	t.Helper()
	c, err := api.New(api.Config{BaseURL: baseURL, Key: sandboxtest.OwnerKey})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for it, err := range c.All(context.Background(), api.ListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if it.ExternalID != nil && strings.HasPrefix(*it.ExternalID, "localdir:inbox:"+f+"@") {
				found[f] = append(found[f], it.Status)
			}
		}
	}
	for _, f := range files {
		if got := found[f]; len(got) != 1 || got[0] != api.StatusCompleted {
			t.Errorf("%s upstream: %v, want exactly one completed transcription", f, got)
		}
	}
	if t.Failed() {
		t.Logf("upstream: %s", fmt.Sprint(found))
	}
}
