package relay

import (
	"context"
	"fmt"

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
		ref := bridge.EventRef{EventID: ev.ID, Type: ev.Type, JobID: ev.JobID, TranscriptionID: ev.TranscriptionID}
		reqs = append(reqs, fanOutReq{item: bridge.FanOutItem{Ref: ref, Endpoints: e.r.targets(ev.Type)}, done: make(chan error, 1)})
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
