package main

import (
	"context"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// checkStoreSettled checks the store of a chaos run: one job per recording, each done or saying
// why not, none held, failed or skipped. It returns the upload attempts made and the delivery
// attempts recorded.
func checkStoreSettled(t *testing.T, store bridge.Store, files int) (uploads, attempts int) {
	t.Helper()
	ctx := context.Background()
	jobs, err := store.Jobs(ctx, bridge.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != files {
		t.Errorf("%d jobs for %d recordings", len(jobs), files)
	}
	items := map[string]int{}
	for _, j := range jobs {
		uploads += j.Attempts
		items[j.ItemID]++
		if j.State != bridge.StateDone && j.Reason == "" {
			t.Errorf("job %s (%s) is %s without a reason", j.ID, j.ItemID, j.State)
		}
		if j.State == bridge.StateHeld || j.State == bridge.StateFailed || j.State == bridge.StateSkipped {
			t.Errorf("job %s (%s) ended %s: %s", j.ID, j.ItemID, j.State, j.Reason)
		}
	}
	for item, n := range items {
		if n != 1 {
			t.Errorf("item %s has %d jobs, want 1", item, n)
		}
	}
	ds, err := store.Deliveries(ctx, bridge.DeliveryFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		attempts += d.Attempts
	}
	return uploads, attempts
}
