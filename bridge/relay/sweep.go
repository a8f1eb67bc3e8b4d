package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/transcript-bridge/bridge/bridge"
)

// pendingEvents is what the sweep needs of the store beyond deliveries (bridge.JobStore's
// PendingEvents); a Store without it is not swept.
type pendingEvents interface {
	PendingEvents(ctx context.Context, limit int) ([]bridge.Event, error)
}

// sweepLimit is how many outbox events one sweep looks at.
const sweepLimit = 500

// sweep fans out, straight from the outbox, the events older than SweepAfter that the bus has
// not brought: their message was lost, or moved to the poison queue by a handler's panic.
// Without it such an event would have no deliveries and, since a job's deliveries wait for its
// earlier events, would hold the job's later events too. After a long stop the bus may still
// hold such old events: fanning them out here first is harmless (a fan-out is idempotent, the
// bus's copy then adds nothing). A sweep waits for nothing: the fan-outs go to the committer's
// next batch. It returns how many events it handed over; it fails when the store cannot be read.
func (e *engine) sweep(ctx context.Context) (int, error) {
	store, ok := e.r.Store.(pendingEvents)
	if !ok {
		return 0, nil
	}
	evs, err := store.PendingEvents(ctx, sweepLimit)
	if err != nil {
		return 0, fmt.Errorf("relay: sweep the outbox: %w", err)
	}
	cutoff := e.r.now().Add(-e.r.SweepAfter)
	var reqs []fanOutReq
	for _, ev := range evs { // oldest first
		if ev.CreatedAt.After(cutoff) {
			break
		}
		ref := bridge.EventRef{EventID: ev.ID, Type: ev.Type, JobID: ev.JobID, TranscriptionID: ev.TranscriptionID, Endpoint: aboutEndpoint(ev)}
		reqs = append(reqs, fanOutReq{item: bridge.FanOutItem{Ref: ref, Endpoints: e.r.targets(ref)}, done: make(chan error, 1)})
	}
	if len(reqs) == 0 {
		return 0, nil
	}
	e.r.Log.Warn("events the bus has not brought for a while are fanned out from the outbox", "count", len(reqs),
		"oldest_event_id", reqs[0].item.Ref.EventID, "older_than", e.r.SweepAfter)
	e.mu.Lock()
	e.gather()
	e.fanOuts = append(e.fanOuts, reqs...)
	e.mu.Unlock()
	e.signal()
	return len(reqs), nil
}

// aboutEndpoint returns the endpoint an endpoint.* event read from the outbox is about: its
// data's "endpoint" (the outbox keeps Event.Endpoint there alone); "" for other events.
func aboutEndpoint(ev bridge.Event) string {
	if !strings.HasPrefix(ev.Type, "endpoint.") {
		return ""
	}
	var d struct {
		Endpoint string `json:"endpoint"`
	}
	_ = json.Unmarshal(ev.Data, &d) // malformed data names no endpoint: every subscriber hears it
	return d.Endpoint
}
